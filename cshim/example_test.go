package cshim_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/cshim"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The C side of libhmbtrace does this: it starts the Runtime at hmb_init,
// gets region ids from hmb_region, gives each C thread its location, and
// replays the records the thread staged.
func ExampleThread_Replay() {
	dir, err := os.MkdirTemp("", "cshim-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	defer os.Unsetenv("HMB_OUTPUT")
	defer os.Unsetenv("HMB_NAME")

	var rt cshim.Runtime
	if _, err := rt.Start([]string{"HMB_OUTPUT=" + dir, "HMB_NAME=example"}, "monotonic"); err != nil {
		fmt.Println(err)
		return
	}
	solve := uint64(rt.Region("solve", "solver.c", 12))
	th := rt.Thread(rt.NewThread(4242, ""))
	now := rt.Measurement().Now()
	malformed := th.Replay([]cshim.Record{
		cshim.MakeRecord(cshim.KindEnter, now, solve),
		cshim.MakeRecord(cshim.KindLeave, now+1500, solve),
	})
	if err := rt.Close(); err != nil {
		fmt.Println(err)
		return
	}

	f, err := tracefile.Open(filepath.Join(dir, "example.0.hmb"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	loc := f.Locations[0]
	var e tracefile.Event
	var entered int64
	for it := f.Events(loc.ID); it.Next(&e); {
		fmt.Println(loc.Name, e.Kind, f.RegionName(e.Region))
		if e.Kind.String() == "ENTER" {
			entered = f.Nanos(e.Time)
		} else {
			fmt.Printf("after %.1f µs\n", float64(f.Nanos(e.Time)-entered)/1000)
		}
	}
	fmt.Println("malformed:", malformed)
	// Output:
	// thread 4242 ENTER solve
	// thread 4242 LEAVE solve
	// after 1.5 µs
	// malformed: 0
}
