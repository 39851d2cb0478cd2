package waitstate_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
)

// The patterns are metrics: a profile writer (CUBE4) names them by
// Metric and nests them by Parent.
func ExamplePattern() {
	for p := waitstate.Pattern(0); p < waitstate.NumPatterns; p++ {
		parent := ""
		if q, ok := p.Parent(); ok {
			parent = " (in " + q.Metric() + ")"
		}
		fmt.Printf("%s: %s%s\n", p.Metric(), p, parent)
	}
	// Output:
	// mpi_latesender: Late Sender
	// mpi_latesender_wo: Late Sender, wrong order (in mpi_latesender)
	// mpi_latereceiver: Late Receiver
	// mpi_wait_nxn: Wait at N x N
	// mpi_barrier_wait: Wait at Barrier
	// mpi_latebroadcast: Late Broadcast
	// mpi_earlyreduce: Early Reduce
	// omp_ebarrier_wait: OpenMP wait at explicit barrier
	// omp_ibarrier_wait: OpenMP wait at implicit barrier
}

// A Result's values are read per (pattern, region, location), as the cells
// of a profile with the pattern as its metric.
func ExampleResult_Time() {
	r := &waitstate.Result{
		Locations: []waitstate.Location{{Rank: 0, Name: "rank 0"}, {Rank: 1, Name: "rank 1"}},
		Total:     2_000_000,
		Values: []waitstate.Value{
			{Pattern: waitstate.LateSender, Region: "MPI_Recv", Loc: 1, Time: 150_000, Count: 3},
			{Pattern: waitstate.WaitNxN, Region: "MPI_Allreduce", Loc: 0, Time: 50_000, Count: 1},
		},
	}
	r.Totals[waitstate.LateSender] = 150_000
	fmt.Println(r.Time(waitstate.LateSender, "MPI_Recv", 1), r.Time(waitstate.LateSender, "MPI_Recv", 0))
	fmt.Println(r.ByLocation(waitstate.WaitNxN))
	fmt.Printf("%.1f%%\n", 100*r.Share(waitstate.LateSender))
	// Output:
	// 150000 0
	// [50000 0]
	// 7.5%
}

// Causes sums a Result's delay costs per (pattern, call path, late
// location), short-term and long-term, the largest first: which region on
// which rank made the others wait.
func ExampleResult_Causes() {
	r := &waitstate.Result{
		Locations: []waitstate.Location{{Rank: 0, Name: "rank 0"}, {Rank: 1, Name: "rank 1"}, {Rank: 2, Name: "rank 2"}},
		Paths:     []waitstate.CallPath{{Parent: -1, Region: "main"}, {Parent: 0, Region: "compute"}, {Parent: 0, Region: "MPI_Recv"}},
		DelayCosts: []waitstate.DelayCost{
			{Pattern: waitstate.LateSender, Region: "compute", Path: 1, Loc: 0, Time: 400},
			{Pattern: waitstate.LateSender, Region: "MPI_Recv", Path: 2, Loc: 1, Time: 20},
			{Pattern: waitstate.LateSender, LongTerm: true, Region: "compute", Path: 1, Loc: 0, Time: 400},
		},
	}
	for _, c := range r.Causes() {
		fmt.Printf("%s on %s: %d ns directly, %d ns through the waits it propagated (%v)\n",
			r.PathName(c.Path), r.Locations[c.Loc].Name, c.Short, c.Long, c.Pattern)
	}
	// Output:
	// main > compute on rank 0: 400 ns directly, 400 ns through the waits it propagated (Late Sender)
	// main > MPI_Recv on rank 1: 20 ns directly, 0 ns through the waits it propagated (Late Sender)
}

// The ranks' parts of the replay in-situ merge, in rank order, into the
// run's, whose Result the renderers take: each part's call paths are
// unified by name, its locations follow the earlier parts'.
func ExampleInSitu_Merge() {
	rank0 := &waitstate.InSitu{
		Locations: []waitstate.Location{{File: 0, Rank: 0, Name: "rank 0"}},
		Paths:     []waitstate.CallPath{{Parent: -1, Region: "main"}, {Parent: 0, Region: "MPI_Allreduce"}},
		Values:    []waitstate.Value{{Pattern: waitstate.WaitNxN, Region: "MPI_Allreduce", Path: 1, Loc: 0, Time: 4_000_000, Count: 2}},
		Total:     50_000_000, Synced: true,
	}
	rank1 := &waitstate.InSitu{
		Locations: []waitstate.Location{{File: 1, Rank: 1, Name: "rank 1"}},
		Paths:     []waitstate.CallPath{{Parent: -1, Region: "main"}, {Parent: 0, Region: "MPI_Recv"}, {Parent: 0, Region: "MPI_Allreduce"}},
		Values: []waitstate.Value{
			{Pattern: waitstate.LateSender, Region: "MPI_Recv", Path: 1, Loc: 0, Time: 1_500_000, Count: 3},
			{Pattern: waitstate.WaitNxN, Region: "MPI_Allreduce", Path: 2, Loc: 0, Time: 1_000_000, Count: 2},
		},
		Total: 50_000_000, Synced: true,
	}
	rank0.Merge(rank1)
	r := rank0.Result()
	for _, v := range r.Values {
		fmt.Printf("%v in %s on %s: %d ns\n", v.Pattern, r.PathName(v.Path), r.Locations[v.Loc].Name, v.Time)
	}
	fmt.Printf("Wait at N x N: %.1f%% of the run\n", 100*r.Share(waitstate.WaitNxN))
	// Output:
	// Late Sender in main > MPI_Recv on rank 1: 1500000 ns
	// Wait at N x N in main > MPI_Allreduce on rank 0: 4000000 ns
	// Wait at N x N in main > MPI_Allreduce on rank 1: 1000000 ns
	// Wait at N x N: 5.0% of the run
}
