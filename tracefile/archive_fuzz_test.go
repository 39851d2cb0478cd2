package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sampleArchive returns the bytes of an archive of three ranks: rank 0 in
// place (the sample trace, without its bins when eventsNone), rank 1
// empty, rank 2 moved; with results.
func sampleArchive(t testing.TB, eventsNone bool) []byte {
	tr, bins := sample(t)
	if eventsNone {
		bins = nil
	}
	tr.Header.Rank = 0
	data := encodeTrace(t, tr, bins)
	dir := t.TempDir()
	path := ArchiveName(dir, "s", 0, 1)
	plan := ArchivePlan{Name: "s", World: 3, Groups: 1, Ranks: []int{0, 1, 2}, EventsNone: eventsNone,
		Capacity: []int64{SlotCapacity(0), 4096, 4096}, Results: AppendResult(nil, 1, []byte("results"))}
	offs, err := CreateArchive(path, plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSlot(path, offs[0], plan.Capacity[0], 0, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		t.Fatal(err)
	}
	if err := MarkSlotMoved(path, offs[2], 2, "s.2.pid9.hmb"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The seeds need not hold the slot's margin, all zeros.
	return b[:offs[0]+slotHeaderSize+int64(len(data))]
}

// sealIndex makes the index checksum of archive b right again, so that
// the fuzzer reaches the index's entries and the slots.
func sealIndex(b []byte) {
	if len(b) < preludeSize {
		return
	}
	off, n := binary.LittleEndian.Uint64(b[32:]), binary.LittleEndian.Uint64(b[40:])
	if n < 4 || off > uint64(len(b)) || n > uint64(len(b))-off {
		return
	}
	ix := b[off : off+n]
	binary.LittleEndian.PutUint32(ix[n-4:], crc32c(ix[:n-4]))
}

// FuzzArchive reads archives: an error, never a panic, and every error of
// the archive's structure a FormatError naming the file. seal makes the
// index checksum right first.
func FuzzArchive(f *testing.F) {
	f.Add(sampleArchive(f, false), true)
	f.Add(sampleArchive(f, true), false)
	f.Add([]byte(archiveMagic), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, seal bool) {
		if seal {
			sealIndex(data)
		}
		path := filepath.Join(dir, "f.hmbrun")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := OpenArchive(path)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("error %v is not a FormatError of %s", err, path)
			}
			return
		}
		defer a.Close()
		a.Results()
		for i := range a.Slots {
			tf, err := a.OpenRank(i)
			if err != nil {
				continue
			}
			for _, l := range tf.Locations {
				it := tf.Events(l.ID)
				var e Event
				for n := 0; it.Next(&e); n++ {
					if n > len(data)*2 {
						t.Fatal("more events than the archive can hold")
					}
				}
			}
			tf.Close()
		}
	})
}

// TestWriteArchiveFuzzCorpus regenerates FuzzArchive's committed seed
// corpus when HMB_WRITE_FUZZ_CORPUS=1.
func TestWriteArchiveFuzzCorpus(t *testing.T) {
	if os.Getenv("HMB_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set HMB_WRITE_FUZZ_CORPUS=1 to regenerate the committed seed corpus")
	}
	full, none := sampleArchive(t, false), sampleArchive(t, true)
	seeds := []struct {
		b    []byte
		seal bool
	}{{full, false}, {none, false}, {full[:len(full)/2], false}, {full[:preludeSize+10], true}, {full[:100], true}}
	dir := filepath.Join("testdata", "fuzz", "FuzzArchive")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbool(%v)\n", s.b, s.seal)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
