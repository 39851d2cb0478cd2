package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// writeRecords writes a trace of one location from records, one bin per
// level, for what the probes cannot be made to record: a trace written for a
// signal, with calls never left. Times are nanoseconds.
func writeRecords(t *testing.T, tr *tracefile.Trace, levels map[int][]encode.Record) *tracefile.File {
	t.Helper()
	loc := &tr.Locations[0]
	for d := 1; d <= len(levels); d++ {
		n := uint64(len(levels[d]))
		loc.Recorded += n
		loc.Levels = append(loc.Levels, tracefile.LevelStats{Depth: d, Class: tracefile.ClassRegion, Written: n})
	}
	path := filepath.Join(t.TempDir(), "records.0.hmb")
	err := tracefile.WriteFile(path, tr, func(put func(tracefile.Bin) error) error {
		for d := 1; d <= len(levels); d++ {
			recs := levels[d]
			e := encode.NewEncoder(encode.All)
			b := make([]byte, encode.MaxBinHeaderSize+len(recs)*encode.MaxEnterLeaveSize)
			n := e.StartBin(b, recs[0].Time, 0)
			for _, r := range recs {
				if r.Kind == encode.KindEnter {
					n += e.Enter(b[n:], r.Time, r.Seq, r.Region)
				} else {
					n += e.Leave(b[n:], r.Time, r.Seq)
				}
			}
			if err := put(tracefile.Bin{Location: loc.ID, Depth: d, Class: tracefile.ClassRegion, Records: uint32(len(recs)), Data: b[:n]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return open(t, path)[0]
}

// Calls of an interrupted location that were never left last to the end of
// the run and are drawn as open; the location's notes say why.
func TestOpenCallsOfInterruptedLocation(t *testing.T) {
	tr := &tracefile.Trace{
		Header: tracefile.Header{Name: "records", StartWall: time.Unix(1700000000, 0), Clock: "monotonic", TicksPerSecond: 1e9,
			Techniques: encode.All, Policy: "depth", EndTicks: 50000},
		Regions:   []tracefile.Region{{ID: 1, Name: "main"}, {ID: 2, Name: "compute"}},
		Locations: []tracefile.Location{{ID: 0, Name: "worker", Interrupted: true}},
	}
	f := writeRecords(t, tr, map[int][]encode.Record{
		1: {{Kind: encode.KindEnter, Time: 1000, Region: 1}},
		2: {{Kind: encode.KindEnter, Time: 1200, Region: 2}, {Kind: encode.KindLeave, Time: 9000}, {Kind: encode.KindEnter, Time: 9500, Region: 2}},
	})
	d, rows := parsePage(t, render(t, []*tracefile.File{f}, Options{}))
	tl := &d.Timeline
	if tl.Span != 50000 || len(rows) != 2 || !tl.Locations[0].Interrupted || !strings.Contains(strings.Join(tl.Locations[0].Notes, " "), "interrupted") {
		t.Fatalf("span %d, %d rows, location %+v", tl.Span, len(rows), tl.Locations[0])
	}
	region := func(name string) int {
		for i, r := range d.Regions {
			if r == name {
				return i
			}
		}
		t.Fatalf("no region %s", name)
		return -1
	}
	want := [][]decodedCall{
		{{start: 1000, dur: 49000, region: region("main"), flags: flagOpen}},
		{{start: 1200, dur: 7800, region: region("compute")}, {start: 9500, dur: 40500, region: region("compute"), flags: flagOpen}},
	}
	for i, r := range rows {
		if len(r.exact) != len(want[i]) {
			t.Fatalf("depth %d: %+v, want %+v", i+1, r.exact, want[i])
		}
		for k := range want[i] {
			if r.exact[k] != want[i][k] {
				t.Errorf("depth %d call %d: %+v, want %+v", i+1, k, r.exact[k], want[i][k])
			}
		}
	}
}
