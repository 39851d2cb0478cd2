package dynamics

import (
	"fmt"
	"math"
	"slices"
)

// Options tune Analyze. The zero value gives the defaults.
type Options struct {
	// ScalesPerOctave is the number of scale-space levels per doubling of σ
	// (default 4). More levels track critical points more reliably and
	// measure stability more finely, at proportional cost.
	ScalesPerOctave int
	// MinStability is the number of levels at which a critical point must be
	// significant to be considered, the seed's thresholdStability (default 2:
	// a point significant at a single level is a fluke of that level).
	MinStability int
	// Threshold is the significance multiplier z: a slope, curvature, jump or
	// trend counts only if it exceeds z noise standard deviations of its own
	// estimate. Default: the universal threshold √(2 ln(N·L)) for N samples
	// and L levels, above which pure Gaussian noise rises at any of the N·L
	// places tested with small probability (Donoho and Johnstone 1994).
	Threshold float64
	// Noise is the standard deviation of the noise if known. Default: the
	// estimate of Transform.NoiseLevel.
	Noise float64
	// MinRelativeSeverity drops features whose |Severity| is below this
	// fraction of Σ|x|, the seed's thresholdTime (default 0: report every
	// significant feature).
	MinRelativeSeverity float64
}

// Analysis is the result of Analyze.
type Analysis struct {
	N int
	// Features are the significant features, ordered by From.
	Features []Feature
	Energy   Energy
	// Noise is the noise standard deviation used (estimated or given).
	Noise float64
	// Threshold is the significance multiplier used.
	Threshold float64
}

// MinFeatureSamples is the shortest series Analyze looks for features in;
// shorter series get energies only.
const MinFeatureSamples = 8

// Analyze quantifies the variability of x with the Haar transform and finds
// its relevant features with scale-space filtering. It returns an error, and
// nothing else, when x holds a NaN or an infinity or opt is invalid.
//
// The method, seed 004 chapter 6, with the choices the seed leaves open:
//
//  1. Noise: σ is estimated from the finest Haar coefficients (NoiseLevel)
//     and raised by two standard errors of that estimate.
//  2. Scale space: the series is smoothed with the discrete Gaussian at σ
//     from 0.5 to N/8 iterations, ScalesPerOctave levels per octave. At each
//     level the critical points are the extrema of the slope (edges: steps
//     and the flanks of peaks) and of the curvature (kinks: where trends
//     start and end). Only points whose value and prominence exceed
//     Threshold times the standard deviation that white noise of level σ has
//     after the same smoothing are kept: features carried by noise alone are
//     not reported.
//  3. The points are tracked from coarse to fine levels into contours; a
//     contour's stability is the number of levels it spans and its position
//     is the one at the finest level, as in the seed's interval tree.
//     Contours less stable than MinStability are dropped.
//  4. The positions start a piecewise-linear fit of the raw series;
//     breakpoints move to the best-fitting sample nearby and are kept only if
//     they lower the residual by more than 3·ln N·σ² (BIC).
//  5. Significant jumps between segments are steps, significant slopes are
//     trends; a rise followed by a fall back to the level (or the reverse) is
//     a peak (dip) unless it is wider than the flat stretches beside it.
//
// The inherent location accuracy is ±1 iteration for steps and peaks at
// least 3σ high, and for trend ends about √(σ/slope) iterations, the distance
// over which the bend is lost in the noise.
func Analyze(x []float64, opt Options) (Analysis, error) {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Analysis{}, fmt.Errorf("dynamics: sample %d is %v: the series must be finite", i, v)
		}
	}
	if err := opt.check(); err != nil {
		return Analysis{}, err
	}
	n := len(x)
	tr := Haar(x)
	a := Analysis{N: n, Energy: tr.Energy(), Noise: opt.Noise}
	if a.Noise == 0 {
		a.Noise = tr.NoiseLevel()
	}
	perOctave := cmpDefault(opt.ScalesPerOctave, 4)
	minStability := cmpDefault(opt.MinStability, 2)
	grid := scaleGrid(n, perOctave)
	a.Threshold = opt.Threshold
	if a.Threshold == 0 {
		a.Threshold = math.Sqrt(2 * math.Log(float64(max(n, 2)*len(grid))))
	}
	if n < MinFeatureSamples {
		return a, nil
	}

	// Rounding in the transforms is ~1e-16 of the largest sample per
	// operation; a floor far above it keeps a noise-free series from seeing
	// rounding as features.
	var peak float64
	for _, v := range x {
		peak = max(peak, math.Abs(v))
	}
	if peak == 0 {
		return a, nil
	}
	noise := a.Noise
	if opt.Noise == 0 {
		// The MAD of m = N/2 coefficients has a relative standard error of
		// 1.166/√m; thresholds use the estimate plus two standard errors, so
		// that an unlucky low estimate on a short series does not turn noise
		// into features.
		noise *= 1 + 2.33/math.Sqrt(float64(n/2))
	}
	// Floor: residual sums carry rounding of about 1e-16 × Σ(x - mean)²; a
	// noise-free series must not see it as structure.
	var mean, sumSq float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	for _, v := range x {
		sumSq += (v - mean) * (v - mean)
	}
	noise = max(noise, 1e-9*peak, 1e-6*math.Sqrt(sumSq))
	roundoff := 1e-11 * peak

	// Scale space, coarse to fine, tracking critical points.
	ss := newScaleSpace(x, grid[len(grid)-1])
	det := newLevelDetector(n)
	thr1 := make([]float64, len(grid))
	thr2 := make([]float64, len(grid))
	for k, s := range grid {
		f, c := diffNoise(s*s, decimation(s))
		thr1[k] = a.Threshold*noise*f + roundoff
		thr2[k] = a.Threshold*noise*c + roundoff
	}
	var tracks tracker
	var pts []criticalPoint
	smoothed := make([]float64, n)
	for k := len(grid) - 1; k >= 0; k-- {
		s := grid[k]
		d := decimation(s)
		l := ss.smooth(smoothed, s*s, d)
		pts = det.detect(pts[:0], l, d, s, thr1[k], thr2[k])
		window := 2.0
		if k+1 < len(grid) {
			window += 2*(grid[k+1]-s) + float64(decimation(grid[k+1]))
		}
		tracks.step(pts, s, window)
	}

	// Breakpoint candidates: stable contours at their finest position.
	var stable []track
	for _, t := range tracks.finish() {
		if t.stability >= minStability {
			stable = append(stable, t)
		}
	}
	slices.SortFunc(stable, func(a, b track) int { return a.pos - b.pos })
	bps := candidates(stable, n)
	seg := &segmentation{p: newPrefixSums(x), n: n, param: 2 * math.Log(float64(n)) * noise * noise}
	bps = attribute(seg.choose(bps), stable)
	fs := features(x, seg.describe(bps), grid, thr1)

	var total float64
	for _, v := range x {
		total += math.Abs(v)
	}
	for _, f := range fs {
		if math.Abs(f.Severity) >= opt.MinRelativeSeverity*total {
			a.Features = append(a.Features, f)
		}
	}
	return a, nil
}

