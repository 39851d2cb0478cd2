package tracefile_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ExampleRunDefinitions_RegionLabels unifies two ranks whose "work" are
// two functions (a.c:10 and b.c:5): the run has both, and the tools label
// them apart; each rank's id 2 maps to its own (Unified.Region).
func ExampleRunDefinitions_RegionLabels() {
	rank := func(r int, work tracefile.Region) *tracefile.File {
		work.ID = 2
		f := &tracefile.File{}
		f.Header.Rank = r
		f.Regions = []tracefile.Region{{ID: 1, Name: "main", File: "m.c", Line: 1}, work}
		return f
	}
	files := []*tracefile.File{rank(0, tracefile.Region{Name: "work", File: "a.c", Line: 10}),
		rank(1, tracefile.Region{Name: "work", File: "b.c", Line: 5})}
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		panic(err)
	}
	labels := u.Defs.RegionLabels()
	fmt.Println(labels)
	for i := range files {
		r, id := u.Region(i, 2)
		fmt.Printf("rank %d: region 2 is the run's %d, %s, at %s\n", i, id, labels[id-1], r.Source())
	}
	// Output:
	// [main work (a.c:10) work (b.c:5)]
	// rank 0: region 2 is the run's 2, work (a.c:10), at a.c:10
	// rank 1: region 2 is the run's 3, work (b.c:5), at b.c:5
}
