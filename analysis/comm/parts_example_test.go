package comm_test

import (
	"fmt"
	"log"
	"os"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The matrix as the ranks of an MPI run make it at MPI_Finalize: each its
// own part, gathered, resolved at the root. Here three ranks' traces in
// one process, each sending 100 bytes to the next rank of a ring.
func ExampleFromParts() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	var parts []comm.Part
	for rank := 0; rank < 3; rank++ {
		m, err := measure.Start(measure.Config{Output: dir, Name: "ring", Rank: rank, IgnoreEnv: true})
		if err != nil {
			log.Fatal(err)
		}
		world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
		l := m.Location("main")
		l.SendRankComm((rank+1)%3, 0, 100, world)
		l.RecvRankComm((rank+2)%3, 0, 100, world)
		if err := m.Close(); err != nil {
			log.Fatal(err)
		}
		f, err := tracefile.Open(m.Path())
		if err != nil {
			log.Fatal(err)
		}
		p, err := comm.Local(f) // on the rank, from its own trace
		f.Close()
		if err != nil {
			log.Fatal(err)
		}
		parts = append(parts, p)
	}
	m := comm.FromParts(parts) // at the root of the tree
	for _, c := range m.Cells {
		fmt.Printf("%s -> %s: %d messages, %d bytes\n", m.Nodes[c.From].Name, m.Nodes[c.To].Name, c.Messages, c.Bytes)
	}
	// Output:
	// rank 0 -> rank 1: 1 messages, 100 bytes
	// rank 1 -> rank 2: 1 messages, 100 bytes
	// rank 2 -> rank 0: 1 messages, 100 bytes
}
