package measure_test

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// With GoRuntime (HMB_GORUNTIME=1) the trace says why a worker waited: its
// channel send that no one received yet is a region on the worker's
// companion location, as an MPI wait is a region on a rank's.
func ExampleConfig_goRuntime() {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	defer os.RemoveAll(dir)

	m, err := measure.Start(measure.Config{Output: dir, Name: "goruntime", GoRuntime: true})
	if err != nil {
		panic(err)
	}
	work := m.Region("work")
	results, ready := make(chan int), make(chan struct{})
	go func() {
		loc := m.Location("worker") // the goroutine holds the location from here ...
		defer loc.Done()            // ... to here
		loc.Enter(work)
		close(ready)
		results <- 42 // blocks until main receives
		loc.Leave(work)
	}()
	<-ready
	time.Sleep(10 * time.Millisecond)
	fmt.Println("received", <-results)
	if err := m.Close(); err != nil { // stops the tracer, records the rest
		panic(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		panic(err)
	}
	defer f.Close()
	names := map[uint32]string{}
	for _, r := range f.Regions {
		names[r.ID] = r.Name
	}
	for _, l := range f.Locations {
		if l.Name != "worker (Go)" {
			continue
		}
		var seen []string
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			if e.Kind == encode.KindEnter && !slices.Contains(seen, names[e.Region]) {
				seen = append(seen, names[e.Region])
			}
		}
		slices.Sort(seen)
		fmt.Printf("%s: %q\n", l.Name, seen)
	}
	// Output:
	// received 42
	// worker (Go): ["Go runnable" "Go wait: chan send"]
}
