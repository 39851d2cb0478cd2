package cshim_test

import (
	"path/filepath"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIGeneralizedRequests runs testdata/mpi/grequest.c: MPI_Wait and
// MPI_Test on point-to-point requests are recorded whole when they return,
// but not on a generalized request, whose query callback runs inside the
// call: its region must lie inside the MPI_Wait or MPI_Test that ran it,
// and every completion's record right before its call's leave.
func TestMPIGeneralizedRequests(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "grequest", "grequest.c")
	const rounds = 40
	for _, env := range [][]string{nil, {"HMB_C_PROBE=staged"}} {
		name := "direct"
		if env != nil {
			name = "staged"
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hmb-out")
			mpirun(t, 1, out, env, prog, "40")
			f := rankFiles(t, out, "grequest", 1)[0]
			var queries, completions int
			for _, l := range f.Locations {
				q, c := grequestEvents(t, f, &l)
				queries += q
				completions += c
			}
			if queries != rounds {
				t.Errorf("%d calls of query, want %d", queries, rounds)
			}
			if completions != 2*rounds {
				t.Errorf("%d point-to-point completions, want %d", completions, 2*rounds)
			}
		})
	}
}

// grequestEvents checks location l's events and returns its calls of
// query and its completion records.
func grequestEvents(t *testing.T, f *tracefile.File, l *tracefile.Location) (queries, completions int) {
	t.Helper()
	var (
		e     tracefile.Event
		stack []string
		held  bool
	)
	it := f.Events(l.ID)
	for n := 0; it.Next(&e); n++ {
		if held && e.Kind != encode.KindLeave {
			t.Fatalf("event %d: %v after a completion, want its call's leave", n, e.Kind)
		}
		held = false
		switch e.Kind {
		case encode.KindEnter:
			name := f.RegionName(e.Region)
			if name == "query" {
				queries++
				if len(stack) == 0 || (stack[len(stack)-1] != "MPI_Wait" && stack[len(stack)-1] != "MPI_Test") {
					t.Fatalf("event %d: query entered in %v, want inside MPI_Wait or MPI_Test", n, stack)
				}
			}
			stack = append(stack, name)
		case encode.KindLeave:
			stack = stack[:len(stack)-1]
		case encode.KindIsendComplete, encode.KindIrecv:
			completions++
			if top := stack[len(stack)-1]; top != "MPI_Wait" && top != "MPI_Test" {
				t.Fatalf("event %d: %v in %s", n, e.Kind, top)
			}
			held = true
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return queries, completions
}
