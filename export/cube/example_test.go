package cube_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/hmbtrace/hmbtrace/export/cube"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A profile by hand: Time over a two-level call tree on one thread, the
// receive's time booked as MPI point-to-point, and a Late Sender wait
// inside it, as a wait-state analysis books one. A metric's value includes
// its sub-metrics', as CUBE4 stores it.
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

	p2p, err := p.MetricPath(cube.PathP2P)
	if err != nil {
		log.Fatal(err)
	}
	for m := p2p; m != time; m = m.Parent {
		m.Add(recv, thread, 0.75)
	}
	late, err := p.MetricPath(cube.PathP2P + " > Late Sender")
	if err != nil {
		log.Fatal(err)
	}
	late.Add(recv, thread, 0.5)

	var archive bytes.Buffer // or a .cubex file
	if err := p.Write(&archive); err != nil {
		log.Fatal(err)
	}
	q, err := cube.Read(&archive)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range q.MetricList() {
		fmt.Printf("%-15s %-14s %g s\n", m.Uniq, m.Display, m.Value(q.Cnodes()[1], q.Locations()[0]))
	}
	// Output:
	// time            Time           0.75 s
	// mpi             MPI            0.75 s
	// comm            Communication  0.75 s
	// mpi_point2point Point-to-point 0.75 s
	// mpi_latesender  Late Sender    0.5 s
}

// A traced run's profile with what the wait-state replay found: the
// patterns under Time, the critical path and the delay costs as roots of
// their own, by Scalasca's unique names.
func ExampleFromFilesAnalysed() {
	var files []*tracefile.File
	for r := range 2 {
		f, err := tracefile.Open(fmt.Sprintf("testdata/mpi/mpi-jacobi.%d.hmb", r))
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	p, err := cube.FromFilesAnalysed(files, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range p.Metrics() {
		fmt.Print(m.Uniq)
		for _, c := range m.Children {
			fmt.Print(" > ", c.Uniq)
		}
		fmt.Println()
	}
	// Output:
	// time > mpi
	// visits
	// critical_path > critical_path_imbalance
	// delay > delay_mpi
}