// candidates returns the breakpoints suggested by the stable contours ts
// (sorted by position), at their finest positions. Kinks within 2σ+2 of an
// edge are dropped: the curvature of a smoothed step peaks at its two
// corners, σ before and after the edge (the seed's D and A episodes of a
// step); these are part of the step, not the start or end of a trend.
func candidates(ts []track, n int) []breakpoint {
	var edges []int
	for _, t := range ts {
		if t.kind == edgeUp || t.kind == edgeDown {
			edges = append(edges, t.pos)
		}
	}
	var bps []breakpoint
	for _, t := range ts {
		if t.pos < 1 || t.pos > n-1 {
			continue
		}
		if t.kind == kinkUp || t.kind == kinkDown {
			reach := int(2*t.sigma) + 2
			i, _ := slices.BinarySearch(edges, t.pos-reach)
			if i < len(edges) && edges[i] <= t.pos+reach {
				continue
			}
		}
		bps = append(bps, breakpoint{pos: t.pos, sigma: t.sigma, stability: t.stability})
		if t.kind == edgeUp || t.kind == edgeDown {
			// At the finest scale a one-iteration spike leaks into its
			// neighbours and its second edge may fall below the threshold;
			// offering both neighbours lets the fit close the pulse.
			for _, p := range [2]int{t.pos - 1, t.pos + 1} {
				if p >= 1 && p <= n-1 {
					bps = append(bps, breakpoint{pos: p, sigma: t.sigma, stability: t.stability})
				}
			}
		}
	}
	slices.SortFunc(bps, func(a, b breakpoint) int { return a.pos - b.pos })
	return mergeDuplicates(bps)
}

// attribute gives each chosen breakpoint the scale and stability of the
// most stable contour (ts, sorted by position) that ends within 2σ+2 of it;
// breakpoints that only the direct search found keep zero.
func attribute(bps []breakpoint, ts []track) []breakpoint {
	var reach float64
	for _, t := range ts {
		reach = max(reach, 2*t.sigma+2)
	}
	for j := range bps {
		bps[j].sigma, bps[j].stability = 0, 0
		p := bps[j].pos
		lo, _ := slices.BinarySearchFunc(ts, p-int(reach)-1, func(t track, p int) int { return t.pos - p })
		for _, t := range ts[lo:] {
			if float64(t.pos) > float64(p)+reach {
				break
			}
			if math.Abs(float64(t.pos-p)) > 2*t.sigma+2 {
				continue
			}
			if t.stability > bps[j].stability || t.stability == bps[j].stability && t.sigma < bps[j].sigma {
				bps[j].sigma, bps[j].stability = t.sigma, t.stability
			}
		}
	}
	return bps
}

// mergeDuplicates keeps one breakpoint per position, with the finest scale
// and the highest stability of the contours that end there.
func mergeDuplicates(bps []breakpoint) []breakpoint {
	out := bps[:0]
	for _, b := range bps {
		if n := len(out); n > 0 && out[n-1].pos == b.pos {
			out[n-1].sigma = math.Min(out[n-1].sigma, b.sigma)
			out[n-1].stability = max(out[n-1].stability, b.stability)
			continue
		}
		out = append(out, b)
	}
	return out
}

func (o Options) check() error {
	switch {
	case o.ScalesPerOctave < 0 || o.ScalesPerOctave > 64:
		return fmt.Errorf("dynamics: ScalesPerOctave %d: want 1..64, or 0 for the default", o.ScalesPerOctave)
	case o.MinStability < 0:
		return fmt.Errorf("dynamics: MinStability %d: want ≥ 0", o.MinStability)
	case o.Threshold < 0 || math.IsNaN(o.Threshold) || math.IsInf(o.Threshold, 0):
		return fmt.Errorf("dynamics: Threshold %v: want a finite value > 0, or 0 for the default", o.Threshold)
	case o.Noise < 0 || math.IsNaN(o.Noise) || math.IsInf(o.Noise, 0):
		return fmt.Errorf("dynamics: Noise %v: want a finite value ≥ 0", o.Noise)
	case o.MinRelativeSeverity < 0 || math.IsNaN(o.MinRelativeSeverity) || math.IsInf(o.MinRelativeSeverity, 0):
		return fmt.Errorf("dynamics: MinRelativeSeverity %v: want a finite value ≥ 0", o.MinRelativeSeverity)
	}
	return nil
}

func cmpDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
