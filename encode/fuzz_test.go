package encode

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the decoder under every technique set:
// it must never panic, times must never decrease, and whatever decodes must
// survive a re-encode and decode unchanged.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.bin, byte(s.tech))
	}
	f.Fuzz(func(t *testing.T, b []byte, techByte byte) {
		tech := Techniques(techByte) & All
		d := NewDecoder(tech)
		if d.Reset(b) != nil {
			return
		}
		open := d.OpenRegion()
		var recs []Record
		var r Record
		last := d.BinTime()
		for d.Next(&r) {
			if r.Time < last {
				t.Fatalf("time went backwards: %d after %d", r.Time, last)
			}
			last = r.Time
			if r.Values != nil {
				r.Values = append([]uint64(nil), r.Values...)
			}
			recs = append(recs, r)
			if len(recs) > 1<<16 {
				t.Fatal("more records than bytes")
			}
		}
		if d.Err() != nil {
			return
		}
		// Re-encode from the bin's own start time: records keep their times.
		e := NewEncoder(tech)
		buf := make([]byte, 0, len(b)*2+64)
		scratch := make([]byte, MaxMetricSize+MaxBinHeaderSize)
		n := e.StartBin(scratch, d.BinTime(), open)
		buf = append(buf, scratch[:n]...)
		for _, r := range recs {
			n := e.Put(scratch, r)
			buf = append(buf, scratch[:n]...)
		}
		d2 := NewDecoder(tech)
		if err := d2.Reset(buf); err != nil {
			t.Fatalf("re-encoded bin does not decode: %v", err)
		}
		var again []Record
		for d2.Next(&r) {
			if r.Values != nil {
				r.Values = append([]uint64(nil), r.Values...)
			}
			again = append(again, r)
		}
		if err := d2.Err(); err != nil {
			t.Fatalf("re-encoded bin: %v", err)
		}
		if !reflect.DeepEqual(normalize(again), normalize(recs)) {
			t.Fatalf("re-encode changed records:\n got %+v\nwant %+v", again, recs)
		}
	})
}

type fuzzSeed struct {
	bin  []byte
	tech Techniques
}

func fuzzSeeds(t testing.TB) []fuzzSeed {
	rng := rand.New(rand.NewPCG(7, 8))
	var seeds []fuzzSeed
	// The seeds made before Predict use the sets of then, which now lack
	// it: they stay as they were, bins of the first token table.
	const v1 = All &^ Predict
	for _, tech := range []Techniques{v1, 0, v1 &^ Tokens, v1 &^ LEB128, v1 &^ Delta, v1 &^ SplitTiming} {
		recs := randomRecords(rng, 12)
		seeds = append(seeds, fuzzSeed{encodeBin(t, tech, 3, recs), tech})
	}
	// Then streams with the records of communicators and requests, after
	// the first version's seeds so that those stay as they were.
	for _, tech := range []Techniques{v1, 0, v1 &^ LEB128} {
		recs := randomMPIRecords(rng, 24)
		seeds = append(seeds, fuzzSeed{encodeBin(t, tech, 3, recs), tech})
	}
	// Then the one-sided communication records (rma.go).
	for _, tech := range []Techniques{v1, 0, v1 &^ LEB128} {
		recs := randomRmaRecords(rng, 24)
		seeds = append(seeds, fuzzSeed{encodeBin(t, tech, 3, recs), tech})
	}
	// Then task records among enters and leaves, after the others.
	for _, tech := range []Techniques{v1, 0} {
		recs := randomTaskRecords(rng, 24)
		seeds = append(seeds, fuzzSeed{encodeBin(t, tech, 3, recs), tech})
	}
	// Then the predicted table (predict.go): loops that hit every slot,
	// with and without split timing, and a mixed stream.
	for i, tech := range []Techniques{All, All, All &^ SplitTiming, All} {
		recs := randomLoopStream(rng, 40)
		if i == 3 {
			recs = randomMPIRecords(rng, 40)
		}
		seeds = append(seeds, fuzzSeed{encodeBin(t, tech, uint32(i), recs), tech})
	}
	// Then marks, region parameters and channel messages (mark.go).
	for _, tech := range []Techniques{All, 0, All &^ LEB128} {
		recs := randomAnnotationRecords(rng, 24)
		seeds = append(seeds, fuzzSeed{encodeBin(t, tech, 3, recs), tech})
	}
	return seeds
}

// TestWriteFuzzCorpus regenerates testdata/fuzz/FuzzDecode when
// HMB_WRITE_FUZZ_CORPUS=1; the committed files are what CI replays.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("HMB_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set HMB_WRITE_FUZZ_CORPUS=1 to regenerate the committed seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range fuzzSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbyte(%d)\n", s.bin, byte(s.tech))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
