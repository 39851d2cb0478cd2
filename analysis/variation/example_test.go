package variation_test

import (
	"fmt"
	"log"
	"os"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/filter"
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

func ExampleAnalyze() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	// Rank 1 computes for 9 ms in the second iteration; rank 0 waits.
	f := record(dir, [2][3]uint64{{4, 4, 4}, {4, 9, 4}})
	defer f.Close()

	sync, _ := filter.ParsePatternList("wait*")
	v, err := variation.Analyze([]*tracefile.File{f}, variation.Options{Sync: sync})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("segment region:", v.Region)
	for _, s := range v.Segments {
		fmt.Printf("%s iteration %d: duration %d ns, SOS-time %d ns\n", v.Rows[s.Row].Label, s.Index, s.Duration, s.SOS)
	}
	top := v.Ranked()[0]
	fmt.Printf("stands out: %s iteration %d\n", v.Rows[top.Row].Label, top.Index)
	// Output:
	// segment region: iteration
	// rank 0 iteration 0: duration 5000000 ns, SOS-time 4000000 ns
	// rank 0 iteration 1: duration 10000000 ns, SOS-time 4000000 ns
	// rank 0 iteration 2: duration 5000000 ns, SOS-time 4000000 ns
	// rank 1 iteration 0: duration 5000000 ns, SOS-time 4000000 ns
	// rank 1 iteration 1: duration 10000000 ns, SOS-time 9000000 ns
	// rank 1 iteration 2: duration 5000000 ns, SOS-time 4000000 ns
	// stands out: rank 1 iteration 1
}
