package measure_test

import (
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
)

// A leave of the wrong region is counted and the program goes on;
// LastUsageError says which it was, and Close says the count in one line
// on stderr.
func ExampleMeasurement_LastUsageError() {
	dir, err := os.MkdirTemp("", "hmb-out")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	m, err := measure.Start(measure.Config{Output: dir, IgnoreEnv: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	solve, step := m.Region("solve"), m.Region("step")
	loc := m.Location("main")
	loc.Enter(solve)
	loc.Leave(step) // step is not open
	fmt.Println(m.LastUsageError())
	loc.Leave(solve)
	m.Close()
	// Output:
	// hmbtrace: usage error, location "main": a leave of "step", which is not open; ignored
}
