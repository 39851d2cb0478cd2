package measure

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/goroutine"
	"github.com/hmbtrace/hmbtrace/tracefile"
	"golang.org/x/sync/errgroup"
)

// nilContext is the nil context StartRegion accepts (the contract
// allows it; a variable keeps vet's nil-context check quiet).
var nilContext context.Context

// needProbes skips a test of what the probes record in a build without
// them (-tags hmbtrace_off).
func needProbes(t *testing.T) {
	if !ProbesCompiledIn {
		t.Skip("the probes are compiled out (hmbtrace_off)")
	}
}

// concurrency tracks how many goroutines are inside a task at once, and the
// most there were.
type concurrency struct{ now, peak atomic.Int64 }

func (c *concurrency) enter() {
	n := c.now.Add(1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
}

func (c *concurrency) leave() { c.now.Add(-1) }

var (
	siteTask  = NewRegion("task")
	siteInner = NewRegion("inner")
)

// manyTasks is the number of goroutines of the errgroup tests.
func manyTasks() int {
	if testing.Short() || raceEnabled {
		return 10000
	}
	return 100000
}

// unlimited is the errgroup limit of the tests of a goroutine per task: none,
// except under the race detector, which allows 8128 goroutines at once.
func unlimited() int {
	if raceEnabled {
		return 1000
	}
	return -1
}

// checkLanes checks a measurement whose tasks each recorded one task
// region with one inner region inside: every event kept, no usage error,
// the lanes at most the tasks that ran at once, each region visited once
// per task, and the buffer's bins bounded by the lanes.
func checkLanes(t *testing.T, m *Measurement, tasks int, peak int64) {
	t.Helper()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	lanes := len(st.Locations)
	t.Logf("%d tasks, at most %d at once: %d lanes, %d events recorded, %d kept, %d bins at peak of %d",
		tasks, peak, lanes, st.Recorded, st.Kept, st.BinsPeak, st.Bins)
	if lanes == 0 || int64(lanes) > peak {
		t.Errorf("%d lanes for tasks of which at most %d ran at once", lanes, peak)
	}
	if st.Kept != st.Recorded || st.Dropped() != 0 {
		t.Errorf("kept %d of %d events, dropped %d: want all kept", st.Kept, st.Recorded, st.Dropped())
	}
	// Four events a task, and a task switch and completion for each
	// holder after a lane's first (the last holders complete at Close).
	if min, max := uint64(4*tasks), uint64(6*tasks); st.Recorded < min || st.Recorded > max {
		t.Errorf("%d events recorded for %d tasks, want %d to %d", st.Recorded, tasks, min, max)
	}
	if st.Usage.Total() != 0 || st.SharedLane != 0 {
		t.Errorf("usage errors %+v, shared-lane probes %d; want none", st.Usage, st.SharedLane)
	}
	// The bins the kept events fill, and a bin per depth and class that a
	// lane fills at a time: the region levels at depths 1 and 2 and the
	// task records' at depth 0. A bin sealed when the next record does
	// not fit is nearly full.
	binSize := int64(m.cfg.BinSize)
	if limit := int(st.BytesUsed/(binSize*9/10)) + 3*lanes + 4; st.BinsPeak > limit {
		t.Errorf("%d bins in use at the peak for %d lanes, want at most %d", st.BinsPeak, lanes, limit)
	}
	f := openTrace(t, m)
	visits := map[string]uint64{}
	for _, l := range f.Locations {
		for _, p := range l.Profile {
			visits[f.RegionName(p.Region)] += p.Visits
		}
	}
	for _, name := range []string{"task", "inner"} {
		if visits[name] != uint64(tasks) {
			t.Errorf("region %s: %d visits in the profile, want %d", name, visits[name], tasks)
		}
	}
}

// A goroutine per task through errgroup, each task a region with a region
// inside, by StartRegion: as many lanes as ran at once, every event kept.
func TestErrgroupStartRegion(t *testing.T) {
	needProbes(t)
	for _, limit := range []int{unlimited(), 4} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			m := startTest(t, Config{NoThrottle: true})
			ctx := context.Background()
			var c concurrency
			g, ctx := errgroup.WithContext(ctx)
			g.SetLimit(limit)
			tasks := manyTasks()
			for range tasks {
				g.Go(func() error {
					c.enter()
					defer c.leave()
					defer StartRegion(ctx, siteTask).End()
					Do(ctx, siteInner, func(context.Context) {})
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			checkLanes(t, m, tasks, c.peak.Load())
		})
	}
}

// The idiom the docs gave before lanes: a Location at the start of each
// task's goroutine, Done at its end. Done gives the lane back, so it is
// bounded the same way.
func TestErrgroupLocationDone(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{NoThrottle: true})
	task, inner := m.Region("task"), m.Region("inner")
	var c concurrency
	var g errgroup.Group
	g.SetLimit(unlimited())
	tasks := manyTasks()
	for i := range tasks {
		g.Go(func() error {
			c.enter()
			defer c.leave()
			loc := m.Location(fmt.Sprintf("task %d", i))
			loc.Enter(task)
			loc.Enter(inner)
			loc.Leave(inner)
			loc.Leave(task)
			loc.Done()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	checkLanes(t, m, tasks, c.peak.Load())
}

// laneEvents returns each location's events: kind, region name, task.
func laneEvents(t *testing.T, m *Measurement) map[string][]string {
	t.Helper()
	f := openTrace(t, m)
	got := map[string][]string{}
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			s := e.Kind.String()
			switch e.Kind {
			case encode.KindEnter, encode.KindLeave:
				s += " " + f.RegionName(e.Region)
			case encode.KindTaskSwitch, encode.KindTaskComplete:
				s += fmt.Sprintf(" %d", e.Task&^laneTaskBit)
			}
			got[l.Name] = append(got[l.Name], s)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// A goroutine keeps its lane between outermost regions; another goroutine
// that needs one takes it while it is idle, and the trace shows the two
// holders as tasks on the one lane, their regions nested in between.
func TestLaneStolenWhileIdle(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{NoThrottle: true})
	ctx := context.Background()
	StartRegion(ctx, siteTask).End()
	StartRegion(ctx, siteTask).End() // the same lane, taken back without a task record
	done := make(chan struct{})
	go func() {
		defer close(done)
		sp := StartRegion(ctx, siteTask) // steals the test goroutine's idle lane
		StartRegion(ctx, siteInner).End()
		sp.End()
	}()
	<-done
	StartRegion(ctx, siteInner).End() // its lane was stolen: it steals it back
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got := laneEvents(t, m)
	want := map[string][]string{"lane 1": {
		"ENTER task", "LEAVE task", "ENTER task", "LEAVE task",
		"TASK_SWITCH 1", "ENTER task", "ENTER inner", "LEAVE inner", "LEAVE task", "TASK_COMPLETE 1",
		"TASK_SWITCH 2", "ENTER inner", "LEAVE inner",
	}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events by lane:\n got %v\nwant %v", got, want)
	}
}

// A tight loop of outermost regions on one goroutine keeps one lane and
// records only its regions.
func TestLaneTightLoop(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{NoThrottle: true})
	const n = 10000
	for range n {
		StartRegion(nilContext, siteTask).End()
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if len(st.Locations) != 1 || st.Recorded != 2*n || st.Kept != 2*n {
		t.Errorf("%d lanes, %d events recorded, %d kept; want 1 lane and %d events kept", len(st.Locations), st.Recorded, st.Kept, 2*n)
	}
}

// Done at depth 0 gives a Location back, and the next Location takes it:
// a task on it, under the lane's first name. With regions open Done keeps
// it (a worker about to wait).
func TestLocationReuse(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{NoThrottle: true})
	r := m.Region("r")
	a := m.Location("first")
	a.Enter(r)
	a.Done() // a region open: kept
	b := m.Location("second")
	if b == a {
		t.Fatal("Location handed out a location whose holder has a region open")
	}
	b.Done()
	a.Leave(r)
	a.Done()
	c := m.Location("third")
	if (c != a || c.Name() != "first") && (c != b || c.Name() != "second") {
		t.Fatalf("Location after two Dones returned a location named %q, not one given back", c.Name())
	}
	c.Enter(r)
	c.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); len(st.Locations) != 2 {
		t.Errorf("%d locations, want 2", len(st.Locations))
	}
}

// Two goroutines probing one Location at once are detected and counted,
// and Close says so.
func TestSharedLaneDetected(t *testing.T) {
	needProbes(t)
	if raceEnabled {
		t.Skip("sharing a Location is a data race, which the race detector reports itself")
	}
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two goroutines running at once")
	}
	m := startTest(t, Config{NoThrottle: true})
	r := m.Region("r")
	loc := m.Location("shared")
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Until the other goroutine was seen, within a bound: the two
			// need to run at once, which a loaded machine delays.
			for i := 0; i < 20_000_000 && loc.lane.shared.Load() == 0; i++ {
				loc.Enter(r)
				loc.Leave(r)
			}
		}()
	}
	wg.Wait()
	m.Close()
	st := m.Stats()
	t.Logf("%d probes recorded, %d found the other goroutine inside one; %d other usage errors", st.Recorded, st.SharedLane, st.Usage.Total())
	if st.SharedLane == 0 || st.Locations[0].SharedLane != st.SharedLane {
		t.Fatalf("SharedLane %d (location's %d): sharing not detected", st.SharedLane, st.Locations[0].SharedLane)
	}
	var out strings.Builder
	reportShared(&out, []*Location{loc})
	if msg := out.String(); !strings.Contains(msg, `location "shared"`) || !strings.Contains(msg, "-race") {
		t.Errorf("Close's message %q names neither the location nor -race", msg)
	}
}

