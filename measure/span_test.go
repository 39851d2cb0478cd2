package measure

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/goroutine"
)

// laneActive reports whether goroutine lane l is active for the calling
// goroutine (it has regions open on it).
func laneActive(l *Location) bool {
	return l.lane.own.Load() == goroutine.Key()|ownActive
}

// A region throttled while the goroutine's lane is active, nested or
// outermost, is counted at StartRegion (enterAt's test of its profile
// entry, not Enter's cache) and leaves the lane as an unthrottled region
// would: active under an open region, idle after the outermost.
func TestStartRegionThrottled(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{ThrottleCalls: 100, ThrottleTime: time.Hour})
	outerSite, tiny := NewRegion("outer"), NewRegion("tiny")
	ctx := context.Background()
	outer := StartRegion(ctx, outerSite)
	l := outer.Lane()
	for range 300 {
		func() { defer StartRegion(ctx, tiny).End() }()
		if !laneActive(l) {
			t.Fatal("a nested span's End made the lane idle under an open region")
		}
	}
	outer.End()
	if laneActive(l) {
		t.Fatal("the lane is active after its outermost region ended")
	}
	for range 300 { // outermost, throttled: each takes the idle lane back
		sp := StartRegion(ctx, tiny)
		if sp.Lane() != l || !laneActive(l) {
			t.Fatalf("outermost throttled span on lane %p (active %v), want %p active", sp.Lane(), laneActive(l), l)
		}
		sp.End()
		if laneActive(l) {
			t.Fatal("the lane is active after an outermost throttled region ended")
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	r := uint32(m.RegionOf(tiny))
	for _, loc := range f.Locations {
		for _, p := range loc.Profile {
			if p.Region != r {
				continue
			}
			// Throttled at the leave of the 100th visit.
			if !p.Throttled || p.Visits != 100 || p.VisitsAfter != 500 {
				t.Errorf("tiny on %s: %+v, want throttled after 100 visits with 500 after", loc.Name, p)
			}
		}
		if loc.Recorded != loc.Accounted() {
			t.Errorf("%s: recorded %d, accounted %d", loc.Name, loc.Recorded, loc.Accounted())
		}
	}
	if st := m.Stats(); st.Usage != (UsageErrors{}) {
		t.Errorf("usage errors %+v", st.Usage)
	}
}

// An outermost region that the filter excludes opens nothing on the lane,
// yet keeps it active until its End: a region nested in it is not the
// outermost, and its End leaves the lane active.
func TestStartRegionFilteredOutermost(t *testing.T) {
	needProbes(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "filter.txt")
	if err := os.WriteFile(path, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE skipped\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := startTest(t, Config{Output: dir, FilterFile: path})
	skipped, kept := NewRegion("skipped"), NewRegion("kept")
	outer := StartRegion(context.Background(), skipped)
	l := outer.Lane()
	if l == nil || !laneActive(l) || l.depth != 0 {
		t.Fatalf("filtered outermost span: lane %p, depth %d", l, l.depth)
	}
	inner := StartRegion(context.Background(), kept)
	if inner.Lane() != l || l.depth != 1 {
		t.Fatalf("nested span on lane %p at depth %d, want %p at 1", inner.Lane(), l.depth, l)
	}
	inner.End()
	if !laneActive(l) {
		t.Error("the End of a region nested in a filtered one made the lane idle")
	}
	outer.End()
	if laneActive(l) {
		t.Error("the lane is active after its outermost (filtered) region ended")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Kept != 2 || st.FilteredName != 2 || st.Usage != (UsageErrors{}) {
		t.Errorf("kept %d, filtered %d, usage %+v; want 2, 2, none", st.Kept, st.FilteredName, st.Usage)
	}
}

// When another goroutine's lane took the goroutine's table slot while it
// had a region open, its next StartRegion finds its own lane by a scan,
// active already: that region is nested, not the outermost, and its End
// leaves the lane active.
func TestStartRegionSlotTaken(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{})
	outerSite, innerSite := NewRegion("outer"), NewRegion("inner")
	ctx := context.Background()
	// Another goroutine's lane, active until the test ends.
	held, release, done := make(chan *Location), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sp := StartRegion(ctx, innerSite)
		held <- sp.Lane()
		<-release
		sp.End()
	}()
	other := <-held
	outer := StartRegion(ctx, outerSite)
	l := outer.Lane()
	if other == nil || l == nil || other == l {
		t.Fatalf("lanes %p and %p, want two", other, l)
	}
	slot := &m.lanes.table[laneSlot(goroutine.Key())]
	slot.Store(other)
	inner := StartRegion(ctx, innerSite)
	if inner.Lane() != l || slot.Load() != l {
		t.Fatalf("nested span on lane %p (slot %p), want %p", inner.Lane(), slot.Load(), l)
	}
	inner.End()
	if !laneActive(l) || l.depth != 1 {
		t.Errorf("after the nested End: active %v at depth %d, want active at 1", laneActive(l), l.depth)
	}
	outer.End()
	if laneActive(l) {
		t.Error("the lane is active after its outermost region ended")
	}
	close(release)
	<-done
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Kept != 6 || st.Usage != (UsageErrors{}) {
		t.Errorf("kept %d, usage %+v; want 6, none", st.Kept, st.Usage)
	}
}

// A Span marks its outermost region with spanOuter in the region it ends.
// A Leave of such a value on a Location (no region id reaches the bit) is
// a usage error like any unknown region, and leaves the Location held by
// its caller, never idle as a goroutine's lane whose outermost region
// ended.
func TestOuterBitOnLocation(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{})
	r := m.Region("work")
	l := m.Location("worker")
	l.Enter(r)
	l.Leave(r | spanOuter)
	if l.depth != 1 {
		t.Errorf("depth %d after a Leave of an unknown region, want 1", l.depth)
	}
	if own := l.lane.own.Load(); own != ownLocation {
		t.Errorf("the Location's owner word is %#x, want %#x (its caller's)", own, ownLocation)
	}
	l.Leave(r)
	l.Done()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if u := m.Stats().Usage; u.LeaveNotOpen+u.UnknownRegion != 1 {
		t.Errorf("usage errors %+v, want the Leave of region %#x counted once", u, r|spanOuter)
	}
}

