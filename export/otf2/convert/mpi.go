package convert

import (
	"strings"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The MPI functions by name: the OTF2 collective operation of each MPI-3.1
// collective (blocking and non-blocking), and the region role of every MPI
// function OTF2 has a role for. Names are compared without case and without
// trailing underscores, so that the Fortran bindings' names (mpi_allreduce_)
// find the same entries.

type mpiFunc struct {
	role otf2.RegionRole
	op   otf2.CollectiveOp
	coll bool // op is meaningful
}

// mpiNormal is the key of an MPI function name in mpiFuncs.
func mpiNormal(name string) string {
	return strings.ToLower(strings.TrimRight(name, "_"))
}

// mpiFunction returns what is known of the MPI function name.
func mpiFunction(name string) (mpiFunc, bool) {
	f, ok := mpiFuncs[mpiNormal(name)]
	return f, ok
}

var mpiFuncs = func() map[string]mpiFunc {
	m := map[string]mpiFunc{}
	coll := func(role otf2.RegionRole, op otf2.CollectiveOp, names ...string) {
		for _, n := range names {
			// The non-blocking variant (MPI_Iallreduce) and the persistent
			// one of MPI 4 (MPI_Allreduce_init) are the same operation.
			for _, v := range []string{"mpi_" + n, "mpi_i" + n, "mpi_" + n + "_init"} {
				m[v] = mpiFunc{role: role, op: op, coll: true}
			}
		}
	}
	coll(otf2.RoleBarrier, otf2.CollBarrier, "barrier")
	coll(otf2.RoleCollOne2All, otf2.CollBcast, "bcast")
	coll(otf2.RoleCollOne2All, otf2.CollScatter, "scatter")
	coll(otf2.RoleCollOne2All, otf2.CollScatterv, "scatterv")
	coll(otf2.RoleCollAll2One, otf2.CollGather, "gather")
	coll(otf2.RoleCollAll2One, otf2.CollGatherv, "gatherv")
	coll(otf2.RoleCollAll2One, otf2.CollReduce, "reduce")
	coll(otf2.RoleCollAll2All, otf2.CollAllgather, "allgather")
	coll(otf2.RoleCollAll2All, otf2.CollAllgatherv, "allgatherv")
	coll(otf2.RoleCollAll2All, otf2.CollAlltoall, "alltoall")
	coll(otf2.RoleCollAll2All, otf2.CollAlltoallv, "alltoallv")
	coll(otf2.RoleCollAll2All, otf2.CollAlltoallw, "alltoallw")
	coll(otf2.RoleCollAll2All, otf2.CollAllreduce, "allreduce")
	coll(otf2.RoleCollAll2All, otf2.CollReduceScatter, "reduce_scatter")
	coll(otf2.RoleCollAll2All, otf2.CollReduceScatterBlock, "reduce_scatter_block")
	coll(otf2.RoleCollOther, otf2.CollScan, "scan")
	coll(otf2.RoleCollOther, otf2.CollExscan, "exscan")
	// OTF2 3.0 has no operations for the neighbourhood collectives: they
	// take the operation that moves the same data among the neighbours.
	coll(otf2.RoleCollOther, otf2.CollAllgather, "neighbor_allgather")
	coll(otf2.RoleCollOther, otf2.CollAllgatherv, "neighbor_allgatherv")
	coll(otf2.RoleCollOther, otf2.CollAlltoall, "neighbor_alltoall")
	coll(otf2.RoleCollOther, otf2.CollAlltoallv, "neighbor_alltoallv")
	coll(otf2.RoleCollOther, otf2.CollAlltoallw, "neighbor_alltoallw")

	role := func(r otf2.RegionRole, names ...string) {
		for _, n := range names {
			m["mpi_"+n] = mpiFunc{role: r}
		}
	}
	role(otf2.RolePoint2Point,
		"send", "bsend", "ssend", "rsend", "recv", "sendrecv", "sendrecv_replace",
		"isend", "ibsend", "issend", "irsend", "irecv",
		"send_init", "bsend_init", "ssend_init", "rsend_init", "recv_init", "start", "startall",
		"wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome",
		"probe", "iprobe", "mprobe", "improbe", "mrecv", "imrecv", "cancel", "request_free",
		"request_get_status", "test_cancelled")
	role(otf2.RoleRMA,
		"put", "get", "accumulate", "get_accumulate", "fetch_and_op", "compare_and_swap",
		"rput", "rget", "raccumulate", "rget_accumulate",
		"win_lock", "win_unlock", "win_lock_all", "win_unlock_all", "win_flush", "win_flush_all",
		"win_flush_local", "win_flush_local_all", "win_sync", "win_post", "win_start",
		"win_complete", "win_wait", "win_test")
	// Window creation and fences synchronise the window's processes.
	role(otf2.RoleCollOther, "win_create", "win_allocate", "win_allocate_shared", "win_create_dynamic", "win_free")
	role(otf2.RoleBarrier, "win_fence")
	role(otf2.RoleFileIOMetadata, "file_open", "file_close", "file_delete", "file_set_size",
		"file_preallocate", "file_set_view", "file_set_info", "file_set_atomicity", "file_sync")
	for _, n := range []string{"read", "write"} {
		for _, v := range []string{"", "_at", "_all", "_at_all", "_shared", "_ordered",
			"_all_begin", "_all_end", "_at_all_begin", "_at_all_end", "_ordered_begin", "_ordered_end"} {
			m["mpi_file_"+n+v] = mpiFunc{role: otf2.RoleFileIO}
		}
		for _, v := range []string{"i", "i_at", "i_all", "i_at_all", "i_shared"} {
			m["mpi_file_"+v[:1]+n+v[1:]] = mpiFunc{role: otf2.RoleFileIO}
		}
	}
	role(otf2.RoleFileIO, "file_seek", "file_seek_shared")
	return m
}()

// regionKind gives the OTF2 role and paradigm of a region by its name and
// its paradigm in the trace: the MPI functions (marked so, or any "MPI_"
// name) belong to the MPI paradigm, with their role where OTF2 has one, so
// that OTF2 tools colour and group them as MPI.
func regionKind(name string, p tracefile.Paradigm) (otf2.RegionRole, otf2.Paradigm) {
	if p == tracefile.ParadigmMPI || strings.HasPrefix(strings.ToUpper(name), "MPI_") {
		if f, ok := mpiFunction(name); ok {
			return f.role, otf2.ParadigmMPI
		}
		return otf2.RoleFunction, otf2.ParadigmMPI
	}
	switch p {
	case tracefile.ParadigmCompiler:
		return otf2.RoleFunction, otf2.ParadigmCompiler
	case tracefile.ParadigmOpenMP:
		return ompRole(name), otf2.ParadigmOpenMP
	}
	return otf2.RoleFunction, otf2.ParadigmUser
}
