package measure

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// Probes into closed depths count their events at the depth and for the
// reason of the closure, whether the level was made before the closure
// (cached by the location) or first reached after it, and the flat profile
// still counts every visit.
func TestClosedProbeCounts(t *testing.T) {
	m := startTest(t, Config{BufferSize: 1 << 20, NoThrottle: true})
	main, a, b, c := m.Region("main"), m.Region("a"), m.Region("b"), m.Region("c")
	loc := m.Location("l")
	loc.Enter(main)
	loc.Enter(a) // depths 2 and 3 exist before the closure
	loc.Enter(b)
	loc.Leave(b)
	loc.Leave(a)
	if err := m.CloseDepth(2); err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := 0; i < n; i++ {
		loc.Enter(a)
		loc.Enter(b)
		loc.Enter(c) // depth 4: its level is made by the first drop
		loc.Leave(c)
		loc.Leave(b)
		loc.Leave(a)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		loc.Enter(a)
		loc.Enter(b)
		loc.Leave(b)
		loc.Leave(a)
	}); allocs != 0 {
		t.Errorf("%v allocations per closed iteration", allocs)
	}
	loc.Leave(main)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	const extra = 101 * 4 // AllocsPerRun's iterations, one of them a warm-up
	if want := uint64(2 + 4 + 6*n + extra); st.Recorded != want || st.Kept != 2 {
		t.Errorf("recorded %d, kept %d; want %d, 2", st.Recorded, st.Kept, want)
	}
	want := map[int]uint64{2: 2 + 2*n + extra/2, 3: 2 + 2*n + extra/2, 4: 2 * n}
	if len(st.Depths) != 5 {
		t.Fatalf("stats of depths %v, want 0 to 4", st.Depths)
	}
	for _, d := range st.Depths {
		if d.Depth < 2 {
			continue
		}
		var other uint64
		for r, v := range d.Removed {
			if r != int(buffer.ByDepth) {
				other += v
			}
		}
		if d.Removed[buffer.ByDepth] != want[d.Depth] || other != 0 || d.Kept != 0 {
			t.Errorf("depth %d: kept %d, removed %v; want %d removed by depth", d.Depth, d.Kept, d.Removed, want[d.Depth])
		}
	}
	visits := map[uint32]uint64{}
	for _, p := range openTrace(t, m).Locations[0].Profile {
		visits[p.Region] = p.Visits
	}
	wantVisits := map[Region]uint64{main: 1, a: 1 + n + 101, b: 1 + n + 101, c: n}
	for r, v := range wantVisits {
		if visits[uint32(r)] != v {
			t.Errorf("region %d: %d visits in the profile, want %d", r, visits[uint32(r)], v)
		}
	}
}
