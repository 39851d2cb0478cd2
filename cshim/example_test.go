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

// ParseMaps reads /proc/<pid>/maps, which the Symbolizer uses to find the
// file and the offset behind a code address.
func ExampleParseMaps() {
	maps, err := cshim.ParseMaps([]byte(
		"55d0c6a01000-55d0c6a02000 r-xp 00001000 08:01 1234   /usr/bin/prog\n" +
			"7ffd5e9f2000-7ffd5e9f4000 r-xp 00000000 00:00 0      [vdso]\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range maps {
		fmt.Printf("%#x-%#x %s offset %#x %q\n", m.Start, m.End, m.Perms, m.Offset, m.Path)
	}
	// Output:
	// 0x55d0c6a01000-0x55d0c6a02000 r-xp offset 0x1000 "/usr/bin/prog"
	// 0x7ffd5e9f2000-0x7ffd5e9f4000 r-xp offset 0x0 "[vdso]"
}
