package buffer

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
)

// fullOfCurrentBins makes a pool of n bins whose every bin is the current
// bin of depth 2..n of hierarchy b, and a hierarchy a with nothing yet.
func fullOfCurrentBins(t *testing.T, n int) (p *Pool, a, b *Hierarchy) {
	p = newPool(t, n, 256, PolicyDepth)
	a, b = p.NewHierarchy(), p.NewHierarchy()
	for d := 2; d < 2+n; d++ {
		if !b.Level(d, ClassRegion).Enter(uint64(d), 0, 1) {
			t.Fatalf("enter at depth %d dropped", d)
		}
	}
	if len(p.free) != 0 {
		t.Fatalf("%d bins free, want 0", len(p.free))
	}
	return p, a, b
}

// A reduction whose bins are all current bins of another location closes
// one depth and takes that bin back from its owner, which is not putting a
// record: it does not wait for the owner's next probe, nor close level
// after level, nor drop the record. The owner b here never probes while a
// needs a bin: it stands for a goroutine the system does not run for longer
// than the wait limit, or one asleep in a receive.
func TestReductionReclaimsBinsOfAnOwnerThatDoesNotProbe(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	p.SetWaitLimit(time.Millisecond)
	b5 := b.Level(5, ClassRegion)
	if !a.Level(1, ClassRegion).Enter(10, 0, 1) {
		t.Fatal("a's enter was dropped while b's bin could be reclaimed")
	}
	red := p.Reductions()
	if len(red) != 1 || red[0].Depth != 5 || red[0].Bins != 0 || red[0].Pending != 1 {
		t.Fatalf("reductions %+v, want one closing depth 5, its one bin pending", red)
	}
	if w := p.Waits(); w.Waits != 0 || w.Reclaimed != 1 {
		t.Fatalf("waits %+v, want none, one bin reclaimed", w)
	}
	if got := b5.Revoked()[ByDepth]; got != 1 {
		t.Fatalf("b's depth 5 revoked %d records, want its 1", got)
	}
	if used, _ := p.Usage(); used != 4 || p.pending != 0 || p.coming != 0 {
		t.Fatalf("%d bins used, %d pending, %d coming; want 4, 0, 0", used, p.pending, p.coming)
	}
	// b's next records: at the closed depth dropped (its Room syncs), at
	// the open ones kept in the bins it still has.
	if b5.Enter(11, 0, 1) {
		t.Fatal("b put a record at closed depth 5")
	}
	if b5.Dropped[ByDepth] != 1 {
		t.Fatalf("b's depth 5 dropped %v, want 1 by depth", b5.Dropped)
	}
	if !b.Level(4, ClassRegion).Leave(12, 0, 1) {
		t.Fatal("b's leave at depth 4 dropped")
	}
	if used, _ := p.Usage(); used != 4 {
		t.Fatalf("%d bins used after b's probes, want 4", used)
	}
}

// A writer in the middle of a record keeps its bins until it has ended it,
// however long that takes: the take waits for it past the wait limit, then
// reclaims the bin with the record it put after the closure.
func TestReductionWaitsForAWriterInTheMiddleOfARecord(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	p.SetWaitLimit(time.Microsecond)
	b5 := b.Level(5, ClassRegion)
	if b5.Room() < 2*encode.MaxEnterLeaveSize { // b begins a record, before the closure
		t.Fatal("no room at b's depth 5")
	}
	done := make(chan bool)
	go func() { done <- a.Level(1, ClassRegion).Enter(10, 0, 1) }()
	for p.Waits().Waits == 0 {
		runtime.Gosched()
	}
	b5.Advance(b5.Encoder().Leave(b5.Tail(), 11, 0)) // ... and ends it
	if !<-done {
		t.Fatal("a's enter was dropped")
	}
	if red := p.Reductions(); len(red) != 1 || red[0].Depth != 5 {
		t.Fatalf("reductions %+v, want one closing depth 5", red)
	}
	if w := p.Waits(); w.Waits != 1 || w.TimedOut != 0 || w.Reclaimed != 1 {
		t.Fatalf("waits %+v, want one that reclaimed b's bin", w)
	}
	if got := b5.Revoked()[ByDepth]; got != 2 {
		t.Fatalf("b's depth 5 revoked %d records, want 2: the enter and the leave put after the closure", got)
	}
}

