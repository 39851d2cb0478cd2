package dynamics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// busy returns n per-iteration times of base with the noise of a shared
// machine: a few percent that scale with the time (log-normal), and rare
// OS-like outliers that add 20 % to a few times the base.
func busy(seed uint64, n int, base, rel, spikeRate float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0xb05e))
	x := make([]float64, n)
	for i := range x {
		x[i] = base * math.Exp(rel*r.NormFloat64())
		if r.Float64() < spikeRate {
			x[i] += base * (0.2 + 2*r.ExpFloat64())
		}
	}
	return x
}

// relevant returns the features of x that cost at least 1 % of its total,
// as package trend asks by default.
func relevant(t *testing.T, x []float64) []Feature {
	t.Helper()
	a, err := Analyze(x, Options{MinRelativeSeverity: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	return a.Features
}

const plantedSeeds = 10

// A run whose time per iteration grows linearly over its last 200
// iterations from 1× to 4×, with busy-machine noise, shows one upward trend
// of about 200 iterations, the largest cost of the series, in at least 9
// of 10 noise draws, whatever else it shows.
func TestPlantedRamp(t *testing.T) {
	good := 0
	for seed := uint64(0); seed < plantedSeeds; seed++ {
		x := busy(seed, 600, 1e6, 0.05, 0.01)
		for i := 400; i < 600; i++ {
			x[i] *= 1 + 3*float64(i-400)/199
		}
		fs := relevant(t, x)
		var trends []Feature
		top := Feature{}
		for _, f := range fs {
			if f.Kind == TrendUp || f.Kind == StepUp {
				trends = append(trends, f)
			}
			if f.Severity > top.Severity {
				top = f
			}
		}
		// The planted excess is Σ 3e6·k/199 for k < 200 = 3e8.
		ok := len(trends) == 1 && trends[0].Kind == TrendUp && trends[0].From >= 385 && trends[0].From <= 415 &&
			trends[0].To == 599 && top == trends[0] && math.Abs(top.Severity-3e8) < 0.15*3e8
		if ok {
			good++
		} else {
			t.Logf("seed %d: %v", seed, fs)
		}
	}
	if good < 9 {
		t.Errorf("the ramp was one trend of ~200 iterations in %d of %d seeds, want ≥ 9", good, plantedSeeds)
	}
}

// A step from 1× to 1.5× at iteration 250 of 500 is one step up there,
// costing about 0.5× for 250 iterations.
func TestPlantedStep(t *testing.T) {
	good := 0
	for seed := uint64(0); seed < plantedSeeds; seed++ {
		x := busy(seed, 500, 1e6, 0.05, 0.01)
		for i := 250; i < 500; i++ {
			x[i] *= 1.5
		}
		fs := relevant(t, x)
		var lasting []Feature
		for _, f := range fs {
			if f.Kind != Peak && f.Kind != Dip {
				lasting = append(lasting, f)
			}
		}
		if len(lasting) == 1 && lasting[0].Kind == StepUp && lasting[0].To >= 249 && lasting[0].To <= 251 &&
			math.Abs(lasting[0].Severity-0.5e6*250) < 0.1*0.5e6*250 {
			good++
		} else {
			t.Logf("seed %d: %v", seed, fs)
		}
	}
	if good < 9 {
		t.Errorf("the step was found in %d of %d seeds, want ≥ 9", good, plantedSeeds)
	}
}

// One iteration ten times slower than the others in 400 is one peak
// there, costing about 9× the base, and nothing else is relevant.
func TestPlantedSpike(t *testing.T) {
	good := 0
	for seed := uint64(0); seed < plantedSeeds; seed++ {
		x := busy(seed, 400, 1e6, 0.05, 0)
		x[123] = 10e6
		fs := relevant(t, x)
		if len(fs) == 1 && fs[0].Kind == Peak && fs[0].From == 123 && fs[0].To == 123 && math.Abs(fs[0].Severity-9e6) < 0.5e6 {
			good++
		} else {
			t.Logf("seed %d: %v", seed, fs)
		}
	}
	if good < 9 {
		t.Errorf("the spike was found alone in %d of %d seeds, want ≥ 9", good, plantedSeeds)
	}
}

// Noise with rare OS-like outliers has no relevant feature, or only
// outliers large enough to cost 1 % of the run (peaks of one or a few
// iterations), in at least 9 of 10 draws; no steps or trends in any.
func TestPlantedNoise(t *testing.T) {
	quiet := 0
	for seed := uint64(0); seed < plantedSeeds; seed++ {
		x := busy(seed, 500, 1e6, 0.05, 0.01)
		fs := relevant(t, x)
		onlySpikes := true
		for _, f := range fs {
			if f.Kind != Peak || f.To-f.From > 2 {
				onlySpikes = false
			}
			if f.Kind != Peak && f.Kind != Dip {
				t.Errorf("seed %d: noise gave a %v: %v", seed, f.Kind, fs)
			}
		}
		if onlySpikes {
			quiet++
		} else {
			t.Logf("seed %d: %v", seed, fs)
		}
	}
	if quiet < 9 {
		t.Errorf("noise was quiet or only spikes in %d of %d seeds, want ≥ 9", quiet, plantedSeeds)
	}
	// Without the relevance floor, the only features are still outliers.
	for seed := uint64(0); seed < plantedSeeds; seed++ {
		a, _ := Analyze(busy(seed, 500, 1e6, 0.05, 0.01), Options{})
		for _, f := range a.Features {
			if f.Kind != Peak && f.Kind != Dip || f.To-f.From > 3 {
				t.Errorf("seed %d: noise gave %v", seed, f)
			}
		}
	}
}

// A feature's cost is time over the baseline: no feature costs more than
// the series' total, nor do all features together, on random series made
// of steps, ramps, spikes and noise of every kind, positive as times are.
func TestCostsNeverExceedTheTotal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		n := 16 + r.IntN(800)
		x := busy(uint64(trial), n, 1+r.Float64()*1e6, 0.01+0.3*r.Float64(), 0.05*r.Float64())
		for k := r.IntN(6); k > 0; k-- {
			at := r.IntN(n)
			switch r.IntN(4) {
			case 0:
				f := math.Exp(r.NormFloat64())
				for i := at; i < n; i++ {
					x[i] *= f
				}
			case 1:
				s := r.NormFloat64() * 5 / float64(n)
				for i := at; i < n; i++ {
					x[i] *= math.Max(0.05, 1+s*float64(i-at))
				}
			case 2:
				x[at] *= 1 + 20*r.Float64()
			default:
				w := 1 + r.IntN(n/4+1)
				for i := at; i < min(n, at+w); i++ {
					x[i] *= 3
				}
			}
		}
		if trial%3 == 0 {
			x[r.IntN(n)] = 0 // a region not visited in one iteration
		}
		var total float64
		for _, v := range x {
			total += v
		}
		a, err := Analyze(x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, f := range a.Features {
			if math.Abs(f.Severity) > total*(1+1e-9) {
				t.Errorf("trial %d: %v costs more than the total %g", trial, f, total)
			}
			if f.Severity > 0 {
				sum += f.Severity
			}
		}
		if sum > total*(1+1e-9) {
			t.Errorf("trial %d: features cost %g together, more than the total %g: %v", trial, sum, total, a.Features)
		}
	}
}

// Work every tenth iteration (a checkpoint five times as long as an
// iteration, or a region called only then) is one periodic feature, not
// forty peaks, and nothing else but outliers, in at least 9 of 10 noise
// draws.
func TestPlantedPeriodic(t *testing.T) {
	for _, onlyThen := range []bool{false, true} {
		good := 0
		for seed := uint64(0); seed < plantedSeeds; seed++ {
			x := busy(seed, 400, 1e6, 0.05, 0.005)
			var planted float64
			for i := range x {
				switch {
				case i%10 == 9:
					planted += 4 * x[i]
					x[i] *= 5
				case onlyThen:
					x[i] = 0
				}
			}
			if onlyThen {
				planted = 0
				for _, v := range x {
					planted += v
				}
			}
			// The rare OS-like outliers may be peaks of their own.
			var per []Feature
			others := false
			for _, f := range relevant(t, x) {
				switch {
				case f.Kind == Periodic:
					per = append(per, f)
				case f.Kind != Peak || f.To-f.From > 1:
					others = true
				}
			}
			fs := per
			if len(per) == 1 && !others && per[0].Period == 10 && per[0].From == 9 && per[0].To == 399 &&
				math.Abs(per[0].Severity-planted) < 0.1*planted {
				good++
			} else {
				t.Logf("only then %v, seed %d: %v (planted %g)", onlyThen, seed, fs, planted)
			}
		}
		if good < 9 {
			t.Errorf("only then %v: one periodic feature in %d of %d seeds, want ≥ 9", onlyThen, good, plantedSeeds)
		}
	}
}
