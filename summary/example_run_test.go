package summary_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Each rank computes its own profile from its statistics (here, a trace
// with one location that spent rank+1 µs in "solve"); the ranks merge
// them in any order, and the result is the run's: sums, and the spread
// over the ranks with the slowest one.
func ExampleRunProfile_Merge() {
	rank := func(r int) summary.RunProfile {
		t := &tracefile.Trace{
			Header:    tracefile.Header{Name: "run", TicksPerSecond: 1e9, EndTicks: 10_000},
			Regions:   []tracefile.Region{{ID: 1, Name: "solve"}},
			Locations: []tracefile.Location{{Name: "main", Profile: []tracefile.ProfileEntry{{Region: 1, Visits: 1, Inclusive: uint64(r+1) * 1000}}}},
		}
		return summary.Local(t, r)
	}
	var run summary.RunProfile
	for _, r := range []int{2, 0, 3, 1} {
		p := rank(r)
		run.Merge(&p)
	}
	solve := &run.Regions[0]
	lo, mean, hi := run.Spread(solve.Inclusive, solve.Ranks)
	fmt.Printf("%d ranks; %s: %d ns in all, %d to %d ns per rank (mean %.0f), slowest rank %d\n",
		run.Ranks.Len(), solve.Name, solve.Inclusive.Sum, lo, hi, mean, run.SlowestRank(solve))
	data, _ := run.MarshalBinary()
	var back summary.RunProfile
	if err := back.UnmarshalBinary(data); err != nil {
		fmt.Println(err)
	}
	fmt.Println("decoded:", back.Regions[0].Inclusive == solve.Inclusive)
	// Output:
	// 4 ranks; solve: 10000 ns in all, 1000 to 4000 ns per rank (mean 2500), slowest rank 3
	// decoded: true
}
