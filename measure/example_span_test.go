package measure_test

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/hmbtrace/hmbtrace/measure"
)

// Package-level regions: each Site binds to the running measurement at its
// first use, with the file and line of its declaration.
var (
	exampleSolve = measure.NewRegion("solve")
	exampleStep  = measure.NewRegion("step")
)

// startExample starts a measurement writing into a temporary directory.
func startExample(name string) (*measure.Measurement, func()) {
	dir, _ := os.MkdirTemp("", "hmbtrace-example")
	m, err := measure.Start(measure.Config{Output: dir, Name: name})
	if err != nil {
		panic(err)
	}
	return m, func() { m.Close(); os.RemoveAll(dir) }
}

// The defer form: a region from here to the function's return.
func ExampleStartRegion() {
	m, done := startExample("startregion")
	defer done()

	solve := func(ctx context.Context) {
		defer measure.StartRegion(ctx, exampleSolve).End()
		for range 3 {
			measure.StartRegion(ctx, exampleStep).End()
		}
	}
	solve(context.Background())

	m.Close()
	st := m.Stats()
	fmt.Println("recorded", st.Recorded, "kept", st.Kept, "lanes", len(st.Locations))
	// Output:
	// recorded 8 kept 8 lanes 1
}

// Do runs a function inside a region.
func ExampleDo() {
	m, done := startExample("do")
	defer done()

	measure.Do(context.Background(), exampleSolve, func(ctx context.Context) {
		measure.Do(ctx, exampleStep, func(context.Context) {})
	})

	m.Close()
	fmt.Println("recorded", m.Stats().Recorded)
	// Output:
	// recorded 4
}

// A goroutine per task: each records on a lane of its own while it runs,
// and lanes are reused, so the tasks use as many lanes as ran at once.
func ExampleStartRegion_goroutinePerTask() {
	m, done := startExample("tasks")
	defer done()

	ctx := context.Background()
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer measure.StartRegion(ctx, exampleStep).End()
		}()
	}
	wg.Wait()

	m.Close()
	st := m.Stats()
	fmt.Println("every event kept:", st.Kept == st.Recorded, "; lanes at most 100:", len(st.Locations) <= 100)
	// Output:
	// every event kept: true ; lanes at most 100: true
}

// NewRegion declares a region once, at package level.
func ExampleNewRegion() {
	m, done := startExample("newregion")
	defer done()

	r := m.RegionOf(exampleSolve) // the Site's Region in this measurement
	fmt.Println(r == m.Region("solve"), exampleSolve.Name())
	// Output:
	// true solve
}

// NewRegionAt gives the file and line of generated code.
func ExampleNewRegionAt() {
	s := measure.NewRegionAt("pkg.Func", "pkg/file.go", 42)
	file, line := s.Pos()
	fmt.Println(s.Name(), file, line)
	// Output:
	// pkg.Func pkg/file.go 42
}

// Current is the measurement Start made last, until its Close.
func ExampleCurrent() {
	m, done := startExample("current")
	defer done()
	fmt.Println(measure.Current() == m)
	m.Close()
	fmt.Println(measure.Current() == nil)
	// Output:
	// true
	// true
}

// NewContext sends the regions of a call chain to a measurement other than
// the current one.
func ExampleNewContext() {
	other, doneOther := startExample("other")
	defer doneOther()
	m, done := startExample("current")
	defer done()

	ctx := measure.NewContext(context.Background(), other)
	measure.StartRegion(ctx, exampleSolve).End()

	other.Close()
	m.Close()
	fmt.Println("other", other.Stats().Recorded, "current", m.Stats().Recorded)
	// Output:
	// other 2 current 0
}

// The Location idiom of a goroutine per task: Done at depth 0 gives the
// location back, and the next Location reuses it.
func ExampleLocation_Done() {
	m, done := startExample("done")
	defer done()
	r := m.Region("task")

	a := m.Location("task 1")
	a.Enter(r)
	a.Leave(r)
	a.Done() // a is the measurement's again: not to be used any more

	b := m.Location("task 2")
	fmt.Println(b == a, b.Name())
	// Output:
	// true task 1
}

// A region's parameters and a mark inside it, as Score-P's parameter
// instrumentation records them; Instant marks the goroutine's lane
// wherever it is.
func ExampleSpan_Int() {
	m, done := startExample("params")
	defer done()

	solve := func(ctx context.Context, n int, method string) {
		sp := measure.StartRegion(ctx, exampleSolve)
		defer sp.End()
		sp.Int("n", int64(n))
		sp.String("method", method)
		// ... iterate ...
		sp.Mark("converged")
	}
	ctx := context.Background()
	solve(ctx, 1000, "cg")
	measure.Instant(ctx, "solved")
	fmt.Println(m.Stats().Usage.Total())
	// Output: 0
}
