package cshim

import (
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The trace the collective end's passes read from memory converts ticks
// at the rate the rank's file is written with, so that an in-situ
// duration is the post-mortem one to the ns. (A rate of its own, taken
// against the wall clock, put them parts in 10^6 apart.)
func TestRankTraceRateIsTheFiles(t *testing.T) {
	if clock.Best() == clock.SourceMonotonic {
		t.Skip("no invariant TSC: the monotonic clock's rate is 1e9 by definition")
	}
	resetTrace := func() {
		passState.mu.Lock()
		passState.trace, passState.traceOK, passState.traceErr = nil, false, nil
		passState.mu.Unlock()
	}
	resetTrace()
	t.Cleanup(resetTrace)
	rt := startRuntime(t)
	m := rt.Measurement()
	r, l := m.Region("r"), m.Location("main")
	l.Enter(r)
	time.Sleep(30 * time.Millisecond) // a run long enough for a rate of its own
	l.Leave(r)
	f, err := rt.rankTrace()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the run goes on after the collective end
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	w := tracetest.Open(t, m.Path())
	if a, b := f.Header.TicksPerSecond, w.Header.TicksPerSecond; a != b {
		t.Errorf("rate of the passes' trace %v, of the file %v (%.3g apart): want the file's", a, b, a/b-1)
	}
	if a, b := regionTime(t, f, "main", "r"), regionTime(t, w, "main", "r"); a != b || a < int64(30*time.Millisecond) {
		t.Errorf("r took %d ns in the passes' trace, %d ns in the file", a, b)
	}
}

// regionTime returns how long the first visit of region on location loc
// of f took, in ns of f's clock.
func regionTime(t *testing.T, f *tracefile.File, loc, region string) int64 {
	t.Helper()
	for _, l := range f.Locations {
		if l.Name != loc {
			continue
		}
		var e tracefile.Event
		var enter int64 = -1
		it := f.Events(l.ID)
		defer it.Close()
		for it.Next(&e) {
			if f.RegionName(e.Region) != region {
				continue
			}
			switch {
			case e.Kind == encode.KindEnter && enter < 0:
				enter = f.Nanos(e.Time)
			case e.Kind == encode.KindLeave && enter >= 0:
				return f.Nanos(e.Time) - enter
			}
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
	}
	t.Fatalf("no visit of %s on %s", region, loc)
	return 0
}
