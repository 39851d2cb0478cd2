package measure

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// treeProgram is a deterministic program of concurrent call trees: each of
// locs goroutines records trees call trees maxDepth deep, where every call
// above the deepest has one child and, with probability side, a second one
// (a side call): binary-ish trees whose deeper depths hold more events.
type treeProgram struct {
	seed     uint64
	locs     int
	trees    int
	maxDepth int
	side     float64
	noDone   bool // the goroutines end without Location.Done
}

// run records the program into a measurement of the given buffer and
// returns the trace, and the bins that hold kept events at the end.
func (p treeProgram) run(t *testing.T, size, binSize int) (*tracefile.File, int, []buffer.Reduction) {
	t.Helper()
	// No throttling: it decides by the clock, and the two runs compared must record the same calls.
	m := startTest(t, Config{BufferSize: size, BinSize: binSize, Reduction: ReduceDepth, NoThrottle: true})
	regions := make([]Region, p.maxDepth+1)
	for d := 1; d <= p.maxDepth; d++ {
		regions[d] = m.Region(fmt.Sprintf("depth%d", d))
	}
	locs := make([]*Location, p.locs)
	for i := range locs {
		locs[i] = m.Location(fmt.Sprintf("loc %d", i)) // ids in order, for the comparison
	}
	var wg sync.WaitGroup
	for i, loc := range locs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(p.seed, uint64(i)))
			var call func(d int)
			call = func(d int) {
				loc.Enter(regions[d])
				if d < p.maxDepth {
					call(d + 1)
					if rng.Float64() < p.side {
						call(d + 1)
					}
				}
				loc.Leave(regions[d])
			}
			for range p.trees {
				call(1)
			}
			if !p.noDone {
				loc.Done()
			}
		}()
	}
	wg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	used, _ := m.pool.Usage()
	if w := m.pool.Waits(); w.Waits > 0 || w.Reclaimed > 0 {
		t.Logf("%d takes waited for bins on their way back, %d gave up, %v in all, %v at the most; %d bins reclaimed", w.Waits, w.TimedOut, w.Total, w.Longest, w.Reclaimed)
		if w.TimedOut > 0 {
			// Every location probes until it is done: none is idle, and
			// one in the middle of a record ends it.
			t.Errorf("a take gave up waiting for bins")
		}
	}
	return openTrace(t, m), used, m.Reductions()
}

// shape is what a comparison with another run of the same program can
// rely on: not the times.
type shape struct {
	kind   encode.Kind
	region uint32
	depth  int
}

func shapes(t *testing.T, f *tracefile.File, id uint32, below int) []shape {
	evs, _ := readBack(t, f, id)
	var out []shape
	for _, e := range evs {
		if e.depth < below {
			out = append(out, shape{e.kind, e.region, e.depth})
		}
	}
	return out
}

// checkReducedRun checks a depth-reduced run of p against an unreduced
// reference run of it: every count adds up, no reduction closed a level
// that held nothing, recording never stopped, every event at a depth the
// trace keeps is in it, nothing deeper is, and at least 75 % of the bins
// hold kept events (see below).
func checkReducedRun(t *testing.T, p treeProgram, size, binSize int, ref *tracefile.File) {
	t.Helper()
	f, used, reds := p.run(t, size, binSize)
	limit, _ := finalDepthLimit(f)
	for _, r := range reds {
		switch {
		case r.Reason == buffer.ByFirst:
			t.Fatalf("recording stopped (%+v) with %d of %d bins in use; reductions %+v", r, used, size/binSize, reds)
		case r.Reason == buffer.ByDepth && r.Bins == 0 && r.Pending == 0:
			t.Fatalf("depth %d closed with no bins to free; reductions %+v", r.Depth, reds)
		}
	}
	for i := range p.locs {
		l := f.Location(uint32(i))
		checkCounts(t, l)
		want, got := shapes(t, ref, uint32(i), limit), shapes(t, f, uint32(i), 1<<30)
		if len(got) != len(want) {
			missing := map[int]int{}
			for _, s := range want {
				missing[s.depth]++
			}
			for _, s := range got {
				missing[s.depth]--
			}
			t.Fatalf("%s: %d events in the trace, %d at the kept depths < %d in the reference; missing by depth %v; reductions %+v",
				l.Name, len(got), len(want), limit, missing, f.Reductions)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("%s: event %d is %+v, reference %+v", l.Name, j, got[j], want[j])
			}
		}
	}
	// At least 75 % of the bins hold kept events, unless the program ended
	// before it could fill again what the last reduction freed: then
	// every bin but those still does.
	bins, want := size/binSize, (3*size/binSize+3)/4
	if n := len(reds); n > 0 {
		want = min(want, bins-reds[n-1].Bins-reds[n-1].Pending)
	}
	if used < want {
		t.Fatalf("%d of %d bins hold kept events at the end, want %d; reductions %+v", used, bins, want, reds)
	}
}

func reductionSeeds(t *testing.T, def int) int {
	if s := os.Getenv("HMB_TEST_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if testing.Short() {
		return 2
	}
	return def
}

// TestReductionOverReduction is issue 19's over-reduction: 8 goroutines
// with call trees 20 deep into 32 bins of 8 KiB. A reduction whose bins come
// back only at their owners' next probes must not close level after level.
func TestReductionOverReduction(t *testing.T) {
	for seed := range uint64(reductionSeeds(t, 6)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := treeProgram{seed: seed, locs: 8, trees: 40, maxDepth: 20, side: 0.3}
			ref, _, _ := p.run(t, 256<<20, 64<<10)
			if len(ref.Reductions) != 0 {
				t.Fatalf("reference reduced: %+v", ref.Reductions)
			}
			checkReducedRun(t, p, 256<<10, 8<<10, ref)
		})
	}
}

