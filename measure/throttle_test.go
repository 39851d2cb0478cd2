package measure

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A region over the visits and under the time is switched off at a leave
// with none of its calls open, even when it recurses; later visits are
// counted, the trace stays well nested, and the file says when.
func TestThrottle(t *testing.T) {
	m := startTest(t, Config{ThrottleCalls: 1000, ThrottleTime: time.Hour})
	outer, tiny, slow := m.Region("outer"), m.Region("tiny"), m.Region("kept")
	loc := m.Location("main")
	loc.Enter(outer)
	for i := 0; i < 3000; i++ {
		loc.Enter(tiny)
		loc.Enter(tiny) // recursion: the outer call is the one timed
		loc.Leave(tiny)
		loc.Leave(tiny)
	}
	loc.Leave(outer)
	m.Close()
	f := openTrace(t, m)
	l := &f.Locations[0]
	var e tracefile.Event
	it := f.Events(l.ID)
	n := 0
	for it.Next(&e) {
		if e.Kind == encode.KindEnter && e.Region == uint32(tiny) {
			n++
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	for _, p := range l.Profile {
		switch p.Region {
		case uint32(tiny):
			// Throttled at the leave of the outer call of the 500th pair:
			// 1000 visits then.
			if !p.Throttled || p.Visits != 1000 || p.VisitsAfter != 2*2500 || n != 1000 {
				t.Errorf("tiny: %+v, %d enters in the trace", p, n)
			}
			if p.ThrottledAt < f.Header.StartTicks || p.ThrottledAt > f.Header.EndTicks {
				t.Errorf("throttled at %d, outside the run [%d, %d]", p.ThrottledAt, f.Header.StartTicks, f.Header.EndTicks)
			}
		case uint32(outer):
			if p.Throttled || p.Visits != 1 {
				t.Errorf("outer: %+v", p)
			}
		case uint32(slow):
			t.Errorf("never entered, yet in the profile: %+v", p)
		}
	}
	if l.Recorded != l.Accounted() {
		t.Errorf("recorded %d, accounted %d", l.Recorded, l.Accounted())
	}
}

// A region throttled while a call of it is open is not: the decision waits
// for a leave with none open, so the open call gets its leave.
func TestThrottleWaitsForOpenCalls(t *testing.T) {
	m := startTest(t, Config{ThrottleCalls: 10, ThrottleTime: time.Hour})
	r := m.Region("r")
	loc := m.Location("main")
	loc.Enter(r) // open across the whole loop
	for i := 0; i < 100; i++ {
		loc.Enter(r)
		loc.Leave(r)
	}
	loc.Leave(r)
	for i := 0; i < 5; i++ {
		loc.Enter(r)
		loc.Leave(r)
	}
	m.Close()
	f := openTrace(t, m)
	p := f.Locations[0].Profile[0]
	if !p.Throttled || p.Visits != 101 || p.VisitsAfter != 5 {
		t.Errorf("%+v", p)
	}
	if u := f.Locations[0].Usage.Total(); u != 0 {
		t.Errorf("%d usage errors", u)
	}
}

func TestThrottleOff(t *testing.T) {
	for _, c := range []Config{{NoThrottle: true, ThrottleCalls: 10, ThrottleTime: time.Hour}, {ThrottleCalls: 10, ThrottleTime: time.Nanosecond}} {
		m := startTest(t, c)
		r := m.Region("r")
		loc := m.Location("main")
		for i := 0; i < 100; i++ {
			loc.Enter(r)
			loc.Leave(r)
		}
		m.Close()
		if p := openTrace(t, m).Locations[0].Profile[0]; p.Throttled || p.Visits != 100 {
			t.Errorf("%+v: %+v", c, p)
		}
	}
}

// MPI regions are never throttled: the communication needs them whole.
func TestThrottleSparesParadigms(t *testing.T) {
	m := startTest(t, Config{ThrottleCalls: 10, ThrottleTime: time.Hour})
	r := m.RegionParadigm("MPI_Test", tracefile.ParadigmMPI)
	loc := m.Location("main")
	for i := 0; i < 100; i++ {
		loc.Enter(r)
		loc.Leave(r)
	}
	m.Close()
	f := openTrace(t, m)
	if p := f.Locations[0].Profile[0]; p.Throttled || p.Visits != 100 {
		t.Errorf("%+v", p)
	}
	if f.Regions[0].Paradigm != tracefile.ParadigmMPI {
		t.Errorf("paradigm %v", f.Regions[0].Paradigm)
	}
}

func TestThrottleConfig(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // error substring, "" for none
	}{
		{map[string]string{"HMB_THROTTLE": "0"}, ""},
		{map[string]string{"HMB_THROTTLE": "maybe"}, `HMB_THROTTLE="maybe"`},
		{map[string]string{"HMB_THROTTLE_CALLS": "0"}, `HMB_THROTTLE_CALLS="0"`},
		{map[string]string{"HMB_THROTTLE_CALLS": "5e3"}, `HMB_THROTTLE_CALLS="5e3"`},
		{map[string]string{"HMB_THROTTLE_TIME": "-1us"}, `HMB_THROTTLE_TIME="-1us"`},
		{map[string]string{"HMB_THROTTLE_TIME": "300ns", "HMB_THROTTLE_CALLS": "50"}, ""},
	} {
		var environ []string
		for k, v := range c.env {
			environ = append(environ, k+"="+v)
		}
		cfg, err := configFromLookup(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }, environ, discard{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.want)
		case c.want == "" && c.env["HMB_THROTTLE_CALLS"] == "50" && (cfg.ThrottleCalls != 50 || cfg.ThrottleTime != 300*time.Nanosecond):
			t.Errorf("%+v", cfg)
		case c.want == "" && c.env["HMB_THROTTLE"] == "0" && !cfg.NoThrottle:
			t.Errorf("HMB_THROTTLE=0 left throttling on")
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkThrottled measures the probes of a throttled region: one flag
// tested before the clock, the visit counted.
func BenchmarkThrottled(b *testing.B) {
	m := startTest(b, Config{ThrottleCalls: 1, ThrottleTime: time.Hour})
	r := m.Region("tiny")
	loc := m.Location("bench")
	loc.Enter(r)
	loc.Leave(r) // throttled here
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loc.Enter(r)
		loc.Leave(r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/event")
	b.ReportMetric(0, "ns/op")
	b.StopTimer()
	m.Close()
	if p := openTrace(b, m).Locations[0].Profile[0]; !p.Throttled || p.VisitsAfter != uint64(b.N) {
		b.Fatalf("%+v after %d pairs", p, b.N)
	}
}

// Regions entered once each cost memory and time for themselves only: a
// location's profile used to be copied whole for each new region (10^4
// regions allocated 1.6 GB; issue 17). The bound is on bytes allocated per
// region, which the copying made grow with the count.
func TestManyRegionsAllocateLinearly(t *testing.T) {
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096})
	loc := m.Location("main")
	perRegion := func(n, from int) float64 {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("region %d", from+i)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, name := range names {
			r := m.Region(name)
			loc.Enter(r)
			loc.Leave(r)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small := perRegion(2000, 0)
	large := perRegion(40000, 2000)
	t.Logf("bytes allocated per region: %.0f over the first 2000, %.0f over the next 40000", small, large)
	// Definitions (name, map slot) and a profile entry take about 200 bytes;
	// the copies took 40 bytes times the regions defined before.
	if large > 1000 {
		t.Errorf("%.0f bytes allocated per region at 4*10^4 regions, want at most 1000", large)
	}
	m.Close()
	if n := len(openTrace(t, m).Locations[0].Profile); n != 42000 {
		t.Errorf("%d profile entries, want 42000", n)
	}
}

// Enter and Leave test a cache of the throttled regions where they are
// inlined. Regions that share a slot (the same id mod 256) are throttled
// all the same, the one without the slot at its profile entry, and every
// visit after is counted for the region it belongs to; ids that are not
// regions (0, undefined ones) never match an empty slot.
func TestThrottleCacheSharedSlots(t *testing.T) {
	m := startTest(t, Config{ThrottleCalls: 10, ThrottleTime: time.Hour})
	loc := m.Location("main")
	regions := make([]Region, 600) // ids past 512: three regions share most slots
	for i := range regions {
		regions[i] = m.Region(fmt.Sprintf("r%d", i))
	}
	for k := 0; k < 10; k++ { // throttled at its 10th leave, in order
		for _, r := range regions {
			loc.Enter(r)
			loc.Leave(r)
		}
	}
	shared, cached := 0, 0
	for i, r := range regions {
		for k := 0; k <= i%7; k++ {
			loc.Enter(r)
			loc.Leave(r)
		}
		if loc.offRegion[uint8(r)] == r {
			cached++
		} else if loc.offRegion[uint8(r)] != Region(uint8(r))+1 {
			shared++
		}
	}
	if cached != offSlots || shared != len(regions)-offSlots {
		t.Errorf("%d regions in the cache, %d at their entries: want %d and %d", cached, shared, offSlots, len(regions)-offSlots)
	}
	// Not regions: each a usage error, none a throttled visit.
	loc.Enter(0)
	loc.Leave(0)
	loc.Enter(Region(len(regions) + 1000))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	l := &f.Locations[0]
	if len(l.Profile) != len(regions) {
		t.Fatalf("%d profile entries, want %d", len(l.Profile), len(regions))
	}
	for i, p := range l.Profile {
		if p.Region != uint32(regions[i]) || !p.Throttled || p.Visits != 10 || p.VisitsAfter != uint64(i%7+1) {
			t.Errorf("region %d: %+v, want throttled after 10 visits with %d after", regions[i], p, i%7+1)
		}
	}
	if u := l.Usage; u.UnknownRegion != 2 || u.LeaveNothingOpen != 1 {
		t.Errorf("usage %+v: want 2 unknown regions and a leave with nothing open", u)
	}
}

// A throttled region's Enter and Leave must stay inlined: the test of the
// cache and the count happen in the caller only then. One more node in
// Enter puts it over the inliner's budget of 80, so this is watched.
func TestProbesInline(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", "-o", os.DevNull, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, probe := range []string{"Enter", "Leave"} {
		if !regexp.MustCompile(`(?m)can inline \(\*Location\)\.` + probe + `( with|$)`).Match(out) {
			t.Errorf("(*Location).%s is not inlined any more; go build -gcflags=-m=2 ./measure says why", probe)
		}
	}
	// Span.End inlines into the defer's wrapper, which then makes one call
	// (leaveProbe) per End; StartRegion into its caller, which makes one
	// (spanStart).
	for _, f := range []string{`Span\.End`, `StartRegion`} {
		if !regexp.MustCompile(`(?m)can inline ` + f + `( with|$)`).Match(out) {
			t.Errorf("%s is not inlined any more; go build -gcflags=-m=2 ./measure says why", f)
		}
	}
}

// A C++-shaped program (LULESH's accessors: 10^5 calls of about 30 ns per
// thread) whose threads are preempted inside a few accessor calls each,
// differently on every rank and thread: every location throttles the same
// set, the accessors, and nothing else. With the mean as the statistic the
// ranks would disagree: a thread preempted in 10 of its 10^5 calls of 30 ns
// has a mean of 430 ns, above the 250 ns bound; one never preempted, 30 ns.
func TestThrottleIgnoresPreemption(t *testing.T) {
	const (
		iters     = 50
		accessors = 2000 // per iteration and accessor: 10^5 calls
		preempt   = 4 * time.Millisecond
	)
	type plan struct {
		preempted int  // accessor calls preempted, spread over the run
		early     bool // all of them in the first 200 calls instead
	}
	plans := [][]plan{ // by rank, then thread
		{{0, false}, {3, false}},
		{{10, false}, {40, false}},
		{{30, true}, {12, true}},
		{{0, false}, {100, false}},
	}
	want := []string{"Domain::fx(int)", "Domain::x(int)"}
	for rank, threads := range plans {
		m := startTest(t, Config{Name: fmt.Sprintf("rank%d", rank)}) // the default rule
		ns := func(d time.Duration) uint64 { return uint64(float64(d.Nanoseconds()) * m.startTPS / 1e9) }
		force, fx, x := m.Region("CalcForce"), m.Region("Domain::fx(int)"), m.Region("Domain::x(int)")
		eos, mixed := m.Region("EvalEOS"), m.Region("Mixed")
		for th, pl := range threads {
			loc := m.Location(fmt.Sprintf("thread %d", th))
			rng := rand.New(rand.NewPCG(uint64(rank), uint64(th)))
			hit := map[int]bool{}
			for len(hit) < pl.preempted {
				if pl.early {
					hit[rng.IntN(200)] = true
				} else {
					hit[rng.IntN(iters*accessors)] = true
				}
			}
			now := m.Now() + 1
			call := func(r Region, d time.Duration) {
				loc.EnterAt(r, now)
				now += ns(d)
				loc.LeaveAt(r, now)
				now += ns(5 * time.Nanosecond)
			}
			for it := 0; it < iters; it++ {
				loc.EnterAt(force, now)
				for i := 0; i < accessors; i++ {
					d := 30 * time.Nanosecond
					if hit[it*accessors+i] {
						d += preempt
					}
					call(fx, d)
					call(x, 40*time.Nanosecond)
				}
				for i := 0; i < 200; i++ {
					call(mixed, time.Duration(100+300*(i%2))*time.Nanosecond) // half of its calls long
				}
				for i := 0; i < 20; i++ {
					call(eos, 2*time.Microsecond)
				}
				loc.LeaveAt(force, now)
			}
			loc.Done()
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		f := openTrace(t, m)
		rule := f.ThrottleRule
		if rule == nil {
			t.Fatal("no throttle rule in the trace")
		}
		for _, l := range f.Locations {
			var got []string
			for _, p := range l.Profile {
				if p.Throttled {
					got = append(got, f.RegionName(p.Region))
				}
				// The file holds what the probes decided by: the rule
				// agrees with every entry's last leave.
				if due := rule.Due(p.Visits, p.LongCalls); due != p.Throttled {
					t.Errorf("rank %d %s: %s: rule says %v at %d visits, %d long; throttled %v",
						rank, l.Name, f.RegionName(p.Region), due, p.Visits, p.LongCalls, p.Throttled)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("rank %d %s: throttled %q, want %q", rank, l.Name, got, want)
			}
		}
	}
}
