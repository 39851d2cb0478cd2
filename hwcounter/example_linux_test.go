//go:build linux

package hwcounter_test

import (
	"fmt"
	"runtime"

	"github.com/hmbtrace/hmbtrace/hwcounter"
)

// Count a region on the calling thread, recording without the events this
// machine cannot count (here: no PMU on a virtual machine) and saying so once.
func ExampleOpenAvailable() {
	runtime.LockOSThread() // the group counts this OS thread: stay on it
	defer runtime.UnlockOSThread()

	g, missing, err := hwcounter.OpenAvailable([]string{"task-clock", "page-faults"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range missing {
		fmt.Println("recording without", m.Event+":", m.Reason)
	}
	if g == nil {
		return
	}
	defer g.Close()

	enter := make([]uint64, g.Len())
	leave := make([]uint64, g.Len())
	_, _ = g.Read(enter)
	x := 1
	for i := 0; i < 1_000_000; i++ { // the region
		x = x*31 + i
	}
	s, _ := g.Read(leave)
	fmt.Println(g.Events()[0].Name, "counted:", leave[0] > enter[0], "multiplexed:", s.Multiplexed(), x != 0)
	fmt.Println("read path:", g.ReadPath())
	// Output:
	// task-clock counted: true multiplexed: false true
	// read path: read
}
