package waitstate

import (
	"cmp"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestSweepRunningTotals: the sweep that charges each window once, from
// running totals per call path, gives what charging every open window at
// every step of the log gives (sweepEachStep, the sweep as it was), on
// a halo run with a split communicator, a synthetic run and the planted
// runs of this package's tests, with 1 and 2 workers.
func TestSweepRunningTotals(t *testing.T) {
	dir := t.TempDir()
	var synthetic []*tracefile.File
	for _, p := range tracetest.SyntheticRun(t, dir, "sweep", 4, 100) {
		synthetic = append(synthetic, tracetest.Open(t, p))
	}
	runs := map[string][]*tracefile.File{"halo": openHaloSteps(t, 16, 30), "synthetic": synthetic}
	for name, files := range runs {
		for _, procs := range []int{1, 2} {
			got, err := Analyze(files, Options{Procs: procs, Worst: 1000})
			if err != nil {
				t.Fatal(err)
			}
			sweepWith = (*analysis).sweepEachStep
			want, err := Analyze(files, Options{Procs: procs, Worst: 1000})
			sweepWith = (*analysis).sweep
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Delays) == 0 || len(want.DelayCosts) == 0 || want.CriticalPath == nil || len(want.Worst) == 0 {
				t.Fatalf("%s: the run shows no delays to compare", name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d workers: the sweep by running totals differs from charging every step", name, procs)
			}
		}
	}
}

// sweepEachStep is the sweep that charges every open window at every
// step of the location's log: the reference for sweep.
func (a *analysis) sweepEachStep(n int, waits []wait, wins []window, named []bool, out *delayOut) error {
	lo := a.locs[n]
	f := a.files[lo.File]
	d := a.data[n]
	out.costs = map[costKey]*Value{}
	out.during, out.work = map[int][]regionTime{}, map[int][]regionTime{}
	out.path = map[int32]int64{}
	out.seen = map[int32][]uint32{}
	defer func() { out.seen, out.slab = nil, nil }()
	var (
		next   int
		active []*window
		e      logRecord
		stack  []frame
		sync   = -1
		prev   int64
		begun  bool
	)
	segment := func(s, t int64) {
		for next < len(wins) && wins[next].start < t {
			if wins[next].end > wins[next].start {
				active = append(active, &wins[next])
			}
			next++
		}
		if len(active) == 0 {
			return
		}
		at := len(stack) - 1
		if sync >= 0 {
			at = sync
		}
		for at >= 0 && stack[at].region == 0 {
			at--
		}
		kept := active[:0]
		for _, w := range active {
			if ov := min(t, w.end) - max(s, w.start); ov > 0 && at >= 0 {
				a.charge(w, waits, d.pathOf(stack, at), stack[at].region, ov, named, lo.File, out)
			}
			if w.end > t {
				kept = append(kept, w)
			} else if w.kind == winDuring {
				delete(out.seen, w.wait)
				out.lastSeenOK = false
			}
		}
		active = kept
	}
	defer func() { d.pathCache = nil }()
	lr := logReader{buf: d.log.buf}
	for (next < len(wins) || len(active) > 0) && lr.next(&e) {
		t := a.axis.Nanos(lo.File, f, e.tick)
		if begun && t > prev && len(stack) > 0 {
			segment(prev, t)
		}
		prev, begun = max(prev, t), true
		switch {
		case e.enter:
			for len(stack) < e.depth-1 {
				stack = append(stack, frame{call: -1, path: -1})
			}
			if k := a.kind(lo.File, e.region); sync < 0 && (k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier) {
				sync = len(stack)
			}
			stack = append(stack, frame{region: e.region, call: -1, path: -2})
		default:
			if len(stack) == 0 {
				break
			}
			m := len(stack) - 1
			for m > 0 && stack[m-1].region == 0 {
				m--
			}
			stack = stack[:m]
			if sync >= len(stack) {
				sync = -1
			}
		}
	}
	return nil
}

// TestSortWindows: sortWindows orders windows by start, keeps every one,
// and keeps the input order of windows that start together (the radix
// sort is stable), at sizes on both sides of where it stops comparing.
func TestSortWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 255, 256, 5000} {
		for _, spread := range []int64{1, 1000, 1 << 40} {
			w := make([]window, n)
			for i := range w {
				w[i] = window{start: 1<<41 + rng.Int64N(spread), end: int64(i), wait: int32(i)}
			}
			got := slices.Clone(w)
			sortWindows(got)
			want := slices.Clone(w)
			slices.SortStableFunc(want, func(x, y window) int { return cmp.Compare(x.start, y.start) })
			if n < 256 {
				// Compared: sorted fully, ties by wait (the input order here).
				slices.SortFunc(want, compareWindow)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d windows with starts spread over %d ns: not sorted by start, stably", n, spread)
			}
		}
	}
}