// TestReductionKeptDepthsComplete is issue 19's hole at the kept depths: 4
// goroutines each recording 400 binary-ish trees 20 deep into 1 MiB of
// 4 KiB bins; a call that found no bin while a reduction's bins were on
// their way back was dropped at a depth the trace keeps.
func TestReductionKeptDepthsComplete(t *testing.T) {
	for seed := range uint64(reductionSeeds(t, 6)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := treeProgram{seed: seed, locs: 4, trees: 400, maxDepth: 20, side: 0.25}
			ref, _, _ := p.run(t, 256<<20, 64<<10)
			if len(ref.Reductions) != 0 {
				t.Fatalf("reference reduced: %+v", ref.Reductions)
			}
			checkReducedRun(t, p, 1<<20, 4<<10, ref)
		})
	}
}

// TestPropertyReductionClosesNoMore runs random programs (locations,
// depths, shapes) into random buffers of at least two bins per location,
// big enough programs to fill them several times, and checks each against
// its unreduced run as checkReducedRun does.
func TestPropertyReductionClosesNoMore(t *testing.T) {
	for seed := range uint64(reductionSeeds(t, 20)) {
		rng := rand.New(rand.NewPCG(seed, 0x7ed))
		p := treeProgram{seed: seed, locs: 1 + rng.IntN(8), maxDepth: 4 + rng.IntN(21), side: 0.1 + 0.2*rng.Float64()}
		binSize := 4096 << rng.IntN(2)
		bins := p.locs * (2 + rng.IntN(7))
		// Calls per tree, about 3 bytes an event: the program fills the
		// buffer about 4 times over.
		calls := 0.0
		for d, w := 0, 1.0; d < p.maxDepth; d++ {
			calls += w
			w *= 1 + p.side
		}
		p.trees = max(1, int(4*float64(bins*binSize)/(6*calls*float64(p.locs))))
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("%+v, %d bins of %d bytes", p, bins, binSize)
			ref, _, _ := p.run(t, 256<<20, 64<<10)
			if len(ref.Reductions) != 0 {
				t.Fatalf("reference reduced: %+v", ref.Reductions)
			}
			checkReducedRun(t, p, bins*binSize, binSize, ref)
		})
	}
}

// TestReductionReclaimsBinsOfABlockedLocation is the over-reduction a slow
// or blocked owner caused: a location that holds current bins 20 deep and
// then does not probe (here it waits on a channel, without Done) for far
// longer than the wait limit, while another fills the buffer at depths 1 to
// 3. Each reduction must take the blocked location's bins of the depth it
// closes back instead of closing the next depth up, level after level,
// down to the worker's.
func TestReductionReclaimsBinsOfABlockedLocation(t *testing.T) {
	const depth, bins, binSize, iterations = 20, 32, 4096, 750
	m := startTest(t, Config{BufferSize: bins * binSize, BinSize: binSize, Reduction: ReduceDepth})
	m.pool.SetWaitLimit(time.Millisecond) // the wait main gave up after, shortened
	r := make([]Region, depth+1)
	for d := 1; d <= depth; d++ {
		r[d] = m.Region(fmt.Sprintf("depth%d", d))
	}
	worker, blocked := m.Location("worker"), m.Location("blocked")
	ready, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for d := 1; d <= depth; d++ {
			blocked.Enter(r[d])
		}
		close(ready)
		<-release
		for d := depth; d >= 1; d-- {
			blocked.Leave(r[d])
		}
	}()
	<-ready
	// The worker's times are made up, a microsecond apart, so that its
	// events take the same bytes however slowly it runs (-race): about 20
	// bins, more than the 12 the blocked location leaves, less than the 28
	// it would if it handed back those of the depths closed.
	now := m.Now()
	step := max(uint64(m.startTPS/1e6), 1)
	tick := func() uint64 { now += step; return now }
	events := 0
	for range iterations {
		worker.EnterAt(r[1], tick())
		for range 4 {
			worker.EnterAt(r[2], tick())
			for range 4 {
				worker.EnterAt(r[3], tick())
				worker.LeaveAt(r[3], tick())
			}
			worker.LeaveAt(r[2], tick())
		}
		worker.LeaveAt(r[1], tick())
		events += 42
	}
	close(release)
	<-done
	w := m.pool.Waits()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	t.Logf("waits %+v; reductions %+v", w, f.Reductions)
	if len(f.Reductions) == 0 {
		t.Fatal("the worker never filled the buffer")
	}
	seen := map[uint64]bool{}
	for _, red := range f.Reductions {
		if red.Reason != tracefile.ByDepth {
			t.Fatalf("reduction %+v", red)
		}
		if seen[red.Time] {
			t.Fatalf("two depths closed at time %d, for one bin", red.Time)
		}
		seen[red.Time] = true
	}
	if limit, _ := finalDepthLimit(f); limit <= 3 {
		t.Fatalf("depth %d closed: the worker's own calls lost", limit)
	}
	for id := range uint32(2) {
		checkCounts(t, f.Location(id))
	}
	if evs, _ := readBack(t, f, worker.ID()); len(evs) != events {
		t.Fatalf("the worker's trace holds %d events, want all %d", len(evs), events)
	}
	if w.TimedOut != 0 {
		t.Fatalf("a take gave up on the blocked location: %+v", w)
	}
	if used, _ := m.pool.Usage(); used < bins*3/4 {
		t.Fatalf("%d of %d bins hold kept events at the end", used, bins)
	}
}
