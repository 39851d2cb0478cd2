package trend_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// plant records a progress loop of 400 iterations in which "work" becomes
// gradually slower from iteration 200 and "io" has one spike at iteration
// 100 that costs 3 % of the loop, with a little noise, and returns the trace.
func plant(t *testing.T, phase bool) *tracefile.File {
	t.Helper()
	cfg := measure.Config{Output: t.TempDir(), Name: "plant", Clock: "monotonic", TimerShift: measure.NoTimerShift}
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	step := m.Region("step")
	if phase {
		step = m.Phase("step")
	}
	work, io := m.Region("work"), m.Region("io")
	loc := m.Location("main")
	rng := rand.New(rand.NewPCG(1, 2))
	now := m.Now()
	for i := 0; i < 400; i++ {
		w := uint64(100_000 + rng.IntN(200))
		if i >= 200 {
			w += uint64(i-200) * 500
		}
		d := uint64(20_000 + rng.IntN(200))
		if i == 100 {
			d = 2_000_000 // 3 % of the loop's time
		}
		loc.EnterAt(step, now)
		loc.EnterAt(work, now+10)
		loc.LeaveAt(work, now+10+w)
		loc.EnterAt(io, now+20+w)
		loc.LeaveAt(io, now+20+w+d)
		loc.LeaveAt(step, now+30+w+d)
		now += 40 + w + d
	}
	return tracetest.Finish(t, m)
}

func find(r *Result, region, metric string, kind dynamics.Kind) *Finding {
	for i, f := range r.Findings {
		if f.Series.Region == region && f.Series.Metric == metric && f.Feature.Kind == kind {
			return &r.Findings[i]
		}
	}
	return nil
}

// The planted degradation and spike are found, where they are, from the
// phase series and (without one) from the invocations of the dominant
// region.
func TestPlantedDegradation(t *testing.T) {
	for _, phase := range []bool{true, false} {
		r, err := Analyze([]*tracefile.File{plant(t, phase)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		render.DynamicsText(&text, r, 0)
		t.Log(text.String())
		if phase {
			trend := find(r, "work", "time per iteration", dynamics.TrendUp)
			if trend == nil || trend.From < 190 || trend.From > 215 || trend.To < 390 {
				t.Errorf("work: want an upward trend from about iteration 200 to the end, got %+v\n%s", trend, text.String())
			}
			spike := find(r, "io", "time per iteration", dynamics.Peak)
			if spike == nil || spike.From != 100 || spike.To != 100 {
				t.Errorf("io: want a peak at iteration 100, got %+v\n%s", spike, text.String())
			}
			if r.Findings[0].Severity < 0 || r.Findings[0].Series.Region == "io" && r.Findings[0].Feature.Kind != dynamics.Peak {
				t.Errorf("worst first: %+v", r.Findings[0])
			}
			if strings.Count(text.String(), "\"io\" on main, time per iteration: a peak at iteration 100") != 1 {
				t.Errorf("the spike is not described in a sentence:\n%s", text.String())
			}
		} else {
			if !r.Source.Invocations || r.Source.Region != "step" {
				t.Errorf("segments from %+v, want the dominant region step", r.Source)
			}
			if f := find(r, "step", "time per iteration", dynamics.Peak); f == nil || f.From != 100 {
				t.Errorf("the spike in io shows in step at iteration 100: %+v\n%s", f, text.String())
			}
			if f := find(r, "step", "time per iteration", dynamics.TrendUp); f == nil || f.From < 190 || f.From > 215 {
				t.Errorf("the slowdown of work shows in step from about 200: %+v\n%s", f, text.String())
			}
		}
		var tsv strings.Builder
		render.DynamicsTSV(&tsv, r)
		lines := strings.Split(strings.TrimRight(tsv.String(), "\n"), "\n")
		if lines[0] != render.DynamicsTSVHeader || len(lines) != len(r.Findings)+1 {
			t.Errorf("TSV:\n%s", tsv.String())
		}
		for _, line := range lines {
			if len(strings.Split(line, "\t")) != 10 {
				t.Errorf("TSV line %q", line)
			}
		}
		var svg bytes.Buffer
		if err := render.DynamicsSVG(&svg, r, 4); err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(&svg)
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("SVG: %v", err)
			}
		}
	}
}

// TestSeriesLocations checks how the phase series name their locations: by
// name for one file, by rank for the ranks of one run, by file when files
// share a rank (unrelated runs), so that no two locations' series read alike.
func TestSeriesLocations(t *testing.T) {
	record := func(name string, rank int) *tracefile.File {
		m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: name, Rank: rank, Clock: "monotonic"})
		if err != nil {
			t.Fatal(err)
		}
		step, work := m.Phase("step"), m.Region("work")
		loc := m.Location("main")
		now := m.Now()
		for range 4 {
			loc.EnterAt(step, now)
			loc.EnterAt(work, now+10)
			loc.LeaveAt(work, now+100)
			loc.LeaveAt(step, now+110)
			now += 200
		}
		return tracetest.Finish(t, m)
	}
	x0, x1, y0 := record("x", 0), record("x", 1), record("y", 0)
	for _, tc := range []struct {
		files []*tracefile.File
		want  string
	}{
		{[]*tracefile.File{x0}, "main"},
		{[]*tracefile.File{x0, x1}, "rank 0: main|rank 1: main"},
		{[]*tracefile.File{x0, y0}, "x.0.hmb: main|y.0.hmb: main"},
	} {
		r, err := Analyze(tc.files, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var where []string
		for _, s := range r.Series {
			if len(where) == 0 || where[len(where)-1] != s.Location {
				where = append(where, s.Location)
			}
		}
		if got := strings.Join(where, "|"); got != tc.want {
			t.Errorf("%d files: series on %q, want %q", len(tc.files), got, tc.want)
		}
	}
}

