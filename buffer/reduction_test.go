package buffer

import (
	"runtime"
	"testing"
	"time"
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
// one depth, counts that bin as freed and waits for it; it does not close
// level after level, nor drop the record.
func TestReductionWaitsForBinsOnTheirWay(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	done := make(chan bool)
	go func() { done <- a.Level(1, ClassRegion).Enter(10, 0, 1) }()
	for !b.Stale() {
		runtime.Gosched()
	}
	b.Sync() // b's next probe hands its bin back
	if !<-done {
		t.Fatal("a's enter was dropped while b's bin was on its way back")
	}
	red := p.Reductions()
	if len(red) != 1 || red[0].Depth != 5 || red[0].Bins != 0 || red[0].Pending != 1 {
		t.Fatalf("reductions %+v, want one closing depth 5, its one bin pending", red)
	}
	if w := p.Waits(); w.Waits != 1 || w.TimedOut != 0 {
		t.Fatalf("waits %+v", w)
	}
}

// An owner that does not probe again is waited for only so long: then the
// next depth up is closed, and its bins are not waited for again until it
// has synced.
func TestReductionGivesUpOnIdleOwners(t *testing.T) {
	p, a, b := fullOfCurrentBins(t, 4)
	p.SetWaitLimit(time.Millisecond)
	lv := a.Level(1, ClassRegion)
	if lv.Enter(10, 0, 1) {
		t.Fatal("a found a bin that only idle b holds")
	}
	if lv.Dropped[NoBin] != 1 {
		t.Fatalf("dropped %v, want 1 for want of a bin", lv.Dropped)
	}
	red := p.Reductions()
	if len(red) != 4 || red[3].Depth != 2 {
		t.Fatalf("reductions %+v, want depths 5 to 2 closed, one by one", red)
	}
	if w := p.Waits(); w.Waits != 1 || w.TimedOut != 1 {
		t.Fatalf("waits %+v, want one that timed out", w)
	}
	b.Sync()
	if used, _ := p.Usage(); used != 0 || p.pending != 0 || p.coming != 0 {
		t.Fatalf("after b's sync: %d bins used, %d pending, %d coming", used, p.pending, p.coming)
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
