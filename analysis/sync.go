package analysis

import (
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
)

// DefaultSync lists the synchronization regions every analysis knows, as a
// pattern list (filter.ParsePatternList): the MPI calls that wait for other
// processes (waits, blocking receives, collectives, one-sided epochs) and
// the OpenMP waits as the adapter (cshim/openmp) names them: barriers,
// implicit ones included, the wait to enter a critical section, lock
// acquisition and taskwait. A taskgroup is not among them: its region holds
// its body too. A program's own waits are added with Options.Sync
// (hmbtrace variation -sync).
const DefaultSync = "MPI_Wait*, MPI_Recv, MPI_Sendrecv*, MPI_Probe, MPI_Mprobe, MPI_Ssend, " +
	"MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Reduce_scatter*, MPI_Allreduce, MPI_Scan, MPI_Exscan, " +
	"MPI_Gather*, MPI_Scatter*, MPI_Allgather*, MPI_Alltoall*, MPI_Neighbor_all*, " +
	"MPI_Win_fence, MPI_Win_wait, MPI_Win_complete, MPI_Win_lock*, " +
	`!$omp\ *barrier*, !$omp\ critical\ wait*, !$omp\ taskwait*, omp_set_lock, omp_set_nest_lock`

// defaultSync is DefaultSync parsed; sync_test.go checks that it parses.
var defaultSync, _ = filter.ParsePatternList(DefaultSync)

// SyncMatcher tells synchronization regions by name: DefaultSync or one of
// the extra patterns.
type SyncMatcher struct {
	Extra filter.Patterns
}

func (s SyncMatcher) Match(name string) bool {
	return defaultSync.Match(name) || s.Extra.Match(name)
}

// IsTaskRun tells the region of an explicit task's execution ("!$omp task
// @a.c:30"), which the adapter nests in the barrier or taskwait where the
// thread ran it: that time is work, not waiting.
func IsTaskRun(name string) bool {
	rest, ok := strings.CutPrefix(name, "!$omp task")
	return ok && (rest == "" || rest[0] == ' ')
}

// IsOpenMPName tells the regions the OpenMP adapter (cshim/openmp) names,
// also in files that do not record their paradigm.
func IsOpenMPName(name string) bool { return strings.HasPrefix(name, "!$omp ") }