// A C writer's bins (PinForC with its in_direct mark) are reclaimed as a Go
// writer's are: at once while its mark is 0, and once it has ended the
// probe it is in while it is 1, within the wait limit, not past it.
func TestReductionReclaimsFromACWriter(t *testing.T) {
	if !cMarks {
		t.Skip("no bin is reclaimed from a C writer in this build (mark_atomic.go)")
	}
	for _, inProbe := range []bool{false, true} {
		t.Run(fmt.Sprintf("in a probe %v", inProbe), func(t *testing.T) {
			p, a, b := fullOfCurrentBins(t, 4)
			var pin runtime.Pinner
			defer pin.Unpin()
			var mark int32 // the C thread's in_direct
			if inProbe {
				mark = 1
			}
			p.PinForC(&pin, b, &mark)
			p.SetWaitLimit(time.Minute)
			done := make(chan bool)
			go func() { done <- a.Level(1, ClassRegion).Enter(10, 0, 1) }()
			if inProbe {
				for p.Waits().Waits == 0 {
					runtime.Gosched()
				}
				atomic.StoreInt32(&mark, 0) // the probe ends; its next one sees the new epoch
			}
			if !<-done {
				t.Fatal("a's enter was dropped while b's bin could be reclaimed")
			}
			want := WaitStats{Reclaimed: 1}
			if inProbe {
				want.Waits = 1
			}
			if w := p.Waits(); w.Waits != want.Waits || w.TimedOut != 0 || w.Reclaimed != 1 {
				t.Fatalf("waits %+v, want %d waits, none timed out, one bin reclaimed", w, want.Waits)
			}
			if red := p.Reductions(); len(red) != 1 || red[0].Depth != 5 {
				t.Fatalf("reductions %+v, want one closing depth 5", red)
			}
		})
	}
}

// Where bins cannot be reclaimed (a C writer whose busy mark the pool does
// not know), an owner that does not probe is waited for only so long. Then no
// depth is closed whose bins are all the idle owner's: that would free
// nothing. The record that needed a bin is dropped and counted, and the
// bin comes back when its owner syncs.
func TestReductionClosesNothingThatFreesNothing(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	var pin runtime.Pinner
	defer pin.Unpin()
	p.PinForC(&pin, nil, nil)
	p.SetWaitLimit(time.Millisecond)
	lv := a.Level(1, ClassRegion)
	if lv.Enter(10, 0, 1) {
		t.Fatal("a found a bin that only idle b holds")
	}
	if lv.Dropped[NoBin] != 1 {
		t.Fatalf("dropped %v, want 1 for want of a bin", lv.Dropped)
	}
	if red := p.Reductions(); len(red) != 1 || red[0].Depth != 5 || red[0].Pending != 1 {
		t.Fatalf("reductions %+v, want only depth 5 closed", red)
	}
	if w := p.Waits(); w.Waits != 1 || w.TimedOut != 1 || w.Reclaimed != 0 {
		t.Fatalf("waits %+v, want one that timed out, nothing reclaimed", w)
	}
	b.Sync()
	if used, _ := p.Usage(); used != 3 || p.pending != 0 || p.coming != 0 {
		t.Fatalf("after b's sync: %d bins used, %d pending, %d coming; want 3, 0, 0", used, p.pending, p.coming)
	}
	if !lv.Enter(11, 0, 1) {
		t.Fatal("a's enter dropped after b handed its bin back")
	}
}

// ... but a depth with a sealed bin frees it: after the wait, the deepest
// such depth is closed, with the idle owner's current bins below it.
func TestReductionClosesTheDeepestDepthThatFrees(t *testing.T) {
	p := newPool(t, 5, 256, PolicyDepth)
	var pin runtime.Pinner
	defer pin.Unpin()
	p.PinForC(&pin, nil, nil)
	p.SetWaitLimit(time.Millisecond)
	a, b := p.NewHierarchy(), p.NewHierarchy()
	var tm uint64
	fill(t, b.Level(3, ClassRegion), 2, &tm) // one sealed bin and a current one
	for _, d := range []int{2, 4, 5} {
		if !b.Level(d, ClassRegion).Enter(tm, 0, 1) {
			t.Fatalf("b's enter at depth %d dropped", d)
		}
	}
	if !a.Level(1, ClassRegion).Enter(tm+1, 0, 1) {
		t.Fatal("a's enter dropped though depth 3 has a sealed bin")
	}
	red := p.Reductions()
	if len(red) != 2 || red[0].Depth != 5 || red[1].Depth != 3 || red[1].Bins != 1 || red[1].Pending != 2 {
		t.Fatalf("reductions %+v, want depth 5 closed, then depth 3 with its sealed bin", red)
	}
}

// A released location's bins are sealed: a reduction revokes them at once.
func TestReleaseLetsReductionsTakeBinsAtOnce(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	b.Release()
	if !a.Level(1, ClassRegion).Enter(10, 0, 1) {
		t.Fatal("a's enter dropped")
	}
	red := p.Reductions()
	if len(red) != 1 || red[0].Depth != 5 || red[0].Bins != 1 || red[0].Pending != 0 {
		t.Fatalf("reductions %+v, want depth 5 closed, its sealed bin freed", red)
	}
	if w := p.Waits(); w.Waits != 0 {
		t.Fatalf("waits %+v", w)
	}
}