// A run whose "work" grows linearly from 1× to 4× over its last 200 of 600
// iterations, with noise of a few percent and rare OS-like outliers, shows
// that as one upward trend of about 200 iterations, the costliest finding,
// in at least 9 of 10 noise draws. 600 iterations do not fit the 512 phase
// samples: they merge pairwise, and the finding is still placed and costed
// in iterations.
func TestPlantedRampInTrace(t *testing.T) {
	good := 0
	for seed := uint64(0); seed < 10; seed++ {
		cfg := measure.Config{Output: t.TempDir(), Name: "ramp", Clock: "monotonic", TimerShift: measure.NoTimerShift}
		m, err := measure.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		step, work := m.Phase("step"), m.Region("work")
		loc := m.Location("main")
		rng := rand.New(rand.NewPCG(seed, 3))
		now := m.Now()
		var planted float64
		for i := 0; i < 600; i++ {
			w := 100_000 * math.Exp(0.05*rng.NormFloat64())
			if rng.Float64() < 0.01 {
				w += 100_000 * (0.2 + 2*rng.ExpFloat64())
			}
			if i >= 400 {
				extra := 3 * float64(i-400) / 199
				planted += 100_000 * extra
				w *= 1 + extra
			}
			loc.EnterAt(step, now)
			loc.EnterAt(work, now+10)
			loc.LeaveAt(work, now+10+uint64(w))
			loc.LeaveAt(step, now+20+uint64(w))
			now += 30 + uint64(w)
		}
		r, err := Analyze([]*tracefile.File{tracetest.Finish(t, m)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Series[0].Width != 2 || r.Series[0].Iterations != 600 {
			t.Fatalf("series of %d iterations, %d per value: want 600, merged pairwise", r.Series[0].Iterations, r.Series[0].Width)
		}
		var trends []Finding
		for _, f := range r.Findings {
			if f.Feature.Kind == dynamics.TrendUp || f.Feature.Kind == dynamics.StepUp {
				trends = append(trends, f)
			}
		}
		if len(trends) == 1 && trends[0].Series.Region == "work" && trends[0].From >= 380 && trends[0].From <= 420 && trends[0].To == 599 &&
			r.Findings[0].Feature == trends[0].Feature && math.Abs(trends[0].Severity-planted) < 0.15*planted {
			good++
		} else {
			var text strings.Builder
			render.DynamicsText(&text, r, 0)
			t.Logf("seed %d (planted %.0f ns):\n%s", seed, planted, text.String())
		}
	}
	if good < 9 {
		t.Errorf("the ramp was one trend of ~200 iterations, costliest, in %d of 10 seeds, want ≥ 9", good)
	}
}

// A region that works every tenth iteration, a checkpoint, is told as one
// periodic finding of the loop, not forty peaks.
func TestPeriodicRegion(t *testing.T) {
	cfg := measure.Config{Output: t.TempDir(), Name: "ckpt", Clock: "monotonic", TimerShift: measure.NoTimerShift}
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	step, work, ckpt := m.Phase("step"), m.Region("work"), m.Region("checkpoint")
	loc := m.Location("main")
	rng := rand.New(rand.NewPCG(7, 8))
	now := m.Now()
	for i := 0; i < 400; i++ {
		w := uint64(100_000 * math.Exp(0.05*rng.NormFloat64()))
		loc.EnterAt(step, now)
		loc.EnterAt(work, now+10)
		loc.LeaveAt(work, now+10+w)
		end := now + 20 + w
		if i%10 == 9 {
			c := uint64(300_000 * math.Exp(0.05*rng.NormFloat64()))
			loc.EnterAt(ckpt, end)
			loc.LeaveAt(ckpt, end+c)
			end += c + 10
		}
		loc.LeaveAt(step, end)
		now = end + 10
	}
	r, err := Analyze([]*tracefile.File{tracetest.Finish(t, m)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	render.DynamicsText(&text, r, 0)
	// The checkpoint's time, and its visits, are periodic; nothing else.
	if len(r.Findings) != 2 || r.Findings[0].Feature.Kind != dynamics.Periodic || r.Findings[0].Series.Region != "checkpoint" ||
		r.Findings[1].Feature.Kind != dynamics.Periodic || r.Findings[1].Series.Metric != "visits per iteration" ||
		!strings.Contains(text.String(), `"checkpoint" on main, time per iteration: a peak every 10 iterations over iterations 9–399 (40 of them), costing`) ||
		!strings.Contains(text.String(), `also in "step" around it`) {
		t.Errorf("want one periodic finding at checkpoint, step's folded into it:\n%s", text.String())
	}
	var svg bytes.Buffer
	if err := render.DynamicsSVG(&svg, r, 4); err != nil || bytes.Count(svg.Bytes(), []byte(`fill="#7b4fa8" fill-opacity="0.5"`)) != 2*40 {
		t.Errorf("SVG: want a tick at each of the 40 checkpoints: %v", err)
	}
}