// A Site bound in one measurement gives the right region in the next,
// where the region has another id.
func TestSiteRebinds(t *testing.T) {
	needProbes(t)
	s := NewRegion("site")
	m1 := startTest(t, Config{})
	r1 := m1.RegionOf(s)
	if r1 != m1.Region("site") {
		t.Fatalf("measurement 1: RegionOf %d, Region %d", r1, m1.Region("site"))
	}
	m1.Close()
	m2 := startTest(t, Config{})
	m2.Region("a")
	m2.Region("b")
	if r2, want := m2.RegionOf(s), m2.Region("site"); r2 != want || r2 == r1 {
		t.Errorf("measurement 2: RegionOf %d, want %d (measurement 1's was %d)", r2, want, r1)
	}
	if file, line := s.Pos(); !strings.HasSuffix(file, "lane_test.go") || line == 0 {
		t.Errorf("site declared at %s:%d, want this file", file, line)
	}
	m2.Close()
	// A region's definition carries the site's file and line.
	f := openTrace(t, m2)
	for _, d := range f.Regions {
		if d.Name == "site" && (!strings.HasSuffix(d.File, "lane_test.go") || d.Line == 0) {
			t.Errorf("region site defined at %s:%d", d.File, d.Line)
		}
	}
}

// Current is the running measurement; NewContext sends StartRegion to
// another.
func TestCurrentAndContext(t *testing.T) {
	needProbes(t)
	m1 := startTest(t, Config{})
	if Current() != m1 {
		t.Fatal("Current is not the measurement Start returned last")
	}
	checkSpanCurrent(t, "after Start")
	m2 := startTest(t, Config{})
	ctx := NewContext(context.Background(), m1)
	checkSpanCurrent(t, "after NewContext")
	StartRegion(ctx, siteTask).End()
	StartRegion(context.Background(), siteInner).End() // Current: m2
	m2.Close()
	if Current() != m1 {
		t.Error("Current is not the measurement still running after the newest closed")
	}
	checkSpanCurrent(t, "after Close")
	m1.Close()
	if Current() != nil {
		t.Error("Current is not nil after every measurement closed")
	}
	checkSpanCurrent(t, "after the last Close")
	for _, c := range []struct {
		m    *Measurement
		want uint64
	}{{m1, 2}, {m2, 2}} {
		if st := c.m.Stats(); st.Recorded != c.want {
			t.Errorf("%d events recorded, want %d", st.Recorded, c.want)
		}
	}
	StartRegion(nilContext, siteTask).End() // nothing runs: nothing to do
}

