package report

import (
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Calls of an interrupted location that were never left last to the end of
// the run and are drawn as open; the location's notes say why.
func TestOpenCallsOfInterruptedLocation(t *testing.T) {
	// What the probes cannot be made to record: a trace written for a
	// signal, with calls never left.
	b := tracetest.NewBuilder("records", "", 0, time.Unix(1700000000, 0), "main", "compute")
	b.Trace.Header.EndTicks = 50000
	l := b.Location("worker")
	l.Enter(1000, 1)
	l.Enter(1200, 2)
	l.Leave(9000)
	l.Enter(9500, 2)
	b.Trace.Locations[0].Interrupted = true
	f := b.Write(t, t.TempDir())
	d, rows := parsePage(t, writePage(t, []*tracefile.File{f}, Options{}))
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
