package measure

import (
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/clock"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The trace read back from memory while the measurement records holds
// every event so far, those of the current bins too, and its statistics
// agree; the measurement records on as before.
func TestMemoryTraceHoldsCurrentBins(t *testing.T) {
	m, err := Start(Config{Output: t.TempDir(), Name: "mem", IgnoreEnv: true, BinSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	outer, inner := m.Region("outer"), m.Region("inner")
	l := m.Location("main")
	l.Enter(outer)
	for i := 0; i < 1000; i++ { // more than one bin at depth 1
		l.Enter(inner)
		l.Leave(inner)
	}
	f, err := m.memoryTrace()
	if err != nil {
		t.Fatal(err)
	}
	var e tracefile.Event
	n := 0
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 2001 {
		t.Errorf("%d events in memory, want 2001 (outer still open)", n)
	}
	l.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// The trace read back from memory at the collective end converts ticks at
// the rate the file written later has: the in-situ analyses and the
// post-mortem ones must see the same nanoseconds. Before, memory had the
// rate of Start's short calibration and the file the run's.
func TestMemoryTraceRateIsTheFiles(t *testing.T) {
	if clock.Best() == clock.SourceMonotonic {
		t.Skip("no invariant TSC: the monotonic clock's rate is 1e9 by definition")
	}
	dir := t.TempDir()
	m, err := Start(Config{Output: dir, Name: "rate", IgnoreEnv: true, BinSize: 4096, Clock: "tsc"})
	if err != nil {
		t.Fatal(err)
	}
	r, l := m.Region("r"), m.Location("main")
	l.Enter(r)
	time.Sleep(3 * fullCalibration) // past Start's calibration
	l.Leave(r)
	f, err := m.memoryTrace()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(fullCalibration) // the run goes on: its rate would be taken again
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	w, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if a, b := f.Header.TicksPerSecond, w.Header.TicksPerSecond; a != b || a == m.startTPS {
		t.Errorf("rate in memory %v, in the file %v (Start's %v): want the file's, taken over the run", a, b, m.startTPS)
	}
}
