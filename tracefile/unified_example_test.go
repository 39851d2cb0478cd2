package tracefile_test

import (
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ExampleReadUnified reads a run's definitions as the tools take them:
// the tables the ranks unified at the collective end, from the run's
// archive, and how each rank's ids (those its events name) map to them.
func ExampleReadUnified() {
	dir, err := os.MkdirTemp("", "unified")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// Four ranks of a halo code, each also in one of two irregular halves.
	const ranks = 4
	paths, err := tracetest.WriteArchive(dir, "halo", ranks, ranks, func(r int) *tracetest.Builder {
		b := tracetest.HaloRank("halo", r, ranks, 2)
		tracetest.HaloSplit(b, r, ranks)
		return b
	})
	if err != nil {
		panic(err)
	}
	a, err := tracefile.OpenArchive(paths[0])
	if err != nil {
		panic(err)
	}
	defer a.Close()
	var files []*tracefile.File
	for i := range a.Slots {
		f, err := a.OpenRank(i)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		panic(err)
	}
	fmt.Println("the run's tables:", u.FromRun)
	fmt.Println("communicators:", len(u.Defs.Comms))
	for i, f := range files {
		const split = 6 // each rank's sixth communicator: its half
		c := u.Defs.Comms[u.Maps[i].Comms[split]-1]
		fmt.Printf("rank %d: communicator %d is the run's %d, ranks %v\n", f.Header.Rank, split, c.ID, c.Members)
	}
	// Output:
	// the run's tables: true
	// communicators: 9
	// rank 0: communicator 6 is the run's 6, ranks [0 3]
	// rank 1: communicator 6 is the run's 8, ranks [1 2]
	// rank 2: communicator 6 is the run's 8, ranks [1 2]
	// rank 3: communicator 6 is the run's 6, ranks [0 3]
}
