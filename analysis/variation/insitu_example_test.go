package variation_test

import (
	"fmt"
	"log"
	"os"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// recordRank writes one rank's trace of three iterations (compute, then
// MPI_Barrier until the slower rank is done), compute[i] ms each.
func recordRank(dir string, rank int, compute, slowest [3]uint64) *tracefile.File {
	m, err := measure.Start(measure.Config{Output: dir, Name: "insitu", Rank: rank, Clock: "monotonic", TimerShift: measure.NoTimerShift, IgnoreEnv: true})
	if err != nil {
		log.Fatal(err)
	}
	iter, work, barrier := m.Region("iteration"), m.Region("compute"), m.Region("MPI_Barrier")
	loc := m.Location("main")
	t0 := m.Now()
	at := func(ms uint64) uint64 { return t0 + 1_000_000*ms }
	var start uint64
	for it := 0; it < 3; it++ {
		end := start + slowest[it] + 1
		loc.EnterAt(iter, at(start))
		loc.EnterAt(work, at(start))
		loc.LeaveAt(work, at(start+compute[it]))
		loc.EnterAt(barrier, at(start+compute[it]))
		loc.LeaveAt(barrier, at(end))
		loc.LeaveAt(iter, at(end))
		start = end
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

// The analysis as the ranks of an MPI run run it at MPI_Finalize, each on
// its own trace: here both ranks' steps in one process.
func ExampleChoice_Cut() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	slowest := [3]uint64{4, 9, 4}
	ranks := []*tracefile.File{
		recordRank(dir, 0, [3]uint64{4, 4, 4}, slowest),
		recordRank(dir, 1, [3]uint64{4, 9, 4}, slowest), // slow in iteration 1
	}
	// Up the tree: each rank's Choice, rank 1's merged into rank 0's.
	choice, err := variation.LocalChoice(ranks[0])
	if err != nil {
		log.Fatal(err)
	}
	other, err := variation.LocalChoice(ranks[1])
	if err != nil {
		log.Fatal(err)
	}
	choice.Merge(other)
	cut, err := choice.Cut() // at the root
	if err != nil {
		log.Fatal(err)
	}
	// Down the tree: each rank cuts its own segments; up again, merged.
	segs, _ := cut.Local(ranks[0])
	more, _ := cut.Local(ranks[1])
	segs.Merge(more)
	v, err := cut.Finish(segs) // at the root: scored
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("segment region:", v.Region)
	for _, s := range v.Segments {
		fmt.Printf("%s iteration %d: SOS-time %d ns\n", v.Rows[s.Row].Label, s.Index, s.SOS)
	}
	top := v.Ranked()[0]
	fmt.Printf("stands out: %s iteration %d\n", v.Rows[top.Row].Label, top.Index)
	// Output:
	// segment region: iteration
	// 0:main iteration 0: SOS-time 4000000 ns
	// 0:main iteration 1: SOS-time 4000000 ns
	// 0:main iteration 2: SOS-time 4000000 ns
	// 1:main iteration 0: SOS-time 4000000 ns
	// 1:main iteration 1: SOS-time 9000000 ns
	// 1:main iteration 2: SOS-time 4000000 ns
	// stands out: 1:main iteration 1
}

// A rank decodes its events once for both of its passes, the Choice and,
// once the root chose, the Segments, as cshim's collective end does.
func ExampleReadRankEvents() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	slowest := [3]uint64{4, 9, 4}
	var events []*variation.RankEvents
	for rank, compute := range [][3]uint64{{4, 4, 4}, {4, 9, 4}} {
		ev, err := variation.ReadRankEvents(recordRank(dir, rank, compute, slowest), 64<<20)
		if err != nil || ev == nil {
			log.Fatal("the events do not fit: ", err)
		}
		events = append(events, ev)
	}
	choice, _ := events[0].Choice()
	other, _ := events[1].Choice()
	choice.Merge(other)
	cut, err := choice.Cut()
	if err != nil {
		log.Fatal(err)
	}
	segs, _ := cut.Segments(events[0])
	more, _ := cut.Segments(events[1])
	segs.Merge(more)
	v, err := cut.Finish(segs)
	if err != nil {
		log.Fatal(err)
	}
	top := v.Ranked()[0]
	fmt.Printf("%d segments of %s; stands out: %s iteration %d\n", len(v.Segments), v.Region, v.Rows[top.Row].Label, top.Index)
	// Output:
	// 6 segments of iteration; stands out: 1:main iteration 1
}
