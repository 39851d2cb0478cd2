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