// checkSpanCurrent fails t unless spanCurrent, which StartRegion's
// assembly reads, is Current while no context carried a measurement, and
// nil once one did.
func checkSpanCurrent(t *testing.T, when string) {
	t.Helper()
	want := Current()
	if contexts.Load() {
		want = nil
	}
	if got := spanCurrent.Load(); got != want {
		t.Errorf("%s: spanCurrent is %p, want %p (Current %p, contexts %v)", when, got, want, Current(), contexts.Load())
	}
}

// The defer form and Do allocate nothing, once the site is bound and the
// goroutine has its lane.
func TestStartRegionAllocatesNothing(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096})
	defer m.Close()
	ctx := context.Background()
	f := func() { defer StartRegion(ctx, siteTask).End() }
	f()
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Errorf("defer StartRegion(ctx, s).End(): %v allocations, want 0", n)
	}
	body := func(context.Context) {}
	if n := testing.AllocsPerRun(1000, func() { Do(ctx, siteInner, body) }); n != 0 {
		t.Errorf("Do: %v allocations, want 0", n)
	}
}

// A disabled measurement hands out zero Spans.
func TestStartRegionDisabled(t *testing.T) {
	needProbes(t)
	m := startTest(t, Config{Disabled: true})
	if sp := StartRegion(nilContext, siteTask); sp != (Span{}) {
		t.Errorf("StartRegion on a disabled measurement returned %+v", sp)
	}
	m.Close()
}

