package buffer

import "testing"

// Level.Drop, the probes' count of an event of a closed level, counts it
// for the reason DropReason gives, for every class and depth, before and
// after a closure and after the pool is finalized.
func TestDropCountsDropReason(t *testing.T) {
	p := newPool(t, 16, 256, PolicyDepth)
	h := p.NewHierarchy()
	check := func(when string, want func(d int, c Class) Reason) {
		t.Helper()
		for d := 1; d <= 4; d++ {
			for c := Class(0); c < NumClasses; c++ {
				lv := h.Level(d, c)
				before := lv.Dropped
				lv.Drop()
				r := h.DropReason(d, c)
				if w := want(d, c); r != w {
					t.Errorf("%s: depth %d class %v: DropReason %v, want %v", when, d, c, r, w)
				}
				after := before
				after[r]++
				if lv.Dropped != after {
					t.Errorf("%s: depth %d class %v: Drop made %v of %v, want %v", when, d, c, lv.Dropped, before, after)
				}
			}
		}
	}
	check("open", func(int, Class) Reason { return NoBin })
	// Each group's own limit, as the depth policy may leave them: the
	// level reads its class's.
	h.Limit, h.PLimit, h.MLimit = 2, 3, 4
	check("limits 2, 3, 4", func(d int, c Class) Reason {
		limit := map[int]int{groupCompute: 2, groupParadigm: 3, groupComm: 4}[classGroup(c)]
		if d >= limit {
			return ByDepth
		}
		return NoBin
	})
	p.CloseFrom(3, 1)
	h.Sync()
	check("depth 3 closed", func(d int, _ Class) Reason {
		if d >= 3 {
			return ByDepth
		}
		return NoBin
	})
	p.Finalize()
	h.Sync()
	check("finalized", func(int, Class) Reason { return NoBin })
}
