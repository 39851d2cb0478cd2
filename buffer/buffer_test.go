package buffer

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
)

func newPool(t *testing.T, bins, binSize int, p Policy) *Pool {
	t.Helper()
	pool, err := NewPool(Config{Size: bins * binSize, BinSize: binSize, Policy: p, Techniques: encode.All})
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

func TestNewPoolValidates(t *testing.T) {
	cases := []struct {
		c    Config
		want string
	}{
		{Config{Size: 1 << 20, BinSize: 100}, "bin size 100 out of range"},
		{Config{Size: 1 << 30, BinSize: 1 << 25}, "out of range"},
		{Config{Size: 1000, BinSize: 1024}, "fewer than 2 bins"},
		{Config{Size: 1 << 20, BinSize: 1024, Techniques: 0x80}, "invalid encoding techniques"},
		{Config{Size: 1 << 20, BinSize: 1024, Policy: 9}, "invalid reduction policy"},
		{Config{Size: 1 << 20, BinSize: 1024, ClassOrder: []Class{ClassRegion}}, "cannot be closed by class"},
		{Config{Size: 1 << 20, BinSize: 1024, ClassOrder: []Class{ClassMetric, ClassMetric}}, "listed twice"},
	}
	for _, c := range cases {
		_, err := NewPool(c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewPool(%+v): %v, want %q", c.c, err, c.want)
		}
	}
}

// fill writes enter/leave pairs into lv until it has used n bins in all.
func fill(t *testing.T, lv *Level, bins int, tm *uint64) {
	t.Helper()
	for lv.sealed+1 < bins || lv.cur < 0 {
		*tm++
		if !lv.Enter(*tm, 0, 1) {
			t.Fatalf("depth %d: enter dropped while filling", lv.depth)
		}
		*tm++
		if !lv.Leave(*tm, 0, 1) {
			t.Fatalf("depth %d: leave dropped while filling", lv.depth)
		}
	}
}

func TestDepthReductionRevokesSealedBinsOfEveryLocation(t *testing.T) {
	p := newPool(t, 10, 256, PolicyDepth)
	a, b := p.NewHierarchy(), p.NewHierarchy()
	var tm uint64
	fill(t, a.Level(1, ClassRegion), 2, &tm)
	fill(t, a.Level(3, ClassRegion), 3, &tm)
	fill(t, b.Level(2, ClassRegion), 2, &tm)
	fill(t, b.Level(3, ClassRegion), 3, &tm) // 10 bins: the pool is empty
	if len(p.free) != 0 {
		t.Fatalf("%d bins free, want 0", len(p.free))
	}
	// a needs a new bin at depth 1: depth 3 is closed. a's own current bin
	// there comes back at once; b's stays with b until b syncs.
	lv := a.Level(1, ClassRegion)
	for lv.sealed < 2 {
		tm++
		if !lv.Enter(tm, 0, 1) {
			t.Fatal("enter dropped after the reduction")
		}
		tm++
		lv.Leave(tm, 0, 1)
	}
	red := p.Reductions()
	if len(red) != 1 || red[0].Reason != ByDepth || red[0].Depth != 3 || red[0].Bins != 5 || red[0].Pending != 1 {
		t.Fatalf("reductions %+v, want one closing depth 3 with 4 sealed bins and a's current one freed, b's pending", red)
	}
	if a.Limit != 3 {
		t.Errorf("a sees limit %d, want 3", a.Limit)
	}
	if b.Stale() != true {
		t.Error("b does not see the new epoch")
	}
	if p.pending != 1 {
		t.Errorf("%d bins pending, want b's current bin at depth 3", p.pending)
	}
	b3 := b.Level(3, ClassRegion)
	records := b3.n
	b.Sync()
	if p.pending != 0 || b3.cur >= 0 {
		t.Errorf("after b's sync: pending %d, b's current bin %d", p.pending, b3.cur)
	}
	if got := b3.Revoked()[ByDepth]; got != b3.Written() || b3.Written() == 0 {
		t.Errorf("b depth 3: revoked %d of %d written (last bin %d records)", got, b3.Written(), records)
	}
	// Events at the closed depth are refused from now on.
	if b.Open(3, ClassRegion) || !b.Open(2, ClassRegion) {
		t.Error("b's view of the closed set is wrong")
	}
}

func TestDepthPolicyStopsInsteadOfClosingTheTop(t *testing.T) {
	p := newPool(t, 4, 256, PolicyDepth)
	h := p.NewHierarchy()
	lv := h.Level(1, ClassRegion)
	var tm uint64
	for i := 0; i < 10000; i++ {
		tm++
		if !lv.Enter(tm, 0, 1) {
			break
		}
		tm++
		lv.Leave(tm, 0, 1)
	}
	red := p.Reductions()
	if len(red) != 1 || red[0].Reason != ByFirst || red[0].Depth != 1 {
		t.Fatalf("reductions %+v, want recording stopped at depth 1", red)
	}
	if lv.Dropped[ByFirst] != 1 {
		t.Errorf("dropped %v", lv.Dropped)
	}
	p.Finalize()
	if lv.Written() == 0 || lv.Revoked() != [NumReasons]uint64{} {
		t.Errorf("the top level lost its events: written %d, revoked %v", lv.Written(), lv.Revoked())
	}
}

// A leave always fits after its enter, whatever the pool does meanwhile.
func TestLeaveAlwaysFitsAfterEnter(t *testing.T) {
	p := newPool(t, 2, 256, PolicyFirst)
	h := p.NewHierarchy()
	lv := h.Level(1, ClassRegion)
	var tm uint64
	entered := 0
	for i := 0; i < 1000; i++ {
		tm += 1000 // large deltas: few records per bin
		if lv.Enter(tm, 0, 70) {
			entered++
			tm += 1 << 40
			if !lv.Leave(tm, 0, 70) {
				t.Fatalf("leave %d of a kept enter was dropped", i)
			}
		}
	}
	if entered == 0 || entered == 1000 {
		t.Fatalf("%d enters kept: the pool never filled", entered)
	}
}

func TestFinalizeSealsEverything(t *testing.T) {
	p := newPool(t, 8, 256, PolicyDepth)
	h := p.NewHierarchy()
	lv := h.Level(1, ClassRegion)
	lv.Enter(5, 0, 1)
	lv.Leave(9, 0, 1)
	p.Finalize()
	var recs uint32
	lv.Bins(func(data []byte, n uint32) {
		recs += n
		d := encode.NewDecoder(encode.All)
		if err := d.Reset(data); err != nil {
			t.Fatal(err)
		}
	})
	if recs != 2 || lv.Written() != 2 {
		t.Errorf("%d records in bins, %d written; want 2", recs, lv.Written())
	}
	if lv.Enter(10, 0, 1) {
		t.Error("enter accepted after Finalize")
	}
}
