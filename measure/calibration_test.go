package measure

import (
	"math"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/clock"
)

// Start calibrates the clock briefly; the rate in the trace is measured
// from Start to Close, over at least fullCalibration even for a run that
// closes at once, and agrees with a long calibration.
func TestRateMeasuredOverTheRun(t *testing.T) {
	if clock.Best() == clock.SourceMonotonic {
		t.Skip("no invariant TSC: the monotonic clock's rate is 1e9 by definition")
	}
	if got := startCalibration(Config{}); got != quickCalibration {
		t.Errorf("startCalibration = %v, want %v", got, quickCalibration)
	}
	if got := startCalibration(Config{Survive: true}); got != fullCalibration {
		t.Errorf("startCalibration with Survive = %v, want %v (its mapping keeps the rate of Start)", got, fullCalibration)
	}
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096, Clock: "tsc"})
	before := m.ticksPerSecond()
	if before != m.startTPS {
		t.Errorf("during the run ticksPerSecond = %v, want Start's %v", before, m.startTPS)
	}
	loc := m.Location("main")
	r := m.Region("r")
	loc.Enter(r)
	loc.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	h := f.Header
	run := math.Float64frombits(m.runTPS.Load())
	if run <= 0 || h.TicksPerSecond != run {
		t.Fatalf("trace's rate %v, want the run's %v", h.TicksPerSecond, run)
	}
	// The run closed at once: without Close waiting out the full
	// calibration its rate would come from a few microseconds.
	ref := clock.Calibrate(20 * time.Millisecond)
	if d := math.Abs(run-ref) / ref; d > 1e-4 {
		t.Errorf("rate over a short run %.0f, a 20 ms calibration %.0f: %.2g apart", run, ref, d)
	}
}

// A run shorter than fullCalibration has its rate measured over
// fullCalibration from Start all the same: Close waits out the rest.
func TestShortRunWaitsOutTheCalibration(t *testing.T) {
	if clock.Best() == clock.SourceMonotonic {
		t.Skip("no invariant TSC: the monotonic clock's rate is 1e9 by definition")
	}
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096, Clock: "tsc"})
	defer m.Close()
	m.end = m.start // a run that ended as it started
	if tps := m.rateUntil(m.start); tps <= 0 {
		t.Fatalf("rate %v", tps)
	}
	if waited := time.Duration(clock.ReadPair().Nanos - m.start.Nanos); waited < fullCalibration {
		t.Errorf("the rate of a run of 0 s was measured over %v, want at least %v", waited, fullCalibration)
	}
}
