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

// The replay in-situ, its rounds handed over in memory as
// libhmbtrace-mpi hands them over MPI: the forward rounds, the ship
// round, then rounds while any rank has something to send. Rank 0
// computes 500 ns before it sends; rank 1 waits for it from 100 ns on.
func ExampleLocal() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	var files []*tracefile.File
	for r := range 2 {
		b := tracetest.NewBuilder("ex", "node", r, time.Unix(1700000000, 0), "MPI_Send", "MPI_Recv", "compute")
		b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
		l := b.Location("main")
		if r == 0 {
			l.Enter(0, 3) // compute
			l.Leave(500)
			l.Enter(500, 1) // MPI_Send
			l.MessageComm(500, encode.KindSend, 1, 0, 8, 1)
			l.Leave(510)
		} else {
			l.Enter(0, 3)
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
		files = append(files, f)
	}
	locals := make([]*waitstate.Local, len(files))
	for i, f := range files {
		if locals[i], err = waitstate.NewLocal(f, len(files)); err != nil {
			panic(err)
		}
	}
	for round := 0; ; round++ {
		inbox := []map[int][]byte{{}, {}}
		sent := false
		for i, l := range locals {
			out, err := l.Outgoing(round)
			if err != nil {
				panic(err)
			}
			for peer, b := range out {
				inbox[peer][i], sent = b, true
			}
		}
		if round > waitstate.Rounds(len(files)) && !sent {
			break
		}
		for i, l := range locals {
			if err := l.Incoming(round, inbox[i]); err != nil {
				panic(err)
			}
		}
	}
	var run *waitstate.InSitu
	for _, l := range locals {
		part, err := l.Finish()
		if err != nil {
			panic(err)
		}
		if run == nil {
			run = part
		} else {
			run.Merge(part)
		}
	}
	r := run.Result()
	fmt.Printf("Late Sender: %d ns\n", r.Totals[waitstate.LateSender])
	for _, c := range r.DelayCosts {
		fmt.Printf("caused by %s on %s: %d ns\n", r.PathName(c.Path), r.Locations[c.Loc].Name, c.Time)
	}
	cp := r.CriticalPath
	fmt.Printf("critical path %d ns, %d hop, from %s\n", cp.Length, cp.Hops, r.Locations[cp.Last].Name)
	// Output:
	// Late Sender: 400 ns
	// caused by compute on rank 0: 400 ns
	// critical path 520 ns, 1 hop, from rank 1
}
