package render

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
)

func TestDescribe(t *testing.T) {
	fs := []dynamics.Feature{
		{Kind: dynamics.StepDown, From: 99, To: 100, Severity: 150},
		{Kind: dynamics.Peak, From: 18, To: 22, Severity: 12.5},
		{Kind: dynamics.TrendUp, From: 180, To: 255, Severity: 3004.4},
		{Kind: dynamics.Dip, From: 140, To: 140, Severity: -2},
	}
	got := DescribeFeatures(fs, 256, "ms")
	want := "Flat until iteration 17, then a peak near iteration 20 (iterations 18–22), " +
		"flat until iteration 99, then a step decrease at iteration 100, " +
		"flat until iteration 139, then a dip at iteration 140, " +
		"flat until iteration 179, then an upward trend from iteration 180 to the end. " +
		"Cost over the baseline, largest first: the upward trend from 180 costs 3004 ms; " +
		"the slower iterations before the step decrease at 100 cost 150 ms; the peak at 20 costs 12.5 ms. " +
		"Saved: the dip at 140 saves 2 ms."
	if got != want {
		t.Errorf("DescribeFeatures:\n got %q\nwant %q", got, want)
	}
	if fs[0].Kind != dynamics.StepDown {
		t.Error("DescribeFeatures reordered its argument")
	}
}

func TestDescribeEdgeCases(t *testing.T) {
	if got := DescribeFeatures(nil, 0, "s"); got != "Empty series." {
		t.Errorf("empty: %q", got)
	}
	if got := DescribeFeatures(nil, 50, "s"); got != "No significant change over the 50 iterations." {
		t.Errorf("no features: %q", got)
	}
	// Back-to-back features from the first iteration to the last: no flat
	// stretch to mention, a unitless value, a trend that ends early.
	got := DescribeFeatures([]dynamics.Feature{
		{Kind: dynamics.StepUp, From: 0, To: 1, Severity: 4},
		{Kind: dynamics.TrendDown, From: 1, To: 8, Severity: 1},
		{Kind: dynamics.Peak, From: 9, To: 9, Severity: 0},
	}, 10, "")
	want := "A step increase at iteration 1, a downward trend from iteration 1 to 8, a peak at iteration 9. " +
		"Cost over the baseline, largest first: the step increase at 1 costs 4; the slower iterations before the downward trend from 1 cost 1."
	if got != want {
		t.Errorf("DescribeFeatures:\n got %q\nwant %q", got, want)
	}
	// Describing what Analyze found never fails.
	r := rand.New(rand.NewPCG(1, 0x5eed))
	x := make([]float64, 300)
	for i := range x {
		x[i] = 1 + 0.1*r.NormFloat64()
		if i >= 150 {
			x[i]++
		}
	}
	a, err := dynamics.Analyze(x, dynamics.Options{})
	if err != nil || !strings.HasPrefix(DescribeFeatures(a.Features, a.N, "s"), "Flat until iteration 149, then a step increase at iteration 150") {
		t.Errorf("%v: %q", err, DescribeFeatures(a.Features, a.N, "s"))
	}
}

func TestDescribeTellsTheLargest(t *testing.T) {
	var fs []dynamics.Feature
	for i := 0; i < 14; i++ {
		fs = append(fs, dynamics.Feature{Kind: dynamics.Peak, From: 10 * i, To: 10 * i, Severity: float64(i + 1)})
	}
	got := DescribeFeatures(fs, 200, "")
	// Peaks 4..13 (severity 5..14) are told; 0..3 fall before the first.
	want := "Minor changes until iteration 39, then a peak at iteration 40, flat until iteration 49, then a peak at iteration 50"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "4 smaller features are not told.") ||
		!strings.Contains(got, "a peak at iteration 130, flat to the end.") ||
		!strings.Contains(got, "largest first: the peak at 130 costs 14; the peak at 120 costs 13;") {
		t.Errorf("DescribeFeatures: %q", got)
	}
}

// A periodic feature is told apart, after the changes.
func TestDescribePeriodic(t *testing.T) {
	if !strings.Contains(DescribeFeatures([]dynamics.Feature{{Kind: dynamics.Periodic, From: 9, To: 399, Period: 10, Severity: 160, Stability: 40}}, 400, "ms"),
		"A peak every 10 iterations from iteration 9 to 399 (40 of them). Cost over the baseline, largest first: the peaks every 10 iterations cost 160 ms.") {
		t.Error(DescribeFeatures([]dynamics.Feature{{Kind: dynamics.Periodic, From: 9, To: 399, Period: 10, Severity: 160, Stability: 40}}, 400, "ms"))
	}
}
