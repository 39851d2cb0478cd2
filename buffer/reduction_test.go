package buffer

import (
	"runtime"
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

// Where bins cannot be reclaimed (the C probes write without the busy
// mark), an owner that does not probe is waited for only so long. Then no
// depth is closed whose bins are all the idle owner's: that would free
// nothing. The record that needed a bin is dropped and counted, and the
// bin comes back when its owner syncs.
func TestReductionClosesNothingThatFreesNothing(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	var pin runtime.Pinner
	defer pin.Unpin()
	p.PinForC(&pin)
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
	p.PinForC(&pin)
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
