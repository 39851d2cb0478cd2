package convert

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func TestRegionKind(t *testing.T) {
	for _, c := range []struct {
		name string
		p    tracefile.Paradigm
		role otf2.RegionRole
		par  otf2.Paradigm
	}{
		{"solve", tracefile.ParadigmUser, otf2.RoleFunction, otf2.ParadigmUser},
		{"solve", tracefile.ParadigmCompiler, otf2.RoleFunction, otf2.ParadigmCompiler},
		{"!$omp parallel", tracefile.ParadigmOpenMP, otf2.RoleParallel, otf2.ParadigmOpenMP},
		{"!$omp scope @a.c:3", tracefile.ParadigmOpenMP, otf2.RoleCode, otf2.ParadigmOpenMP},
		{"MPI_Isend", tracefile.ParadigmUser, otf2.RolePoint2Point, otf2.ParadigmMPI},
		{"mpi_waitall_", tracefile.ParadigmMPI, otf2.RolePoint2Point, otf2.ParadigmMPI},
		{"MPI_Win_fence", tracefile.ParadigmMPI, otf2.RoleBarrier, otf2.ParadigmMPI},
		{"MPI_Put", tracefile.ParadigmMPI, otf2.RoleRMA, otf2.ParadigmMPI},
		{"MPI_File_write_at_all", tracefile.ParadigmMPI, otf2.RoleFileIO, otf2.ParadigmMPI},
		{"MPI_File_iread_at", tracefile.ParadigmMPI, otf2.RoleFileIO, otf2.ParadigmMPI},
		{"MPI_File_open", tracefile.ParadigmMPI, otf2.RoleFileIOMetadata, otf2.ParadigmMPI},
		{"MPI_Comm_split", tracefile.ParadigmMPI, otf2.RoleFunction, otf2.ParadigmMPI},
		{"PMPI_Send", tracefile.ParadigmMPI, otf2.RoleFunction, otf2.ParadigmMPI}, // marked MPI, name unknown
		{"MPI_Ialltoallw", tracefile.ParadigmUser, otf2.RoleCollAll2All, otf2.ParadigmMPI},
		{"MPI_Neighbor_allgather", tracefile.ParadigmUser, otf2.RoleCollOther, otf2.ParadigmMPI},
	} {
		role, par := regionKind(c.name, c.p)
		if role != c.role || par != c.par {
			t.Errorf("regionKind(%q, %d) = %d, %d; want %d, %d", c.name, c.p, role, par, c.role, c.par)
		}
	}
}