// TestBackwardOrder: the backward replay's order, by a radix sort of the
// ends with only ties compared whole, is the one a comparison sort by
// compareBackward (then index, latest first) gives, with many waits
// ending together, files claiming one rank, and few and many waits.
func TestBackwardOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	locs := []Location{{Rank: 0}, {Rank: 1}, {Rank: 1, Loc: 1}, {Rank: 1}, {Rank: 2}}
	a := &analysis{run: &run{locs: locs}}
	for _, n := range []int{0, 1, 100, 300, 5000} {
		for _, spread := range []int64{3, 1000, 1 << 40} {
			waits := make([]wait, n)
			plan := &delayPlan{intervals: make([]plannedInterval, n)}
			for i := range waits {
				start := rng.Int64N(spread)
				waits[i] = wait{Pattern: Pattern(rng.IntN(3)), Loc: rng.IntN(len(locs)), Start: start,
					Time: 1 + rng.Int64N(3), call: int32(rng.IntN(4))}
				plan.intervals[i].planned = rng.IntN(8) != 0
			}
			type byEnd struct {
				k backwardKey
				i int
			}
			var want []int32
			var keys []byEnd
			for i, pi := range plan.intervals {
				if pi.planned {
					keys = append(keys, byEnd{a.backwardKeyOf(&waits[i]), i})
				}
			}
			slices.SortFunc(keys, func(x, y byEnd) int {
				if c := compareBackward(x.k, y.k); c != 0 {
					return c
				}
				return cmp.Compare(y.i, x.i)
			})
			for _, k := range keys {
				want = append(want, int32(k.i))
			}
			if got := a.backwardOrder(plan, waits); !slices.Equal(got, want) {
				t.Errorf("%d waits over %d ns: the backward order differs from compareBackward's", n, spread)
			}
		}
	}
}

// TestSortKeyed: sortKeyed sorts by key, stably, on both sides of where
// it stops comparing, with keys near both ends of int64.
func TestSortKeyed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 255, 256, 5000} {
		for _, base := range []int64{math.MinInt64 + 1, -1000, 1 << 62} {
			s := make([]keyed, n)
			for i := range s {
				s[i] = keyed{base + rng.Int64N(1<<20), int32(i)}
				if i%7 == 0 && i > 0 {
					s[i].key = s[i-1].key // ties
				}
			}
			want := slices.Clone(s)
			slices.SortStableFunc(want, func(x, y keyed) int { return cmp.Compare(x.key, y.key) })
			sortKeyed(s)
			if !slices.Equal(s, want) {
				t.Errorf("%d keys from %d: not sorted by key, stably", n, base)
			}
		}
	}
}

// TestOwnCursor: a location's cursor finds the waits overlapping each
// span that overlapping finds, latest first, whether the spans' ends fall
// (the backward order's usual case) or rise.
func TestOwnCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var waits []wait
	var own []ownWait
	start := int64(0)
	for i := range 500 {
		start += rng.Int64N(20)
		w := wait{Start: start, Time: 1 + rng.Int64N(15)}
		waits = append(waits, w)
		own = append(own, ownWait{start: w.Start, end: w.Start + w.Time, place: int32(i)})
		start += w.Time
	}
	byStart := make([]int, len(waits))
	for i := range byStart {
		byStart[i] = i
	}
	var c ownCursor
	end := start + 10
	for q := range 2000 {
		if q%50 == 0 {
			end = rng.Int64N(start + 10) // a rise now and then
		} else {
			end -= rng.Int64N(30)
		}
		s := span{end - rng.Int64N(100), end}
		var want []int32
		for _, i := range overlapping(nil, byStart, waits, s) {
			want = append(want, int32(i))
		}
		var got []int32
		for _, o := range c.overlapping(nil, own, s) {
			got = append(got, o.place)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("span %v: the cursor found waits %v, overlapping %v", s, got, want)
		}
	}
}

// TestSortUint64: sortUint64 sorts like slices.Sort, on both sides of
// where it stops comparing, with packed partners' shapes and wide spreads.
func TestSortUint64(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 255, 256, 5000} {
		for _, shape := range []func() uint64{
			func() uint64 { return packPartner(rng.IntN(6)-3, int32(rng.IntN(1<<17))) },
			func() uint64 { return packPartner(teamPartner, int32(rng.IntN(100))) },
			rng.Uint64,
		} {
			s := make([]uint64, n)
			for i := range s {
				s[i] = shape()
			}
			want := slices.Clone(s)
			slices.Sort(want)
			sortUint64(s)
			if !slices.Equal(s, want) {
				t.Errorf("%d values: not sorted", n)
			}
		}
	}
}

// TestSortReleases: sortReleases orders a location's releases by end,
// then peer, as compareRelease does, with many ending together.
func TestSortReleases(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var keys []keyed
	for _, n := range []int{0, 1, 255, 256, 5000} {
		for _, spread := range []int64{5, 1 << 40} {
			l := make([]releaseAt, n)
			for i := range l {
				l[i] = releaseAt{end: rng.Int64N(spread), peer: rng.IntN(8)}
			}
			want := slices.Clone(l)
			slices.SortFunc(want, compareRelease)
			sortReleases(l, &keys)
			if !slices.Equal(l, want) {
				t.Errorf("%d releases over %d ns: not sorted by end, then peer", n, spread)
			}
		}
	}
}
