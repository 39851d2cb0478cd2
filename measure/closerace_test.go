package measure

import (
	"context"
	"flag"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var closeRaceRuns = flag.Int("closerace-runs", 0, "runs of TestCloseWhileProbing (0: 20, or 3 with -race or -short)")

// closeRaceRun starts a measurement, has goroutines probe into it, half
// through StartRegion and End, half through Locations of their own, closes
// it after wait while they still probe, and checks that nothing crashed, that
// the probes after Close were counted, and that the accounting holds:
// Recorded = Kept + FilteredName + FilteredDuration + Removed.
func closeRaceRun(t *testing.T, goroutines int, wait time.Duration) {
	// Unthrottled: a throttled region's probe counts its visit and
	// nothing else, and these regions are short enough to be switched off
	// after 1,024 visits, so probes after Close would go uncounted by
	// design rather than by a race.
	m := startTest(t, Config{BufferSize: 256 << 10, BinSize: 1 << 10, NoThrottle: true})
	ctx := NewContext(context.Background(), m)
	outer, inner := NewRegion("outer"), NewRegion("inner")
	ro, ri := m.RegionOf(outer), m.RegionOf(inner)
	var stop, closed atomic.Bool // closed: Close returned
	var late atomic.Uint64       // probes that began after Close returned
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		if g%2 == 0 {
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					closed := closed.Load()
					sp := StartRegion(ctx, outer)
					StartRegion(ctx, inner).End()
					sp.End()
					if closed {
						late.Add(2) // two StartRegions that find no lane; the Ends of their empty Spans are no probes
					}
					if i%16 == 0 {
						runtime.Gosched() // see closeRaceRun's doc
					}
				}
			}()
			continue
		}
		go func() {
			defer wg.Done()
			loc := m.Location("worker")
			for i := 0; !stop.Load(); i++ {
				closed := closed.Load()
				loc.Enter(ro)
				loc.Enter(ri)
				loc.Leave(ri)
				loc.Leave(ro)
				if closed {
					late.Add(4)
				}
				if i%16 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	time.Sleep(wait)
	t0 := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	closeTime := time.Since(t0)
	closed.Store(true)
	time.Sleep(time.Millisecond) // probes after Close
	stop.Store(true)
	t1 := time.Now()
	wg.Wait()
	if testing.Verbose() {
		t.Logf("Close %v, the goroutines' end %v", closeTime, time.Since(t1))
	}
	st := m.Stats()
	if sum := st.Kept + st.FilteredName + st.FilteredDuration + st.Dropped(); st.Recorded != sum {
		t.Fatalf("recorded %d != kept %d + filtered %d+%d + removed %d = %d", st.Recorded, st.Kept,
			st.FilteredName, st.FilteredDuration, st.Dropped(), sum)
	}
	if st.SharedLane != 0 {
		t.Fatalf("%d probes counted as sharing a lane: none shares one", st.SharedLane)
	}
	if st.Usage.AfterClose < late.Load() {
		t.Fatalf("%d probes after Close counted, at least %d ran", st.Usage.AfterClose, late.Load())
	}
}

// TestCloseWhileProbing closes measurements while 1,000 goroutines probe
// into them. -closerace-runs=1000 is the long version.
func TestCloseWhileProbing(t *testing.T) {
	runs := *closeRaceRuns
	if runs == 0 {
		runs = 20
		if testing.Short() || raceEnabled {
			runs = 3
		}
	}
	for i := range runs {
		closeRaceRun(t, 1000, time.Duration(1+i%5)*time.Millisecond)
	}
}

// A goroutine whose `defer wg.Done()` runs before its region's End, as
// in a function hmbtrace-go instrumented (its region's defer is the
// function's first, so it runs last): the main goroutine's Wait returns,
// and Close runs while the End is still to come. Close waits for the
// lanes to go idle, so every event is kept, and under -race nothing
// races.
func TestCloseWaitsForLastEnd(t *testing.T) {
	m := startTest(t, Config{BufferSize: 16 << 20, BinSize: 4 << 10, NoThrottle: true})
	ctx := NewContext(context.Background(), m)
	task, step := NewRegion("task"), NewRegion("step")
	const goroutines, steps = 200, 10
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer StartRegion(ctx, task).End()
			defer wg.Done()
			for range steps {
				StartRegion(ctx, step).End()
			}
			runtime.Gosched() // widen the window between Done and End
		}()
	}
	wg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if st.Kept != st.Recorded || st.Dropped() != 0 || st.Usage != (UsageErrors{}) {
		t.Errorf("recorded %d, kept %d, removed %d, usage %+v; want all kept, no usage error", st.Recorded, st.Kept, st.Dropped(), st.Usage)
	}
	// Every region's every visit is in the trace's profiles, none left
	// open at Close, no lane interrupted.
	f := openTrace(t, m)
	visits := map[uint32]uint64{}
	for _, l := range f.Locations {
		if l.Interrupted {
			t.Errorf("location %q interrupted", l.Name)
		}
		for _, p := range l.Profile {
			visits[p.Region] += p.Visits
		}
	}
	if v, w := visits[uint32(m.RegionOf(task))], uint64(goroutines); v != w {
		t.Errorf("task: %d visits, want %d", v, w)
	}
	if v, w := visits[uint32(m.RegionOf(step))], uint64(goroutines*steps); v != w {
		t.Errorf("step: %d visits, want %d", v, w)
	}
}