// A Site keeps no closed measurement alive: its binding is a serial
// number, not a pointer to the measurement and its buffer.
func TestSiteKeepsNoMeasurement(t *testing.T) {
	needProbes(t)
	s := NewRegion("kept alive?")
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096})
	StartRegion(context.Background(), s).End()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	w := weak.Make(m)
	m = nil
	for range 5 {
		runtime.GC()
		if w.Value() == nil {
			return
		}
	}
	t.Error("a closed measurement whose site was bound is still reachable")
}

// TestLaneSlotSpread checks that goroutines running at once land in
// different slots of the lane table, which laneSlot picks by bits of the
// key (a g's address, which the runtime keeps at least 1<<gSlotShift bytes
// apart from any other g) where goroutine.Fast, else by a hash.
func TestLaneSlotSpread(t *testing.T) {
	const n = 256
	keys := make([]uintptr, n)
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			keys[i] = goroutine.Key()
			ready.Done()
			<-release // all alive at once: no descriptor is recycled
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	slices.Sort(keys)
	if goroutine.Fast {
		for i := 1; i < n; i++ {
			if d := keys[i] - keys[i-1]; d < 1<<gSlotShift {
				t.Errorf("two running goroutines' g are %d bytes apart, under 1<<gSlotShift (%d): laneSlot puts them in one slot", d, 1<<gSlotShift)
			}
		}
	}
	slots := map[uintptr]bool{}
	for _, k := range keys {
		slots[laneSlot(k)] = true
	}
	// A uniform hash puts 256 keys into about 227 of 1024 slots; the g's
	// bits gave 213-240 (and Fibonacci hashing of them 184-227).
	if len(slots) < n/2 {
		t.Errorf("%d goroutines running at once took %d slots of the lane table, want %d or more", n, len(slots), n/2)
	}
}
