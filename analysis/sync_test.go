package analysis

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/filter"
)

func TestDefaultSync(t *testing.T) {
	p, err := filter.ParsePatternList(DefaultSync)
	if err != nil {
		t.Fatalf("DefaultSync does not parse: %v", err)
	}
	if p.Len() != defaultSync.Len() || p.Len() < 20 {
		t.Fatalf("DefaultSync has %d patterns, defaultSync %d", p.Len(), defaultSync.Len())
	}
	var s SyncMatcher
	for _, name := range []string{"MPI_Wait", "MPI_Waitall", "MPI_Recv", "MPI_Sendrecv_replace", "MPI_Barrier",
		"MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Gatherv", "MPI_Alltoallw", "MPI_Win_fence",
		"!$omp barrier @heat.c:12", "!$omp implicit barrier @heat.c:40",
		"!$omp critical wait @heat.c:50", "!$omp taskwait @heat.c:60", "!$omp taskwait", "omp_set_lock", "omp_set_nest_lock"} {
		if !s.Match(name) {
			t.Errorf("%q is not a synchronization region", name)
		}
	}
	for _, name := range []string{"MPI_Send", "MPI_Isend", "MPI_Irecv", "MPI_Ireduce", "MPI_Init", "halo wait", "mpi_wait", "!$omp parallel @x.c:1",
		"!$omp critical @x.c:2", "!$omp taskgroup @x.c:3", "!$omp task @x.c:4", "omp_unset_lock"} {
		if s.Match(name) {
			t.Errorf("%q is taken as a synchronization region", name)
		}
	}
	extra, _ := filter.ParsePatternList("halo wait")
	if !(SyncMatcher{Extra: extra}).Match("halo wait") {
		t.Error("an extra pattern does not match")
	}
}

func TestIsTaskRun(t *testing.T) {
	for name, want := range map[string]bool{"!$omp task": true, "!$omp task @a.c:3": true,
		"!$omp taskwait": false, "!$omp taskgroup @a.c:4": false, "!$omp create task @a.c:3": false, "task": false} {
		if IsTaskRun(name) != want {
			t.Errorf("IsTaskRun(%q) = %v", name, !want)
		}
	}
}
