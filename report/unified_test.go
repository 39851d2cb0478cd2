package report

import (
	"slices"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The page's regions and communicators are the run's (tracefile.
// ReadUnified): "work" of a.c:10 on rank 0 and of b.c:5 on rank 1 are two
// regions, labelled by their source, not one; "only", defined on rank 2
// alone, is one; the communicator ranks 0 and 1 made, and rank 2 did not,
// has one key on both members, and the world one on every rank.
func TestRunUnifiedDefinitions(t *testing.T) {
	dir := t.TempDir()
	type reg struct {
		name, file string
		line       int
	}
	ranks := [][]reg{
		{{"main", "m.c", 1}, {"work", "a.c", 10}},
		{{"main", "m.c", 1}, {"work", "b.c", 5}},
		{{"main", "m.c", 1}, {"only", "o.c", 3}},
	}
	var files []*tracefile.File
	var pairs []uint32
	for rank, regs := range ranks {
		b := tracetest.NewBuilder("run", "node", rank, time.Unix(1700000000, 0))
		for i, r := range regs {
			b.Trace.Regions = append(b.Trace.Regions, tracefile.Region{ID: uint32(i + 1), Name: r.name, File: r.file, Line: r.line})
		}
		world := b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
		if rank < 2 {
			// Rank 1 made another communicator first: ids differ.
			if rank == 1 {
				b.Comm("MPI_COMM_SELF", 0, []int32{1}, nil)
			}
			pairs = append(pairs, b.Comm("pair", world, []int32{0, 1}, nil))
		}
		l := b.Location("main")
		l.Enter(10, 1)
		l.Enter(20, 2)
		l.Leave(30)
		l.Leave(50)
		files = append(files, b.Write(t, dir))
	}
	r := testRun(t, files)
	want := []string{"main", "work (a.c:10)", "work (b.c:5)", "only"}
	if !slices.Equal(r.regions, want) {
		t.Errorf("regions %q, want %q", r.regions, want)
	}
	for i, f := range files {
		for id, label := range []string{"main", []string{"work (a.c:10)", "work (b.c:5)", "only"}[i]} {
			if got, ok := r.lookup(i, uint32(id+1)); !ok || r.regions[got] != label {
				t.Errorf("rank %d's region %d is %d (%v), want %q", i, id+1, got, ok, label)
			}
		}
		if k := r.commKey(i, 1); k != r.commKey(0, 0) || k < 0 {
			t.Errorf("%s: world's key %d, want %d on every rank", f.Path, k, r.commKey(0, 0))
		}
	}
	if a, b := r.commKey(0, pairs[0]), r.commKey(1, pairs[1]); a != b || a < 0 || a == r.commKey(0, 0) {
		t.Errorf("pair's keys %d on rank 0, %d on rank 1: want one, not the world's %d", a, b, r.commKey(0, 0))
	}
	if k := r.commKey(2, 2); k != -1 {
		t.Errorf("rank 2's undefined communicator 2: key %d, want -1", k)
	}
}
