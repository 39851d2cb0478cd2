package cube_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/hmbtrace/hmbtrace/export/cube"
)

// A profile by hand: Time over a two-level call tree on one thread, and a
// Late Sender wait carved out of the receive's time, as a wait-state
// analysis books it.
func Example() {
	p := cube.NewProfile()
	time, err := p.AddMetric(nil, "time", "Time", "sec", cube.Double, "Time spent in the call path itself")
	if err != nil {
		log.Fatal(err)
	}
	main := p.Call(nil, p.Region("main", "ring.c", 10, 40, "user", "function"))
	recv := p.Call(main, p.Region("MPI_Recv", "MPI", 0, 0, "mpi", "function"))
	rank := p.AddMachine("cluster").Node("node-a").AddProcess("rank 0", 0)
	thread := p.AddLocation(rank, "main", 0)
	time.Add(main, thread, 0.25)
	time.Add(recv, thread, 0.75)

	late, err := p.MetricPath("Time > MPI > Communication > Point-to-point > Late Sender")
	if err != nil {
		log.Fatal(err)
	}
	if err := late.Carve(recv, thread, 0.5); err != nil {
		log.Fatal(err)
	}

	var archive bytes.Buffer // or a .cubex file
	if err := p.Write(&archive); err != nil {
		log.Fatal(err)
	}
	q, err := cube.Read(&archive)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range q.MetricList() {
		fmt.Printf("%-14s %g s\n", m.Display, m.Value(q.Cnodes()[1], q.Locations()[0]))
	}
	// Output:
	// Time           0.25 s
	// MPI            0 s
	// Communication  0 s
	// Point-to-point 0 s
	// Late Sender    0.5 s
}
