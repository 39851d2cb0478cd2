package dynamics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// series returns n samples of level base with Gaussian noise of standard
// deviation sigma from a seeded generator.
func series(seed uint64, n int, base, sigma float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	x := make([]float64, n)
	for i := range x {
		x[i] = base + sigma*r.NormFloat64()
	}
	return x
}

func addStep(x []float64, at int, h float64) []float64 {
	for i := at; i < len(x); i++ {
		x[i] += h
	}
	return x
}

// addRamp adds slope·(i - at) for i > at: the series leaves its level after
// iteration at.
func addRamp(x []float64, at int, slope float64) []float64 {
	for i := at + 1; i < len(x); i++ {
		x[i] += slope * float64(i-at)
	}
	return x
}

func analyze(t *testing.T, x []float64) Analysis {
	t.Helper()
	a, err := Analyze(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func kinds(fs []Feature) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Kind.String())
	}
	return strings.Join(s, ", ")
}

// where returns the iteration a test locates a feature by: the first
// iteration at the new level for a step, the start of a trend, the middle
// of a peak or dip.
func where(f Feature) int {
	switch f.Kind {
	case StepUp, StepDown:
		return f.To
	case TrendUp, TrendDown:
		return f.From
	}
	return (f.From + f.To) / 2
}

// trendTolerance is the location accuracy of a trend's start: the knot of
// a broken line whose slope changes by slope, fitted to samples with noise
// sigma, L of them on the shorter side, has a standard error of about
// σ/(slope·√L); six of them, plus one for rounding, held in 1000 draws
// while this package was developed (TestLocationAccuracy keeps 300).
func trendTolerance(sigma, slope float64, l int) int {
	return int(math.Ceil(6*sigma/(math.Abs(slope)*math.Sqrt(float64(l))))) + 1
}

// TestKnownSignals checks that a step, a ramp, a spike and a dip plus
// Gaussian noise give exactly that feature at the right iteration, for
// several noise draws.
func TestKnownSignals(t *testing.T) {
	const n = 512
	cases := []struct {
		name string
		make func(seed uint64) []float64
		kind Kind
		at   int
		tol  int
		// severity expected from the signal without noise, and tolerance
		severity, sevTol float64
	}{
		{"step up", func(s uint64) []float64 { return addStep(series(s, n, 10, 1), 200, 5) },
			StepUp, 200, 1, 5 * 312, 0.08 * 5 * 312},
		// A fall costs the excess before it over the level after it.
		{"step down", func(s uint64) []float64 { return addStep(series(s, n, 10, 1), 300, -5) },
			StepDown, 300, 1, 5 * 300, 0.08 * 5 * 300},
		{"ramp up", func(s uint64) []float64 { return addRamp(series(s, n, 10, 1), 200, 0.1) },
			TrendUp, 200, trendTolerance(1, 0.1, 200), 0.1 * 311 * 312 / 2, 0.08 * 0.1 * 311 * 312 / 2},
		// The baseline is the end level, 50 - 0.05·411: the 101 iterations
		// before the trend and the triangle above it.
		{"ramp down", func(s uint64) []float64 { return addRamp(series(s, n, 50, 1), 100, -0.05) },
			TrendDown, 100, trendTolerance(1, 0.05, 100), 0.05*411*101 + 0.05*411*410/2, 0.08 * 0.05 * 411 * 412 / 2},
		{"spike", func(s uint64) []float64 {
			x := series(s, n, 10, 1)
			x[123] += 12
			return x
		}, Peak, 123, 0, 12, 4},
		{"dip", func(s uint64) []float64 {
			x := series(s, n, 10, 1)
			x[400] -= 12
			return x
		}, Dip, 400, 0, -12, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(0); seed < 20; seed++ {
				a := analyze(t, c.make(seed))
				if len(a.Features) != 1 || a.Features[0].Kind != c.kind {
					t.Fatalf("seed %d: features %v, want one %v", seed, a.Features, c.kind)
				}
				f := a.Features[0]
				if d := where(f) - c.at; d < -c.tol || d > c.tol {
					t.Errorf("seed %d: %v located at %d, want %d ± %d", seed, f, where(f), c.at, c.tol)
				}
				if math.Abs(f.Severity-c.severity) > c.sevTol {
					t.Errorf("seed %d: %v: severity %v, want %v ± %v", seed, f, f.Severity, c.severity, c.sevTol)
				}
				if f.Kind == Peak || f.Kind == Dip {
					if f.From != c.at || f.To != c.at {
						t.Errorf("seed %d: one-iteration %v covers [%d,%d], want [%d,%d]", seed, f.Kind, f.From, f.To, c.at, c.at)
					}
				}
			}
		})
	}
}

