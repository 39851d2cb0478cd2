package cshim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIFilterKeepsParadigms runs MPI ranks with a filter file that names
// MPI_Irecv and MPI_Isend, as the filter score -g wrote for HPCG before:
// the regions stay, with their request records inside them, and each rank
// says on stderr that it kept them.
func TestMPIFilterKeepsParadigms(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "immediate", "immediate.c")
	const np = 2
	ff := filepath.Join(t.TempDir(), "filter.txt")
	if err := os.WriteFile(ff, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Irecv MPI_Isend\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "hmb-out")
	_, errs := mpirun(t, np, out, []string{"HMB_FILTER_FILE=" + ff}, prog)
	for r, f := range rankFiles(t, out, "immediate", np) {
		for _, name := range []string{"MPI_Irecv", "MPI_Isend"} {
			if want := `mpi region "` + name + `": kept, as MPI and OpenMP regions are never filtered`; !strings.Contains(errs[r], want) {
				t.Errorf("rank %d: stderr lacks %q:\n%s", r, want, errs[r])
			}
		}
		inside := map[encode.Kind]int{} // request records by their innermost region's name
		var stack []string
		var e tracefile.Event
		for _, l := range f.Locations {
			if l.FilteredName != 0 {
				t.Errorf("rank %d, %s: %d events filtered by name", r, l.Name, l.FilteredName)
			}
			it := f.Events(l.ID)
			for it.Next(&e) {
				switch e.Kind {
				case encode.KindEnter:
					stack = append(stack, f.RegionName(e.Region))
				case encode.KindLeave:
					stack = stack[:len(stack)-1]
				case encode.KindIrecvRequest, encode.KindIsend:
					if len(stack) > 0 && (stack[len(stack)-1] == "MPI_Irecv") == (e.Kind == encode.KindIrecvRequest) &&
						(stack[len(stack)-1] == "MPI_Isend") == (e.Kind == encode.KindIsend) {
						inside[e.Kind]++
					} else {
						t.Errorf("rank %d: %v record in %v, not in its MPI region", r, e.Kind, stack)
					}
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if inside[encode.KindIrecvRequest] == 0 || inside[encode.KindIsend] == 0 {
			t.Errorf("rank %d: request records inside MPI_Irecv and MPI_Isend: %v; want some of each", r, inside)
		}
	}
}
