package tracefile

import (
	"testing"
	"time"
)

func TestRuns(t *testing.T) {
	t0 := time.Unix(1000, 0)
	file := func(name string, rank int, ref uint64, start time.Time) *File {
		return &File{Trace: Trace{Header: Header{Name: name, Rank: rank, ReferenceStart: ref, StartWall: start, Program: "./" + name}}}
	}
	other := file("a.out", 2, 0, t0.Add(time.Hour))
	other.Header.Program = "./a.out -other" // another run without MPI
	files := []*File{
		file("nekbone", 0, 50, t0.Add(time.Minute)),
		file("nekbone", 1, 50, t0.Add(time.Minute-time.Millisecond)),
		file("a.out", 0, 0, t0),
		file("coupler", 2, 50, t0.Add(time.Minute)), // another program of the MPI run
		file("a.out", 1, 0, t0),
		file("nekbone", 2, 40, t0), // an earlier MPI run of the same name
		other,
	}
	runs := Runs(files)
	type want struct {
		name  string
		files []int
		start time.Time
	}
	wants := []want{{"a.out", []int{2, 4}, t0}, {"nekbone", []int{5}, t0}, {"nekbone", []int{0, 1, 3}, t0.Add(time.Minute - time.Millisecond)}, {"a.out", []int{6}, t0.Add(time.Hour)}}
	if len(runs) != len(wants) {
		t.Fatalf("%d runs %+v, want %d", len(runs), runs, len(wants))
	}
	for i, w := range wants {
		r := runs[i]
		if r.Name != w.name || !r.Start.Equal(w.start) || len(r.Files) != len(w.files) || len(r.Ranks) != len(w.files) {
			t.Fatalf("run %d: %+v, want %+v", i, r, w)
		}
		for k, fi := range w.files {
			if r.Files[k] != fi || r.Ranks[k] != files[fi].Header.Rank {
				t.Errorf("run %d: files %v ranks %v, want files %v", i, r.Files, r.Ranks, w.files)
			}
		}
	}
	if a, b, ok := SameRank(files); !ok || a != 0 || b != 2 {
		t.Errorf("SameRank: %d, %d, %v; want 0, 2", a, b, ok)
	}
}
