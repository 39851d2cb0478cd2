package waitstate_test

import (
	"fmt"
	"os"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Each rank tells when it awaits no cost more of the backward replay, so
// the driver looks for the replay's end only then. Rank 1 waits in
// MPI_Recv for rank 0's late send: once the ship round is in, rank 1 has
// sent its wait's cost and is settled; rank 0, the late party, is settled
// once that cost came and was spread.
func ExampleLocal_Settled() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	locals := make([]*waitstate.Local, 2)
	for r := range locals {
		b := tracetest.NewBuilder("ex", "node", r, time.Unix(1700000000, 0), "MPI_Send", "MPI_Recv", "compute")
		b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
		l := b.Location("main")
		l.Enter(0, 3) // compute
		if r == 0 {
			l.Leave(500)
			l.Enter(500, 1) // MPI_Send
			l.MessageComm(500, encode.KindSend, 1, 0, 8, 1)
			l.Leave(510)
		} else {
			l.Leave(100)
			l.Enter(100, 2) // MPI_Recv
			l.MessageComm(520, encode.KindRecv, 0, 0, 8, 1)
			l.Leave(520)
		}
		path, err := b.WriteFile(dir)
		if err != nil {
			panic(err)
		}
		f, err := tracefile.Open(path)
		if err != nil {
			panic(err)
		}
		if locals[r], err = waitstate.NewLocal(f, len(locals)); err != nil {
			panic(err)
		}
	}
	ship := waitstate.Rounds(len(locals))
	for round := 0; round <= ship+1; round++ {
		inbox := []map[int][]byte{{}, {}}
		for i, l := range locals {
			out, err := l.Outgoing(round)
			if err != nil {
				panic(err)
			}
			for peer, b := range out {
				inbox[peer][i] = b
			}
		}
		for i, l := range locals {
			if err := l.Incoming(round, inbox[i]); err != nil {
				panic(err)
			}
		}
		if round >= ship {
			fmt.Printf("after backward round %d: rank 0 settled %v, rank 1 settled %v\n", round-ship, locals[0].Settled(), locals[1].Settled())
		}
	}
	// Output:
	// after backward round 0: rank 0 settled false, rank 1 settled true
	// after backward round 1: rank 0 settled true, rank 1 settled true
}