// Without noise every position is exact.
func TestKnownSignalsNoiseFree(t *testing.T) {
	flat := func(n int) []float64 { return series(0, n, 7, 0) }
	cases := []struct {
		name     string
		x        []float64
		want     []Feature
		severity []float64
	}{
		{"step up", addStep(flat(300), 120, 2), []Feature{{Kind: StepUp, From: 119, To: 120}}, []float64{2 * 180}},
		{"step down", addStep(flat(301), 77, -1.5), []Feature{{Kind: StepDown, From: 76, To: 77}}, []float64{1.5 * 77}},
		{"ramp up", addRamp(flat(400), 150, 0.02), []Feature{{Kind: TrendUp, From: 150, To: 399}}, []float64{0.02 * 249 * 250 / 2}},
		// Down to 7 - 0.01·349, the baseline: 51 iterations before, then the triangle.
		{"ramp down", addRamp(flat(400), 50, -0.01), []Feature{{Kind: TrendDown, From: 51, To: 399}}, []float64{0.01*349*51 + 0.01*349*348/2}},
		{"spike", func() []float64 { x := flat(256); x[100] = 9; return x }(), []Feature{{Kind: Peak, From: 100, To: 100}}, []float64{2}},
		{"pulse", func() []float64 {
			x := flat(256)
			for i := 100; i < 110; i++ {
				x[i] += 1
			}
			return x
		}(), []Feature{{Kind: Peak, From: 100, To: 109}}, []float64{10}},
		{"plateau", func() []float64 {
			x := flat(256)
			for i := 50; i < 210; i++ {
				x[i] += 1
			}
			return x
		}(), []Feature{{Kind: StepUp, From: 49, To: 50}, {Kind: StepDown, From: 209, To: 210}}, []float64{160, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := analyze(t, c.x)
			if len(a.Features) != len(c.want) {
				t.Fatalf("features %v, want %v", a.Features, c.want)
			}
			for i, f := range a.Features {
				w := c.want[i]
				if f.Kind != w.Kind || f.From != w.From || f.To != w.To {
					t.Errorf("feature %d: %v, want %v [%d,%d]", i, f, w.Kind, w.From, w.To)
				}
				if math.Abs(f.Severity-c.severity[i]) > 1e-6*math.Abs(c.severity[i]) {
					t.Errorf("feature %d: severity %v, want %v", i, f.Severity, c.severity[i])
				}
			}
		})
	}
}

// Pure noise carries no feature, whatever its length and level.
func TestFlatNoiseHasNoFeatures(t *testing.T) {
	for _, n := range []int{MinFeatureSamples, 20, 64, 100, 256, 1000, 5000} {
		for seed := uint64(0); seed < 30; seed++ {
			a := analyze(t, series(seed, n, 1000*float64(seed%3), 1+float64(seed%4)))
			if len(a.Features) != 0 {
				t.Errorf("n=%d seed %d: noise gave %v", n, seed, a.Features)
			}
		}
	}
	// A constant has no noise at all and no feature either.
	if a := analyze(t, series(0, 100, 3, 0)); len(a.Features) != 0 || a.Noise != 0 {
		t.Errorf("constant: noise %v, features %v", a.Noise, a.Features)
	}
}

// The shape of Oleynik's example (fig. 6.1): a peak near
// iteration 20, flat until 100, then a step decrease.
func TestSeedExampleShape(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		x := series(seed, 128, 0.4, 0.03)
		for i := 14; i <= 26; i++ {
			x[i] += 0.6 * (1 - float64((i-20)*(i-20))/49)
		}
		addStep(x, 100, -0.25)
		a := analyze(t, x)
		if got := kinds(a.Features); got != "peak, step down" {
			t.Fatalf("seed %d: %v", seed, a.Features)
		}
		// The bump's flanks are 5σ high one iteration inside its ends: they
		// blur into the noise by an iteration or two.
		if p := a.Features[0]; p.From < 11 || p.From > 17 || p.To < 23 || p.To > 29 {
			t.Errorf("seed %d: peak %v, want about [14,26]", seed, p)
		}
		if s := a.Features[1]; s.To != 100 {
			t.Errorf("seed %d: step %v, want at 100", seed, s)
		}
		if a.Features[0].Kind != Peak || a.Features[1].Kind != StepDown {
			t.Errorf("seed %d: %v; want a peak, then a step decrease", seed, a.Features)
		}
	}
}

