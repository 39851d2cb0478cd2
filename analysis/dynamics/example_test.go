package dynamics_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/render"
)

// The time one region took in each of 96 iterations of the progress loop:
// 12 ms with some jitter, one slow iteration at 30, and 3 ms more per
// iteration from iteration 60 on.
func ExampleAnalyze() {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 96)
	for i := range x {
		x[i] = 12 + 0.2*r.NormFloat64()
		if i == 30 {
			x[i] += 4
		}
		if i >= 60 {
			x[i] += 3
		}
	}
	a, err := dynamics.Analyze(x, dynamics.Options{})
	if err != nil {
		panic(err)
	}
	for _, f := range a.Features {
		fmt.Printf("%v over iterations %d-%d: %+.0f ms\n", f.Kind, f.From, f.To, f.Severity)
	}
	fmt.Println(render.DescribeFeatures(a.Features, len(x), "ms"))
	// Output:
	// peak over iterations 30-30: +4 ms
	// step up over iterations 59-60: +108 ms
	// Flat until iteration 29, then a peak at iteration 30, flat until iteration 59, then a step increase at iteration 60, flat to the end. Cost over the baseline, largest first: the step increase at 60 costs 108 ms; the peak at 30 costs 3.71 ms.
}

// Energies of a short series: the total is its sum of squares, the dynamic
// part N times its variance, split over the time scales 2, 4 and 8.
func ExampleHaar() {
	x := []float64{4, 6, 10, 12, 8, 6, 5, 5}
	t := dynamics.Haar(x)
	e := t.Energy()
	fmt.Printf("total %.0f, dynamic %.0f, per scale %.1f\n", e.Total, e.Dynamic, e.PerScale)
	fmt.Printf("variability %.3f\n", e.Variability())
	fmt.Printf("round trip %.0f\n", t.Inverse())
	// Output:
	// total 446, dynamic 54, per scale [6.0 40.0 8.0]
	// variability 0.121
	// round trip [4 6 10 12 8 6 5 5]
}
