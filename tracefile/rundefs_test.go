package tracefile

import (
	"fmt"
	"slices"
	"testing"
)

// rankTraces makes the definitions of a run of p ranks: every rank defines
// main and MPI_Allreduce, world, self and a duplicate of world; the even
// ranks also MPI_Bcast (a region only some ranks entered) and a
// communicator of the even ranks (one only some ranks made), and rank 1
// a location of its own and a metric.
func rankTraces(p int) []*File {
	var even []int32
	for r := 0; r < p; r += 2 {
		even = append(even, int32(r))
	}
	world := make([]int32, p)
	for r := range world {
		world[r] = int32(r)
	}
	var files []*File
	for r := 0; r < p; r++ {
		t := Trace{Header: Header{Rank: r, Metrics: []string{"cycles"}}}
		t.Regions = []Region{{ID: 1, Name: "main", File: "halo.c", Line: 60}, {ID: 2, Name: "MPI_Allreduce", Paradigm: ParadigmMPI}}
		t.Comms = []Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: world}, {ID: 2, Name: "MPI_COMM_SELF", Members: []int32{int32(r)}},
			{ID: 3, Parent: 1, Members: world}}
		t.Locations = []Location{{ID: 1, Name: fmt.Sprintf("rank %d", r)}}
		if r%2 == 0 {
			// Defined in another order than the others' regions.
			t.Regions = append([]Region{{ID: 3, Name: "MPI_Bcast", Paradigm: ParadigmMPI}}, t.Regions...)
			t.Comms = append(t.Comms, Comm{ID: 4, Parent: 3, Members: even})
		}
		if r == 1 {
			t.Locations = append(t.Locations, Location{ID: 2, Name: "rank 1 thread 1"})
			t.Header.Metrics = append(t.Header.Metrics, "instructions")
		}
		files = append(files, &File{Trace: t})
	}
	return files
}

// treeMerge merges the ranks' definitions as the collective end does: a
// binomial tree, each rank merging its children's (r + step) into its own.
func treeMerge(t *testing.T, files []*File) *RunDefinitions {
	p := len(files)
	parts := make([]*RunDefinitions, p)
	for r, f := range files {
		parts[r] = &RunDefinitions{}
		parts[r].Add(&f.Trace)
		// Each part travels in its binary form.
		b, err := parts[r].MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		parts[r] = &RunDefinitions{}
		if err := parts[r].UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	for step := 1; step < p; step <<= 1 {
		for r := 0; r+step < p; r += 2 * step {
			parts[r].Merge(parts[r+step])
		}
	}
	return parts[0]
}

func TestRunDefinitionsTreeEqualsNames(t *testing.T) {
	for _, p := range []int{1, 2, 3, 8, 13} {
		files := rankTraces(p)
		tree, byName := treeMerge(t, files), UnifyDefinitions(files)
		if !tree.Equal(byName) {
			t.Errorf("%d ranks: the tree's tables\n%+v\nby name\n%+v", p, tree, byName)
		}
		names := func(d *RunDefinitions) (out []string) {
			for _, r := range d.Regions {
				out = append(out, r.Name)
			}
			return out
		}
		want := []string{"MPI_Bcast", "main", "MPI_Allreduce"}
		if got := names(tree); !slices.Equal(got, want) {
			t.Errorf("%d ranks: regions %v, want %v (each once, in the order rank 0 defined them)", p, got, want)
		}
		// world, self, world's duplicate, the even ranks'.
		if len(tree.Comms) != 4 {
			t.Fatalf("%d ranks: %d communicators, want 4: %+v", p, len(tree.Comms), tree.Comms)
		}
		self, dup, even := tree.Comms[1], tree.Comms[2], tree.Comms[3]
		if self.Name != "MPI_COMM_SELF" || self.Members != nil {
			t.Errorf("%d ranks: self %+v, want one MPI_COMM_SELF without members", p, self)
		}
		if dup.Parent != 1 || dup.Seq != 1 || len(dup.Members) != p {
			t.Errorf("%d ranks: world's duplicate %+v, want parent 1, seq 1, %d members", p, dup, p)
		}
		if even.Parent != 3 || len(even.Members) != (p+1)/2 {
			t.Errorf("%d ranks: the even ranks' %+v, want parent 3, %d members", p, even, (p+1)/2)
		}
		if want := p + min(p-1, 1); len(tree.Locations) != want {
			t.Errorf("%d ranks: %d locations, want %d", p, len(tree.Locations), want)
		}
		if want := min(p, 2); len(tree.Metrics) != want {
			t.Errorf("%d ranks: metrics %v", p, tree.Metrics)
		}
		// A rank's ids map to the definitions of the same key.
		for _, f := range files {
			m := tree.Map(&f.Trace)
			for _, r := range f.Regions {
				u := tree.Regions[m.Regions[r.ID]-1]
				if u.Name != r.Name || u.Paradigm != r.Paradigm || u.File != r.File {
					t.Errorf("rank %d: region %d %q maps to %+v", f.Header.Rank, r.ID, r.Name, u)
				}
			}
			for _, c := range f.Comms {
				u := tree.Comms[m.Comms[c.ID]-1]
				if c.Name == "MPI_COMM_SELF" {
					if u.Name != c.Name {
						t.Errorf("rank %d: self maps to %+v", f.Header.Rank, u)
					}
				} else if !slices.Equal(u.Members, c.Members) {
					t.Errorf("rank %d: communicator %d maps to %+v", f.Header.Rank, c.ID, u)
				}
			}
			for _, l := range f.Locations {
				if u := tree.Locations[m.Locs[l.ID]-1]; u.Name != l.Name || u.Rank != f.Header.Rank {
					t.Errorf("rank %d: location %d maps to %+v", f.Header.Rank, l.ID, u)
				}
			}
		}
	}
}

// TestRunDefinitionsCompact: world at 10^4 ranks is a run, the tables'
// bytes do not grow with ranks squared.
func TestRunDefinitionsCompact(t *testing.T) {
	small, err := treeMerge(t, rankTraces(16)).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	d := UnifyDefinitions(rankTraces(10_000))
	big, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The locations grow with the ranks (about 12 bytes each); the
	// communicators do not.
	if per := float64(len(big)-len(small)) / (10_000 - 16); per > 16 {
		t.Errorf("%d bytes at 16 ranks, %d at 10^4: %.1f bytes per rank, want at most 16", len(small), len(big), per)
	}
}

// TestRunDefinitionsCorrupt: every truncation and every flipped byte of
// the binary form is an error or a valid table, never a panic.
func TestRunDefinitionsCorrupt(t *testing.T) {
	b, err := UnifyDefinitions(rankTraces(5)).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		var d RunDefinitions
		if err := d.UnmarshalBinary(b[:n]); err == nil {
			t.Errorf("%d of %d bytes read without an error", n, len(b))
		}
	}
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0xff
		var d RunDefinitions
		d.UnmarshalBinary(c)
	}
	var d RunDefinitions
	if err := d.UnmarshalBinary(append([]byte{9}, b[1:]...)); err == nil {
		t.Error("version 9 read without an error")
	}
}
