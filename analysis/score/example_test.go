package score_test

import (
	"fmt"
	"log"
	"os"

	"github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// record writes a small run, two ranks of three iterations each (a compute
// phase, then a wait for the other rank), and opens its trace. Times are
// given in ms after the start.
func record(dir string, compute [2][3]uint64) *tracefile.File {
	m, err := measure.Start(measure.Config{Output: dir, Name: "example", Clock: "monotonic", TimerShift: measure.NoTimerShift})
	if err != nil {
		log.Fatal(err)
	}
	main, iter, work, wait := m.Region("main"), m.Region("iteration"), m.Region("compute"), m.Region("wait for neighbour")
	t0 := m.Now()
	at := func(ms uint64) uint64 { return t0 + 1_000_000*ms }
	for rank := 0; rank < 2; rank++ {
		loc := m.Location(fmt.Sprintf("rank %d", rank))
		loc.EnterAt(main, at(0))
		var start uint64
		for it := 0; it < 3; it++ {
			end := start + max(compute[0][it], compute[1][it]) + 1
			loc.EnterAt(iter, at(start))
			loc.EnterAt(work, at(start))
			loc.LeaveAt(work, at(start+compute[rank][it]))
			loc.EnterAt(wait, at(start+compute[rank][it]))
			loc.LeaveAt(wait, at(end))
			loc.LeaveAt(iter, at(end))
			start = end
		}
		loc.LeaveAt(main, at(start))
	}
	if err := m.Close(); err != nil {
		log.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		log.Fatal(err)
	}
	return f
}

func ExampleCompute() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	f := record(dir, [2][3]uint64{{4, 4, 4}, {4, 9, 4}})
	defer f.Close()

	s, err := score.Compute([]*tracefile.File{f}, score.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range s.Regions {
		fmt.Printf("%s: %d visits, %d enter/leave records kept\n", r.Name, r.Visits, r.KeptEvents)
	}
	// Regions of milliseconds cost far less than 5 % to measure.
	fmt.Println("flagged:", s.Flagged())
	// Output:
	// iteration: 6 visits, 12 enter/leave records kept
	// compute: 6 visits, 12 enter/leave records kept
	// wait for neighbour: 6 visits, 12 enter/leave records kept
	// main: 2 visits, 4 enter/leave records kept
	// flagged: []
}