// A spike on top of a trend is both; a step followed by a trend is both.
func TestCompositeSignals(t *testing.T) {
	for seed := uint64(0); seed < 10; seed++ {
		x := addRamp(series(seed, 600, 20, 0.5), 100, 0.05)
		x[400] += 10
		a := analyze(t, x)
		if got := kinds(a.Features); got != "upward trend, peak, upward trend" && got != "upward trend, peak" {
			t.Errorf("seed %d: trend with spike gave %v", seed, a.Features)
		}
		x = addRamp(addStep(series(seed, 600, 20, 0.5), 200, 4), 350, -0.04)
		a = analyze(t, x)
		if got := kinds(a.Features); got != "step up, downward trend" {
			t.Errorf("seed %d: step then trend gave %v", seed, a.Features)
		}
	}
}

func TestFeaturesAreOrderedAndInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 50; trial++ {
		n := 16 + r.IntN(2000)
		x := series(uint64(trial), n, 5, 0.2+r.Float64())
		for k := r.IntN(6); k > 0; k-- {
			switch r.IntN(3) {
			case 0:
				addStep(x, r.IntN(n), 10*r.NormFloat64())
			case 1:
				addRamp(x, r.IntN(n), 0.05*r.NormFloat64())
			default:
				x[r.IntN(n)] += 20 * r.NormFloat64()
			}
		}
		a := analyze(t, x)
		for i, f := range a.Features {
			if f.From < 0 || f.To >= n || f.From > f.To || math.IsNaN(f.Severity) {
				t.Fatalf("trial %d: feature %v out of [0,%d)", trial, f, n)
			}
			if i > 0 && f.From < a.Features[i-1].From {
				t.Fatalf("trial %d: features out of order: %v", trial, a.Features)
			}
		}
	}
}

