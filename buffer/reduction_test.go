package buffer

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func TestFlatReduceDepth(t *testing.T) {
	f := NewFlat(100 * FlatRecordSize)
	for i := 0; !f.Full(); i++ {
		f.Put(1, ClassRegion, 1+i%4, uint32(i), uint64(i))
	}
	if f.Len() != 100 {
		t.Fatalf("%d records", f.Len())
	}
	if n := f.ReduceDepth(); n != 25 {
		t.Fatalf("removed %d records, want the 25 at depth 4", n)
	}
	for i := 0; i < f.Len(); i++ {
		r := f.buf[i*FlatRecordSize:]
		if depth := int(r[2]); depth >= 4 {
			t.Fatalf("record %d at depth %d survived", i, depth)
		}
	}
	// Order is kept: regions (the original indices) still increase.
	prev := -1
	for i := 0; i < f.Len(); i++ {
		r := f.buf[i*FlatRecordSize:]
		region := int(uint32(r[4]) | uint32(r[5])<<8)
		if region <= prev {
			t.Fatalf("order broken at %d", i)
		}
		prev = region
	}
}

func TestReductionCost(t *testing.T) {
	hmb, flat, err := ReductionCost(1<<20, 8<<10)
	if err != nil {
		t.Fatal(err)
	}
	if hmb <= 0 || flat <= 0 {
		t.Fatalf("times %v, %v", hmb, flat)
	}
	t.Logf("1 MiB: HMB %v, flat %v", hmb, flat)
}

// BenchmarkReduction times one depth reduction of a full buffer, HMB and
// flat side by side, and reports their ratio.
func BenchmarkReduction(b *testing.B) {
	for _, mib := range []int{8, 64, 256} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			var hmbNs, flatNs float64
			for i := 0; i < b.N; i++ {
				hmb, flat, err := ReductionCost(mib<<20, 8<<10)
				if err != nil {
					b.Fatal(err)
				}
				hmbNs += float64(hmb.Nanoseconds())
				flatNs += float64(flat.Nanoseconds())
			}
			b.ReportMetric(hmbNs/float64(b.N), "hmb-ns/reduction")
			b.ReportMetric(flatNs/float64(b.N), "flat-ns/reduction")
			b.ReportMetric(flatNs/hmbNs, "flat/hmb")
			b.ReportMetric(0, "ns/op")
		})
	}
}

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
