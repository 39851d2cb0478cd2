package measure_test

import (
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A goroutine records its calls into a location; Close writes the trace,
// which the tracefile reader rebuilds in recorded order.
func Example() {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	defer os.RemoveAll(dir)

	m, err := measure.Start(measure.Config{Output: dir, Name: "example"})
	if err != nil {
		panic(err)
	}
	solve, step := m.Region("solve"), m.Region("step")
	loc := m.Location("main")
	loc.Enter(solve)
	for i := 0; i < 3; i++ {
		loc.Enter(step)
		loc.Leave(step)
	}
	loc.Leave(solve)
	if err := m.Close(); err != nil {
		panic(err)
	}

	st := m.Stats()
	fmt.Println("recorded", st.Recorded, "kept", st.Kept)

	f, err := tracefile.Open(m.Path())
	if err != nil {
		panic(err)
	}
	defer f.Close()
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		fmt.Println(e.Kind, f.RegionName(e.Region), e.Depth)
	}
	// Output:
	// recorded 8 kept 8
	// ENTER solve 1
	// ENTER step 2
	// LEAVE step 2
	// ENTER step 2
	// LEAVE step 2
	// ENTER step 2
	// LEAVE step 2
	// LEAVE solve 1
}

// With HMB_ENABLE=0 (or Config.Disabled) the locations are nil and every
// probe is a nil check.
func Example_disabled() {
	m, _ := measure.Start(measure.Config{Disabled: true})
	loc := m.Location("main")
	loc.Enter(m.Region("solve"))
	loc.Leave(m.Region("solve"))
	fmt.Println(loc == nil, m.Close())
	// Output: true <nil>
}

// An MPI code's wrappers define the communicators as MPI creates them and
// record messages with their communicator and non-blocking operations with
// a request number of their own. The trace keeps an exact matrix of who
// sent what to whom, whatever the buffer had to shed.
func ExampleMeasurement_DefineComm() {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	defer os.RemoveAll(dir)
	m, err := measure.Start(measure.Config{Output: dir, Name: "mpi"})
	if err != nil {
		panic(err)
	}
	world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2, 3}, nil)
	m.DefineComm("MPI_COMM_SELF", 0, []int32{0}, nil)
	evens, _ := m.DefineComm("", world, []int32{0, 2}, nil) // MPI_Comm_split

	isend, wait := m.Region("MPI_Isend"), m.Region("MPI_Wait")
	loc := m.Location("rank 0")
	loc.SendRankComm(2, 0, 1024, evens) // to world rank 2, rank 1 of evens
	loc.Enter(isend)
	loc.Isend(1, 0, 64, world, 1)
	loc.Leave(isend)
	loc.Enter(wait)
	loc.IsendComplete(1)
	loc.Leave(wait)
	if err := m.Close(); err != nil {
		panic(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		panic(err)
	}
	defer f.Close()
	for _, c := range f.Comms {
		fmt.Printf("comm %d %q parent %d members %v\n", c.ID, c.Name, c.Parent, c.Members)
	}
	for _, c := range f.Locations[0].Comm {
		fmt.Printf("to rank %d: %d messages, %d bytes\n", c.Peer, c.Sent, c.SentBytes)
	}
	// Output:
	// comm 1 "MPI_COMM_WORLD" parent 0 members [0 1 2 3]
	// comm 2 "MPI_COMM_SELF" parent 0 members [0]
	// comm 3 "" parent 1 members [0 2]
	// to rank 1: 1 messages, 64 bytes
	// to rank 2: 1 messages, 1024 bytes
}
