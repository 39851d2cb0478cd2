package measure

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestProbeFastPathAsGo: Enter and Leave (on amd64 the assembly of
// probe_amd64.s for their common case) write what the Go probes write for
// the same times. A random walk of nested regions is recorded through
// Enter and Leave, then replayed through EnterAt and LeaveAt, which never
// take the assembly, with the times the trace holds (every tick kept):
// the events, the bytes they take and the flat profile must be the same.
// The walk mostly enters a depth's usual region, as code does (the short
// records), sometimes another (the encoder's general records), and crosses
// bin boundaries.
func TestProbeFastPathAsGo(t *testing.T) {
	cfg := func(name string) Config {
		return Config{Name: name, TimerShift: NoTimerShift, BufferSize: 8 << 20, BinSize: 4096, NoThrottle: true}
	}
	// The replay's measurement first: its start precedes every time recorded.
	replay := startTest(t, cfg("replay"))
	rec := startTest(t, cfg("rec"))
	var regions [2][]Region
	for i := range 8 {
		name := fmt.Sprintf("r%d", i)
		regions[0] = append(regions[0], rec.Region(name))
		regions[1] = append(regions[1], replay.Region(name))
	}
	if !slices.Equal(regions[0], regions[1]) {
		t.Fatalf("the two measurements numbered the regions differently: %v, %v", regions[0], regions[1])
	}
	loc := rec.Location("main")
	rng := rand.New(rand.NewPCG(36, 2))
	var stack []Region
	const steps = 200000
	for range steps {
		if len(stack) < 6 && (len(stack) == 0 || rng.IntN(2) == 0) {
			r := regions[0][len(stack)]
			if rng.IntN(8) == 0 {
				r = regions[0][rng.IntN(len(regions[0]))]
			}
			loc.Enter(r)
			stack = append(stack, r)
			continue
		}
		loc.Leave(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
	}
	for len(stack) > 0 {
		loc.Leave(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got := openTrace(t, rec)
	var evs []tracefile.Event
	it := got.Events(got.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		evs = append(evs, e)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if uint64(len(evs)) != got.Locations[0].Recorded || len(evs) < steps {
		t.Fatalf("read %d events of %d recorded", len(evs), got.Locations[0].Recorded)
	}

	rloc := replay.Location("main")
	for _, e := range evs {
		switch e.Kind {
		case encode.KindEnter:
			rloc.EnterAt(Region(e.Region), e.Time)
		case encode.KindLeave:
			rloc.LeaveAt(Region(e.Region), e.Time)
		default:
			t.Fatalf("event %+v: only enters and leaves were recorded", e)
		}
	}
	if err := replay.Close(); err != nil {
		t.Fatal(err)
	}
	want := openTrace(t, replay)
	if u := rec.Stats().Usage; u != (UsageErrors{}) {
		t.Errorf("usage errors recorded: %+v", u)
	}
	if g, w := rec.Stats().BytesUsed, replay.Stats().BytesUsed; g != w {
		t.Errorf("the probes wrote %d bytes, the Go probes %d for the same events", g, w)
	}
	var i int
	it = want.Events(want.Locations[0].ID)
	for it.Next(&e) {
		if i >= len(evs) || !sameEvent(e, evs[i]) {
			t.Fatalf("event %d: replayed %+v, recorded %+v", i, e, evs[min(i, len(evs)-1)])
		}
		i++
	}
	if it.Err() != nil || i != len(evs) {
		t.Fatalf("replayed %d events of %d: %v", i, len(evs), it.Err())
	}
	gp, wp := got.Locations[0].Profile, want.Locations[0].Profile
	if len(gp) != len(wp) {
		t.Fatalf("profiles of %d and %d regions", len(gp), len(wp))
	}
	for i := range gp {
		g, w := gp[i], wp[i]
		if g.Region != w.Region || g.Visits != w.Visits || g.Inclusive != w.Inclusive || g.Exclusive != w.Exclusive {
			t.Errorf("profile of region %d: recorded %+v, replayed %+v", g.Region, g, w)
		}
	}
}

// TestProbeFastPathThrottles: the throttling rule holds on the probes'
// common path (the assembly on amd64, which leaves the decision to Go): a
// region whose calls are all short is switched off after the early step's
// visits, one whose calls are all long never is, and every visit is counted.
func TestProbeFastPathThrottles(t *testing.T) {
	const calls, early = 20000, 1000
	for _, c := range []struct {
		bound     time.Duration
		throttled bool
	}{{time.Hour, true}, {time.Nanosecond, false}} {
		m := startTest(t, Config{ThrottleCalls: early, ThrottleTime: c.bound})
		r := m.Region("accessor")
		loc := m.Location("main")
		for range calls {
			loc.Enter(r)
			loc.Leave(r)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		p := openTrace(t, m).Locations[0].Profile[0]
		if p.Throttled != c.throttled || p.Visits+p.VisitsAfter != calls {
			t.Errorf("calls against a bound of %v: %+v, want throttled %v and %d visits", c.bound, p, c.throttled, calls)
		}
		if c.throttled && p.Visits > early {
			t.Errorf("short calls throttled after %d visits, not by %d", p.Visits, early)
		}
	}
}

// TestProbeFastPathThrottleSteps: the probes' common path applies each
// step of the throttling rule where it holds (the assembly on amd64 tests
// the late step first): with the late step at 100,000 visits, a region of
// short calls only is switched off at the early step's 4096th visit, and
// one with a long call in every hundred (more than the early step's 1 in
// 256, fewer than the late step's 1 in 8) at exactly the 100,000th.
func TestProbeFastPathThrottleSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("two tenths of a second of long calls")
	}
	const calls = 100000
	for _, c := range []struct {
		longEvery int // every how many calls one is long, 0 for none
		visits    uint64
		atLong    bool // the long calls are the longEvery-th, so the rule switches the region off at a long one's leave
		// A call this long or longer is long; a long call takes twice as
		// long. 50 µs sends a long call's leave to Go (its record's
		// difference is past the one- and two-byte leaves' reach); 5 µs
		// keeps it on the fast path, which counts it out of line.
		bound time.Duration
	}{
		{0, throttleEarly, false, 50 * time.Microsecond},
		{100, calls, false, 50 * time.Microsecond},
		{100, calls, false, 5 * time.Microsecond},
		{100, calls, true, 5 * time.Microsecond},
	} {
		bound := c.bound
		m := startTest(t, Config{ThrottleCalls: calls, ThrottleTime: bound})
		r := m.Region("accessor")
		loc := m.Location("main")
		// The long calls up to the switch: sure, and maybe (a short call
		// this machine preempted inside its probes may be long too; a tenth
		// of the bound spares the test the calibration's error of the
		// probes' ticks).
		var sure, maybe uint64
		for i := range calls + 1000 {
			long := c.longEvery > 0 && (c.atLong && (i+1)%c.longEvery == 0 || !c.atLong && i%c.longEvery == 0)
			start := time.Now()
			loc.Enter(r)
			if long {
				for start := time.Now(); time.Since(start) < 2*bound; {
				}
			}
			loc.Leave(r)
			if uint64(i) < c.visits {
				if long {
					sure++
					maybe++
				} else if time.Since(start) >= bound*9/10 {
					maybe++
				}
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		p := openTrace(t, m).Locations[0].Profile[0]
		if !p.Throttled || p.Visits != c.visits || p.Visits+p.VisitsAfter != calls+1000 {
			t.Errorf("a long call of %v in every %d: %+v, want throttled at visit %d of %d", 2*bound, c.longEvery, p, c.visits, calls+1000)
		}
		// The call at whose leave the region is switched off counts once,
		// long or not: the fast path hands it to Go before it counts it.
		if c.longEvery > 0 && (p.LongCalls < sure || p.LongCalls > maybe) {
			t.Errorf("a long call of %v in every %d (the last at the switch: %v): %d long calls, want %d to %d", 2*bound, c.longEvery, c.atLong, p.LongCalls, sure, maybe)
		}
	}
}

// sameEvent compares what an enter or leave holds.
func sameEvent(a, b tracefile.Event) bool {
	return a.Kind == b.Kind && a.Time == b.Time && a.Seq == b.Seq && a.Depth == b.Depth && a.Class == b.Class && a.Region == b.Region
}