// Writers that pause between probes, and in the middle of records, while
// others reduce and reclaim their bins: every record put is in a bin of
// its own level, whole, or counted as revoked, and no bin holds another
// writer's records. Under -race the busy mark's atomic variant must order
// every record before the reclaim that follows it; without it, the plain
// one and its membarrier are what is tested.
func TestReclaimUnderConcurrentWriters(t *testing.T) {
	// Whether a round reclaims depends on the scheduling (about 1 in 20
	// does not): 8 rounds that all do not would mean it never happens.
	reclaimed := uint64(0)
	for round := range uint64(8) {
		t.Run(fmt.Sprint(round), func(t *testing.T) { reclaimed += testReclaimUnderConcurrentWriters(t, round) })
	}
	if reclaimed == 0 {
		t.Fatal("no bin was reclaimed: the test tests nothing")
	}
}

func testReclaimUnderConcurrentWriters(t *testing.T, seed uint64) uint64 {
	const writers, bins, maxDepth, steps = 6, 24, 12, 20000
	p := newPool(t, bins, 256, PolicyDepth)
	p.SetWaitLimit(time.Millisecond)
	hs := make([]*Hierarchy, writers)
	for i := range hs {
		hs[i] = p.NewHierarchy()
	}
	put := make([]map[*Level]uint64, writers)
	var wg sync.WaitGroup
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			counts := map[*Level]uint64{}
			region := uint32(i + 1)
			var open []bool   // open[d-1]: the enter at depth d was kept
			view := p.Epoch() // the writer's own view of the epoch, as measure's locations keep it
			h.Sync()
			for tm := uint64(1); tm <= steps; tm++ {
				d := len(open)
				if d == 0 || (d < maxDepth && rng.IntN(2) == 0) {
					lv, ok := h.Level(d+1, ClassRegion), false
					switch rng.IntN(8) {
					case 0:
						// The probes' direct path, paused in the middle.
						if lv.Room() >= 2*encode.MaxEnterLeaveSize || lv.Refill(tm, 0) {
							runtime.Gosched()
							lv.Advance(lv.Encoder().Enter(lv.Tail(), tm, 0, region))
							ok = true
						}
					case 1:
						// measure's probes: Begin against the writer's view,
						// which a failed Begin refreshes as Location.sync does.
						switch {
						case !h.Begin(view):
							view = p.Epoch()
							h.Sync()
							ok = lv.Enter(tm, 0, region)
						case !h.Open(d+1, ClassRegion):
							h.End()
							ok = lv.Enter(tm, 0, region) // dropped, and counted
						case lv.Free() >= 2*encode.MaxEnterLeaveSize:
							runtime.Gosched()
							lv.Advance(lv.Encoder().Enter(lv.Tail(), tm, 0, region))
							ok = true
						default:
							if lv.Room() >= 2*encode.MaxEnterLeaveSize || lv.Refill(tm, 0) {
								lv.Advance(lv.Encoder().Enter(lv.Tail(), tm, 0, region))
								ok = true
							}
						}
					default:
						ok = lv.Enter(tm, 0, region)
					}
					if ok {
						counts[lv]++
					}
					open = append(open, ok)
				} else {
					lv := h.Level(d, ClassRegion)
					if open[d-1] && lv.Leave(tm, 0, region) {
						counts[lv]++
					}
					open = open[:d-1]
				}
				if rng.IntN(400) == 0 {
					// Idle between probes, holding bins.
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				}
			}
			put[i] = counts
		}()
	}
	wg.Wait()
	p.Finalize()
	dec := encode.NewDecoder(encode.All)
	var r encode.Record
	inUse := 0
	for i, h := range hs {
		h.Levels(func(lv *Level) {
			kept := uint64(0)
			last := uint64(0)
			lv.Bins(func(data []byte, records uint32) {
				inUse++
				if err := dec.Reset(data); err != nil {
					t.Fatalf("writer %d depth %d: %v", i, lv.Depth(), err)
				}
				n := uint32(0)
				for dec.Next(&r) {
					n++
					if r.Time < last {
						t.Fatalf("writer %d depth %d: time %d after %d", i, lv.Depth(), r.Time, last)
					}
					last = r.Time
					if r.Kind == encode.KindEnter && r.Region != uint32(i+1) {
						t.Fatalf("writer %d depth %d: an enter of region %d, another writer's", i, lv.Depth(), r.Region)
					}
				}
				if dec.Err() != nil || n != records {
					t.Fatalf("writer %d depth %d: %d of %d records decode: %v", i, lv.Depth(), n, records, dec.Err())
				}
				kept += uint64(n)
			})
			revoked := uint64(0)
			for _, n := range lv.Revoked() {
				revoked += n
			}
			if w := lv.Written(); w != put[i][lv] || kept+revoked != w {
				t.Fatalf("writer %d depth %d: put %d, written %d, kept %d + revoked %d", i, lv.Depth(), put[i][lv], w, kept, revoked)
			}
		})
	}
	if used, _ := p.Usage(); used != inUse || p.pending != 0 || p.coming != 0 {
		t.Fatalf("%d bins in use, %d hold records; %d pending, %d coming", used, inUse, p.pending, p.coming)
	}
	w := p.Waits()
	t.Logf("reductions %d, waits %+v", len(p.Reductions()), w)
	return w.Reclaimed
}