func TestAnalyzeRejectsBadInput(t *testing.T) {
	x := series(1, 50, 1, 1)
	x[17] = math.NaN()
	if _, err := Analyze(x, Options{}); err == nil || !strings.Contains(err.Error(), "sample 17") {
		t.Errorf("NaN: err = %v, want one naming sample 17", err)
	}
	x[17] = math.Inf(-1)
	if _, err := Analyze(x, Options{}); err == nil || !strings.Contains(err.Error(), "-Inf") {
		t.Errorf("-Inf: err = %v", err)
	}
	x[17] = 1
	for _, o := range []Options{
		{ScalesPerOctave: -1}, {ScalesPerOctave: 100}, {MinStability: -2}, {Threshold: -1},
		{Threshold: math.NaN()}, {Noise: -1}, {Noise: math.Inf(1)}, {MinRelativeSeverity: -0.1},
	} {
		if _, err := Analyze(x, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestShortSeries(t *testing.T) {
	for n := 0; n < MinFeatureSamples; n++ {
		x := series(uint64(n), n, 3, 1)
		if n > 2 {
			x[n/2] += 100
		}
		a := analyze(t, x)
		if len(a.Features) != 0 || a.N != n {
			t.Errorf("n=%d: %+v", n, a)
		}
		var want float64
		for _, v := range x {
			want += v * v
		}
		if relErr(a.Energy.Total, want) > 1e-12 {
			t.Errorf("n=%d: total energy %v, want %v", n, a.Energy.Total, want)
		}
	}
}

func TestOptions(t *testing.T) {
	x := addStep(series(3, 400, 10, 1), 100, 1.5)
	x[300] += 9
	a := analyze(t, x)
	if got := kinds(a.Features); got != "step up, peak" {
		t.Fatalf("default options: %v", a.Features)
	}
	// The step costs 1.5×300 of Σ|x| ≈ 4450; the spike 9: a 1% floor keeps
	// the step only.
	b, err := Analyze(x, Options{MinRelativeSeverity: 0.01})
	if err != nil || kinds(b.Features) != "step up" {
		t.Errorf("MinRelativeSeverity 0.01: %v, %v", b.Features, err)
	}
	// A known noise level far above the truth hides both.
	c, err := Analyze(x, Options{Noise: 10})
	if err != nil || len(c.Features) != 0 || c.Noise != 10 {
		t.Errorf("Noise 10: %v, %v", c.Features, err)
	}
	// A higher threshold hides the spike's scale-space trace.
	d, err := Analyze(x, Options{Threshold: 12})
	if err != nil || kinds(d.Features) == "step up, peak" || d.Threshold != 12 {
		t.Errorf("Threshold 12: %v, %v", d.Features, err)
	}
	// Fewer levels per octave still find both.
	e, err := Analyze(x, Options{ScalesPerOctave: 2})
	if err != nil || kinds(e.Features) != "step up, peak" {
		t.Errorf("ScalesPerOctave 2: %v, %v", e.Features, err)
	}
}

func TestKindString(t *testing.T) {
	want := []string{"peak", "dip", "step up", "step down", "upward trend", "downward trend"}
	for k, w := range want {
		if Kind(k).String() != w {
			t.Errorf("Kind(%d) = %q, want %q", k, Kind(k).String(), w)
		}
	}
	if s := Kind(42).String(); s != "Kind(42)" {
		t.Errorf("Kind(42) = %q", s)
	}
	f := Feature{Kind: Peak, From: 3, To: 5, Severity: 1.5, Scale: 0.5, Stability: 4}
	if s := fmt.Sprint(f); s != "peak [3,5] severity 1.5 (σ=0.5, stability 4)" {
		t.Errorf("Feature.String() = %q", s)
	}
}

// Scaling the series by any factor scales the noise and the severities and
// changes nothing else, down to subnormal and up to near-overflow values.
func TestScaleInvariance(t *testing.T) {
	x := addRamp(addStep(series(8, 700, 3, 0.5), 250, 3), 450, -0.02)
	x[100] += 6
	ref := analyze(t, x)
	if got := kinds(ref.Features); got != "peak, step up, downward trend" {
		t.Fatalf("reference: %v", ref.Features)
	}
	for _, f := range []float64{1e-300, 3e-7, 1 / 3.0, 1024, 7e12, 1e300} {
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * f
		}
		a := analyze(t, y)
		if len(a.Features) != len(ref.Features) || relErr(a.Noise, ref.Noise*f) > 1e-9 {
			t.Fatalf("×%g: noise %v features %v, want noise %v features %v", f, a.Noise, a.Features, ref.Noise*f, ref.Features)
		}
		for i, g := range a.Features {
			r := ref.Features[i]
			if g.Kind != r.Kind || g.From != r.From || g.To != r.To || relErr(g.Severity, r.Severity*f) > 1e-6 {
				t.Errorf("×%g: feature %d is %v, want %v scaled", f, i, g, r)
			}
		}
	}
}

// TestLocationAccuracy backs the accuracy stated in Analyze's documentation
// with more noise draws than TestKnownSignals.
func TestLocationAccuracy(t *testing.T) {
	type trial struct {
		n, at int
		slope float64
	}
	for _, c := range []trial{{512, 200, 0.1}, {512, 200, 0.03}, {2000, 500, 0.02}} {
		tol := trendTolerance(1, c.slope, min(c.at, c.n-c.at))
		for seed := uint64(100); seed < 200; seed++ {
			a := analyze(t, addRamp(series(seed, c.n, 10, 1), c.at, c.slope))
			if len(a.Features) != 1 || a.Features[0].Kind != TrendUp {
				t.Fatalf("%+v seed %d: %v", c, seed, a.Features)
			}
			if d := a.Features[0].From - c.at; d < -tol || d > tol {
				t.Errorf("%+v seed %d: trend starts at %d, want %d ± %d", c, seed, a.Features[0].From, c.at, tol)
			}
		}
	}
	for seed := uint64(100); seed < 200; seed++ {
		a := analyze(t, addStep(series(seed, 1000, 10, 1), 500, -5))
		if len(a.Features) != 1 || a.Features[0].Kind != StepDown || a.Features[0].To < 499 || a.Features[0].To > 501 {
			t.Errorf("seed %d: 5σ step at 500 gave %v", seed, a.Features)
		}
		x := series(seed, 1000, 10, 1)
		x[250] += 12
		a = analyze(t, x)
		if len(a.Features) != 1 || a.Features[0].Kind != Peak || a.Features[0].From != 250 || a.Features[0].To != 250 {
			t.Errorf("seed %d: 12σ spike at 250 gave %v", seed, a.Features)
		}
	}
}
