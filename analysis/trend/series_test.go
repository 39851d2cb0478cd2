package trend_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/trend"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
)

// invocations returns n invocations of about 100 µs, of which those from
// slowFrom on take 50 µs more; each waits sync ns.
func invocations(n, slowFrom int, sync int64) []Invocations {
	rng := rand.New(rand.NewPCG(3, 4))
	out := make([]Invocations, n)
	for i := range out {
		d := int64(100_000 + rng.IntN(500))
		if i >= slowFrom {
			d += 50_000
		}
		out[i] = Invocations{N: 1, Duration: d, SOS: d - sync}
	}
	return out
}

// group sums groups into groups of width, the last of fewer.
func group(in []Invocations, width int) []Invocations {
	var out []Invocations
	for i, g := range in {
		if i%width == 0 {
			out = append(out, Invocations{})
		}
		o := &out[len(out)-1]
		o.N += g.N
		o.Duration += g.Duration
		o.SOS += g.SOS
	}
	return out
}

// A location's invocations make a time series, and an SOS-time series when
// they waited; grouped, each value is its group's mean and the series
// still counts every iteration and the loop's whole time.
func TestInvocationSeries(t *testing.T) {
	if s := InvocationSeries("step", "main", 1, nil); s != nil {
		t.Errorf("no invocations: %d series", len(s))
	}
	one := invocations(402, 200, 0)
	s := InvocationSeries("step", "main", 1, one)
	if len(s) != 1 || s[0].Metric != "time per iteration" || s[0].Unit != "ns" || s[0].Iterations != 402 || len(s[0].Values) != 402 {
		t.Fatalf("series %+v", s)
	}
	var loop float64
	for i, g := range one {
		loop += float64(g.Duration)
		if s[0].Values[i] != float64(g.Duration) {
			t.Fatalf("value %d: %g, want %d", i, s[0].Values[i], g.Duration)
		}
	}
	if s[0].Loop != loop || s[0].Total() != loop {
		t.Errorf("loop %g, total %g; want %g", s[0].Loop, s[0].Total(), loop)
	}
	waited := InvocationSeries("step", "main", 4, group(invocations(402, 200, 1000), 4))
	if len(waited) != 2 || waited[1].Metric != "SOS-time per iteration" {
		t.Fatalf("waiting invocations: %d series", len(waited))
	}
	for _, w := range waited {
		if w.Width != 4 || w.Iterations != 402 || len(w.Values) != 101 || w.Loop != waited[0].Loop {
			t.Errorf("%s: width %d, %d iterations in %d values, loop %g", w.Metric, w.Width, w.Iterations, len(w.Values), w.Loop)
		}
	}
	// The last group holds 2 invocations: its value is their mean.
	last := group(invocations(402, 200, 1000), 4)[100]
	if last.N != 2 || waited[0].Values[100] != float64(last.Duration)/2 || waited[1].Values[100] != float64(last.SOS)/2 {
		t.Errorf("last values %g, %g; want the means of %+v", waited[0].Values[100], waited[1].Values[100], last)
	}
}

// AnalyzeSeries finds the step of grouped invocations in iterations, as
// Analyze finds it in a trace, and keeps the source and notes it is given.
func TestAnalyzeSeries(t *testing.T) {
	src := Source{Invocations: true, Region: "step"}
	notes := []variation.Note{{Kind: variation.NoteTruncated, Missing: 1}}
	for _, width := range []int{1, 4} {
		series := InvocationSeries("step", "main", uint64(width), group(invocations(402, 200, 0), width))
		r, err := AnalyzeSeries(src, series, notes, Options{Procs: 2})
		if err != nil {
			t.Fatal(err)
		}
		if r.Source != src || !reflect.DeepEqual(r.Notes, notes) || r.MinShare != DefaultMinShare || len(r.Analyses) != 1 || len(r.Quiet) != 1 {
			t.Errorf("width %d: result %+v", width, r)
		}
		var step *Finding
		for i, f := range r.Findings {
			if f.Feature.Kind == dynamics.StepUp {
				step = &r.Findings[i]
			}
		}
		if step == nil || step.From < 196 || step.From > 204 || step.Severity <= 0 {
			t.Errorf("width %d: want a step up at iteration 200, findings %+v", width, r.Findings)
		}
	}
	if _, err := AnalyzeSeries(src, nil, nil, Options{Procs: -1}); err == nil {
		t.Error("-1 workers: no error")
	}
}