// StartRegion's assembly (spanStart) records what Enter and Leave on a
// Location record: the same events, depths and regions, through each of
// its paths (a goroutine's first region, which takes a lane in Go; its
// outermost regions after that, which take the idle lane back; nested
// regions entered in place, or handed to the Go probe from inside
// spanStart where their bin is full, or before the clock is read on
// CLOCK_MONOTONIC; Do).
func TestSpanRecordsAsLocation(t *testing.T) {
	needProbes(t)
	sa, sb, sc := NewRegion("a"), NewRegion("b"), NewRegion("c")
	const rounds = 500 // bins of 256 bytes fill every few rounds
	type ev struct {
		kind   encode.Kind
		depth  int
		region uint32
	}
	record := func(useSpans bool, clock string) ([]ev, Stats) {
		m := startTest(t, Config{BufferSize: 4 << 20, BinSize: buffer.MinBinSize, NoThrottle: true, Clock: clock})
		ctx := context.Background()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if useSpans {
				for range rounds {
					outer := StartRegion(ctx, sa)
					for range 3 {
						b := StartRegion(ctx, sb)
						StartRegion(ctx, sc).End()
						b.End()
					}
					Do(ctx, sb, func(context.Context) {})
					outer.End()
				}
				return
			}
			a, b, c := m.RegionOf(sa), m.RegionOf(sb), m.RegionOf(sc)
			l := m.Location("worker")
			for range rounds {
				l.Enter(a)
				for range 3 {
					l.Enter(b)
					l.Enter(c)
					l.Leave(c)
					l.Leave(b)
				}
				l.Enter(b)
				l.Leave(b)
				l.Leave(a)
			}
			l.Done()
		}()
		<-done
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		var out []ev
		for _, e := range readEvents(t, openTrace(t, m)) {
			out = append(out, ev{e.Kind, e.Depth, e.Region})
		}
		return out, m.Stats()
	}
	for _, clock := range []string{"monotonic", ""} { // the default last: Start sets the process's clock
		spans, st := record(true, clock)
		plain, pst := record(false, clock)
		if st.Usage != (UsageErrors{}) || st.Kept != st.Recorded || st.Recorded != pst.Recorded {
			t.Errorf("clock %q: spans: %d recorded, %d kept, usage %+v; Enter and Leave: %d recorded", clock, st.Recorded, st.Kept, st.Usage, pst.Recorded)
		}
		if want := 2 * rounds * (1 + 3*2 + 1); len(spans) != want || !reflect.DeepEqual(spans, plain) {
			t.Errorf("clock %q: spans recorded %d events, Enter and Leave %d (want %d); equal: %v", clock, len(spans), len(plain), want, reflect.DeepEqual(spans, plain))
		}
	}
}

// Each event of the defer form carries the time of its own probe, not
// the last event's, for the nested region and for the outermost, whose
// lane spanStart takes back with a compare-and-swap (which uses AX, the
// register the enter's time is in). Each probe follows a spin of 20 µs,
// so its time is at least 10 µs past the last (a lower bound only: a
// preempted spin makes the gap longer).
func TestSpanTimesAreTheProbes(t *testing.T) {
	needProbes(t)
	outerSite, innerSite := NewRegion("outer"), NewRegion("inner")
	m := startTest(t, Config{BufferSize: 1 << 20, NoThrottle: true})
	spin := func() {
		for t0 := time.Now(); time.Since(t0) < 20*time.Microsecond; {
		}
	}
	const rounds = 4
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := context.Background()
		for range rounds {
			spin()
			outer := StartRegion(ctx, outerSite)
			spin()
			inner := StartRegion(ctx, innerSite)
			spin()
			inner.End()
			spin()
			outer.End()
		}
	}()
	<-done
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	evs := readEvents(t, f)
	if len(evs) != 4*rounds {
		t.Fatalf("%d events, want %d", len(evs), 4*rounds)
	}
	for i := 1; i < len(evs); i++ {
		gap := f.Nanos(evs[i].Time) - f.Nanos(evs[i-1].Time)
		if gap < 10_000 {
			t.Errorf("event %d (%v of region %d at depth %d) is %d ns after the one before, want at least 10000 (20 µs spun between them)", i, evs[i].Kind, evs[i].Region, evs[i].Depth, gap)
		}
	}
}
