package convert

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2"
)

func TestRegionKind(t *testing.T) {
	for _, c := range []struct {
		name string
		p    regionParadigm
		role otf2.RegionRole
		par  otf2.Paradigm
	}{
		{"solve", paradigmUser, otf2.RoleFunction, otf2.ParadigmUser},
		{"solve", paradigmCompiler, otf2.RoleFunction, otf2.ParadigmCompiler},
		{"!$omp parallel", paradigmOpenMP, otf2.RoleCode, otf2.ParadigmOpenMP},
		{"MPI_Isend", paradigmUser, otf2.RolePoint2Point, otf2.ParadigmMPI},
		{"mpi_waitall_", paradigmMPI, otf2.RolePoint2Point, otf2.ParadigmMPI},
		{"MPI_Win_fence", paradigmMPI, otf2.RoleBarrier, otf2.ParadigmMPI},
		{"MPI_Put", paradigmMPI, otf2.RoleRMA, otf2.ParadigmMPI},
		{"MPI_File_write_at_all", paradigmMPI, otf2.RoleFileIO, otf2.ParadigmMPI},
		{"MPI_File_iread_at", paradigmMPI, otf2.RoleFileIO, otf2.ParadigmMPI},
		{"MPI_File_open", paradigmMPI, otf2.RoleFileIOMetadata, otf2.ParadigmMPI},
		{"MPI_Comm_split", paradigmMPI, otf2.RoleFunction, otf2.ParadigmMPI},
		{"PMPI_Send", paradigmMPI, otf2.RoleFunction, otf2.ParadigmMPI}, // marked MPI, name unknown
		{"MPI_Ialltoallw", paradigmUser, otf2.RoleCollAll2All, otf2.ParadigmMPI},
		{"MPI_Neighbor_allgather", paradigmUser, otf2.RoleCollOther, otf2.ParadigmMPI},
	} {
		role, par := regionKind(c.name, c.p)
		if role != c.role || par != c.par {
			t.Errorf("regionKind(%q, %d) = %d, %d; want %d, %d", c.name, c.p, role, par, c.role, c.par)
		}
	}
}
