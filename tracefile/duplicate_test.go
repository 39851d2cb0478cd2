package tracefile

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
)

// levelsOf gives the statistics that say the file keeps all of bins.
func levelsOf(bins []Bin) []LevelStats {
	var out []LevelStats
	for _, b := range bins {
		i := 0
		for i < len(out) && (out[i].Depth != b.Depth || out[i].Class != b.Class) {
			i++
		}
		if i == len(out) {
			out = append(out, LevelStats{Depth: b.Depth, Class: b.Class})
		}
		out[i].Written += uint64(b.Records)
	}
	return out
}

// TestDuplicatedBinIsAFormatError checks that a BIN section written twice,
// or one whose records go back in time, is refused naming its offset,
// whether the reader is asked for counts (Read) or for events.
func TestDuplicatedBinIsAFormatError(t *testing.T) {
	tr, _ := sample(t)
	tr.Locations = tr.Locations[:1]
	bin := func(rs ...encode.Record) Bin {
		e := encode.NewEncoder(encode.All)
		b := make([]byte, 1024)
		n := e.StartBin(b, rs[0].Time, 0)
		for _, r := range rs {
			n += e.Put(b[n:], r)
		}
		return Bin{Location: 0, Depth: 1, Class: ClassRegion, Records: uint32(len(rs)), Data: b[:n]}
	}
	first := bin(encode.Record{Kind: encode.KindEnter, Time: 100, Region: 1}, encode.Record{Kind: encode.KindLeave, Time: 200})
	second := bin(encode.Record{Kind: encode.KindEnter, Time: 300, Region: 1}, encode.Record{Kind: encode.KindLeave, Time: 400})
	back := bin(encode.Record{Kind: encode.KindEnter, Time: 150, Region: 1}, encode.Record{Kind: encode.KindLeave, Time: 160})

	read := func(name string, stats, bins []Bin) (*File, error) {
		t.Helper()
		tr.Locations[0].Levels = levelsOf(stats)
		data := encodeTrace(t, tr, bins)
		return Read(bytes.NewReader(data), int64(len(data)))
	}
	events := func(f *File) error {
		_, err := readAll(t, f, 0)
		return err
	}
	if f, err := read("good", []Bin{first, second}, []Bin{first, second}); err != nil || events(f) != nil {
		t.Fatalf("a good trace: %v, %v", err, events(f))
	}
	// The statistics say 4 records; a copy of the first bin makes 6.
	_, err := read("duplicated", []Bin{first, second}, []Bin{first, second, first})
	checkFormatError(t, "duplicated", err, "duplicated bin")
	// Counts that agree, times that go back: a bin of another run.
	f, err := read("overlapping", []Bin{first, back}, []Bin{first, back})
	if err != nil {
		t.Fatalf("overlapping: Read: %v (the counts agree)", err)
	}
	checkFormatError(t, "overlapping", events(f), "does not come after")
	// The copy at the same place of the chain: same keys again.
	f, err = read("repeated", []Bin{first, first}, []Bin{first, first})
	if err != nil {
		t.Fatalf("repeated: Read: %v (the counts agree)", err)
	}
	checkFormatError(t, "repeated", events(f), "does not come after")
}

func checkFormatError(t *testing.T, name string, err error, want string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset <= 0 || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v; want a FormatError with an offset saying %q", name, err, want)
	}
}
