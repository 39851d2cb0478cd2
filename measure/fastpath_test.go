package measure

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The probes' fast path (enter and leave) and the general one
// (enterGeneral and leaveGeneral, taken for every probe of a location that
// keeps call paths) must record the same trace. The same random probes go
// into two measurements that differ only in Config.CallPaths: deep
// recursion past the first stack, mismatched and unknown leaves, an MPI
// region, throttling, and a buffer small enough that reductions close
// depths while calls are open there.
func TestFastPathRecordsWhatTheGeneralPathDoes(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		var files [2]*tracefile.File
		var stats [2]Stats
		var base uint64 // the same times for both: ahead of the second's start
		for i, paths := range []bool{false, true} {
			m := startTest(t, Config{BufferSize: 16 * 512, BinSize: 512, CallPaths: paths, TimerShift: NoTimerShift,
				ThrottleCalls: 300, ThrottleTime: time.Nanosecond})
			if base == 0 {
				base = m.Now() + 1e12
			}
			regions := []Region{m.Region("a"), m.Region("b"), m.Region("c"), m.Region("tiny"), m.RegionParadigm("MPI_Send", tracefile.ParadigmMPI)}
			loc := m.Location("main")
			if loc.general != paths {
				t.Fatalf("call paths %v: general %v", paths, loc.general)
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			now := base
			var open []Region
			for k := 0; k < 20000; k++ {
				now += uint64(rng.IntN(300))
				switch x := rng.IntN(100); {
				case x < 45 && len(open) < 40:
					r := regions[rng.IntN(len(regions))]
					if r == regions[3] {
						r = regions[0] // tiny is only ever a tick long
					}
					open = append(open, r)
					loc.EnterAt(r, now)
				case x < 90 && len(open) > 0:
					loc.LeaveAt(open[len(open)-1], now)
					open = open[:len(open)-1]
				case x < 93 && len(open) > 1:
					// A leave of a region further down: the ones above are left implicitly.
					j := rng.IntN(len(open) - 1)
					loc.LeaveAt(open[j], now)
					open = open[:j]
				case x < 95:
					loc.LeaveAt(Region(1000), now) // never defined
				default:
					loc.EnterAt(regions[3], now) // tiny: throttled after 300 visits of a tick
					loc.LeaveAt(regions[3], now+1)
				}
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			stats[i] = m.Stats()
			files[i] = openTrace(t, m)
		}
		if stats[0].Recorded == 0 || len(stats[0].Reductions) == 0 {
			t.Fatalf("seed %d: %d events, %d reductions: the test lost its point", seed, stats[0].Recorded, len(stats[0].Reductions))
		}
		fast, general := stats[0], stats[1]
		if fast.Recorded != general.Recorded || fast.Kept != general.Kept || fast.Removed != general.Removed ||
			fast.Usage != general.Usage || !reflect.DeepEqual(fast.Depths, general.Depths) || !reflect.DeepEqual(fast.Reductions, general.Reductions) {
			t.Errorf("seed %d: stats differ: fast recorded %d kept %d removed %v usage %+v, %d reductions; general %d %d %v %+v, %d",
				seed, fast.Recorded, fast.Kept, fast.Removed, fast.Usage, len(fast.Reductions),
				general.Recorded, general.Kept, general.Removed, general.Usage, len(general.Reductions))
		}
		a, b := files[0].Locations[0], files[1].Locations[0]
		if !reflect.DeepEqual(a.Profile, b.Profile) {
			t.Errorf("seed %d: profiles differ:\nfast    %+v\ngeneral %+v", seed, a.Profile, b.Profile)
		}
		if throttled := a.Profile[3]; !throttled.Throttled || throttled.VisitsAfter == 0 || a.Profile[0].Throttled {
			t.Errorf("seed %d: tiny %+v, a %+v: want tiny throttled, a not", seed, throttled, a.Profile[0])
		}
		ea, eb := readEvents(t, files[0]), readEvents(t, files[1])
		if !reflect.DeepEqual(ea, eb) {
			t.Errorf("seed %d: %d events on the fast path, %d on the general one", seed, len(ea), len(eb))
		}
	}
}

func readEvents(t *testing.T, f *tracefile.File) []tracefile.Event {
	t.Helper()
	var out []tracefile.Event
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		out = append(out, e)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return out
}

// A probe into a closed depth and a throttled region's probe allocate
// nothing either (TestProbesAllocateNothing covers the kept ones).
func TestDroppedAndThrottledProbesAllocateNothing(t *testing.T) {
	m := startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096, ThrottleCalls: 1, ThrottleTime: time.Hour})
	outer, inner, tiny := m.Region("outer"), m.Region("inner"), m.Region("tiny")
	loc := m.Location("main")
	loc.Enter(outer)
	loc.Enter(inner) // depth 2 must exist to be closed
	loc.Leave(inner)
	loc.Enter(tiny)
	loc.Leave(tiny) // throttled here, as inner was
	if err := m.CloseDepth(2); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10000, func() {
		loc.Enter(tiny)
		loc.Leave(tiny)
	})
	if allocs != 0 {
		t.Errorf("a throttled region's probes allocate %v times per run", allocs)
	}
	loc.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if p := openTrace(t, m).Locations[0].Profile[2]; !p.Throttled || p.VisitsAfter != 10001 {
		t.Errorf("tiny: %+v, want throttled with 10001 visits after", p)
	}

	// The closed depth: a region that is not throttled (ThrottleCalls 1e9).
	m = startTest(t, Config{BufferSize: 1 << 20, BinSize: 4096, ThrottleCalls: 1e9})
	outer, inner = m.Region("outer"), m.Region("inner")
	loc = m.Location("main")
	loc.Enter(outer)
	loc.Enter(inner)
	loc.Leave(inner)
	if err := m.CloseDepth(2); err != nil {
		t.Fatal(err)
	}
	allocs = testing.AllocsPerRun(10000, func() {
		loc.Enter(inner)
		loc.Leave(inner)
	})
	if allocs != 0 {
		t.Errorf("probes into a closed depth allocate %v times per run", allocs)
	}
	loc.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Depths[2].Removed == ([len(st.Depths[2].Removed)]uint64{}) || st.Depths[2].Kept != 0 {
		t.Errorf("depth 2: %+v, want every event removed", st.Depths[2])
	}
}
