package hwcounter_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/hwcounter"
)

// ParseList reads a metric list such as HMB_METRICS; names come back as
// `perf list` spells them, and mistakes are reported with the valid names.
func ExampleParseList() {
	events, err := hwcounter.ParseList("cpu-cycles, instructions, cs, r00C0")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		fmt.Printf("%s type=%d config=%#x hardware=%v\n", e.Name, e.Type, e.Config, e.Hardware())
	}
	_, err = hwcounter.ParseList("cycles,cache-mises")
	fmt.Println(err != nil)
	// Output:
	// cycles type=0 config=0x0 hardware=true
	// instructions type=0 config=0x1 hardware=true
	// context-switches type=1 config=0x3 hardware=false
	// rc0 type=4 config=0xc0 hardware=true
	// true
}

// A Replay stands in for a Group in tests that need exact counter values.
func ExampleReplay() {
	events, _ := hwcounter.ParseList("instructions")
	src, _ := hwcounter.NewReplay(events, []hwcounter.ReplaySample{
		{Values: []uint64{1000}, Scaling: hwcounter.Scaling{Enabled: 100, Running: 100}},
		{Values: []uint64{4000}, Scaling: hwcounter.Scaling{Enabled: 300, Running: 150}},
	})
	var enter, leave [1]uint64
	_, _ = src.Read(enter[:])
	s, _ := src.Read(leave[:])
	fmt.Println("instructions in region:", leave[0]-enter[0], "multiplexed:", s.Multiplexed())
	// Output: instructions in region: 3000 multiplexed: true
}
