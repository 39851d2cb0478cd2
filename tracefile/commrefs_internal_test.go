package tracefile

import (
	"reflect"
	"slices"
	"testing"
)

// irregular returns the ranks below n whose number of set bits is even: a
// group without long runs.
func irregular(n int) []int32 {
	var rs []int32
	for r := 0; r < n; r++ {
		if c := popcount(r); c%2 == 0 {
			rs = append(rs, int32(r))
		}
	}
	return rs
}

func popcount(v int) (n int) {
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}

// Whatever COMM REFS holds, the reader fails cleanly; resolved against
// the groups it was written from, it gives back the communicators.
func FuzzCommRefs(f *testing.F) {
	world := iota32(0, 64, 1)
	split := irregular(64)
	cs := append(haloComms(world, 9, 8), Comm{ID: 6, Parent: 3, Members: split}, Comm{ID: 7, Parent: 6, Members: split},
		Comm{ID: 8, Parent: 1, Members: split[:10], Remote: split[10:]})
	groups := newRunGroups(&RunDefinitions{Comms: []RunComm{{Comm: Comm{Members: split}}, {Comm: Comm{Members: split[:10], Remote: split[10:]}}}})
	p, refd := encodeCommGroups(cs, true)
	if !refd {
		f.Fatal("an irregular group of 32 ranks was not referred to")
	}
	f.Add([]byte(p))
	f.Fuzz(func(t *testing.T, p []byte) {
		fl := sectionFields(p, 0, "COMM REFS")
		got, refs := decodeCommGroups(fl, true)
		if !fl.OK() {
			return
		}
		tr := &Trace{Comms: got}
		if err := groups.resolve(tr, refs); err != nil {
			return
		}
		if slices.Equal(p, encodeCommRefsOf(cs)) && !reflect.DeepEqual(tr.Comms, cs) {
			t.Fatalf("read back %+v, want %+v", tr.Comms, cs)
		}
	})
}

func encodeCommRefsOf(cs []Comm) []byte {
	p, _ := encodeCommGroups(cs, true)
	return p
}

// A group is referred to only when its runs take more than a reference:
// world, a row and a column stay runs whatever the run's size.
func TestCommRefsOnlyLongGroups(t *testing.T) {
	for _, n := range []int{16, 1024, 1 << 20} {
		world := iota32(0, n, 1)
		if _, refd := encodeCommGroups(haloComms(world, 3, 16), true); refd {
			t.Errorf("%d ranks: a halo's regular groups were referred to", n)
		}
	}
	cs := []Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: iota32(0, 1024, 1)}, {ID: 2, Parent: 1, Members: irregular(1024)}}
	p, refd := encodeCommGroups(cs, true)
	if !refd || len(p) > 64 {
		t.Errorf("an irregular group of 512 ranks: referred to %v, %d bytes", refd, len(p))
	}
	full, _ := encodeCommGroups(cs, false)
	if len(full) < 512 {
		t.Errorf("the same as COMM RUNS: %d bytes, want a byte or more per member", len(full))
	}
	fl := sectionFields(p, 0, "COMM REFS")
	got, refs := decodeCommGroups(fl, true)
	if !fl.OK() || len(refs) != 1 || got[1].Members != nil {
		t.Fatalf("decoded %+v, refs %+v, %v", got, refs, fl.Err())
	}
	tr := &Trace{Comms: got}
	if err := newRunGroups(&RunDefinitions{Comms: []RunComm{{Comm: cs[0]}}}).resolve(tr, refs); err == nil {
		t.Errorf("resolved against a run without the group")
	}
	if err := newRunGroups(&RunDefinitions{Comms: []RunComm{{Comm: cs[1]}}}).resolve(tr, refs); err != nil || !slices.Equal(tr.Comms[1].Members, cs[1].Members) {
		t.Errorf("resolved: %v, %v", tr.Comms[1].Members[:4], err)
	}
}
