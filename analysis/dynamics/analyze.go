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
	// significant to be considered, Oleynik's thresholdStability (default 2:
	// a point significant at a single level is a fluke of that level).
	MinStability int
	// Threshold is the significance multiplier z of the scale space: a slope
	// or curvature extremum counts only if it exceeds z standard deviations
	// that white noise has after the same smoothing. Default: the universal
	// threshold √(2 ln(N·L)) for N samples and L levels, which pure Gaussian
	// noise exceeds anywhere among the N·L places tested only with small
	// probability (Donoho and Johnstone 1994).
	Threshold float64
	// Noise is the standard deviation of the noise if known. Default: the
	// estimate of NoiseLevel.
	Noise float64
	// MinRelativeSeverity drops features whose |Severity| is below this
	// fraction of Total, Oleynik's thresholdTime (default 0: report every
	// significant feature).
	MinRelativeSeverity float64
	// Total is what MinRelativeSeverity is a fraction of, in value units ×
	// iterations: the time of the whole loop, say, when x is one region's
	// time in it. Default: Σ|x|.
	Total float64
}

// Analysis is the result of Analyze.
type Analysis struct {
	N int
	// Features are the significant features, ordered by From.
	Features []Feature
	Energy   Energy
	// Noise is the noise standard deviation: the estimate of NoiseLevel, or
	// Options.Noise when given. (Thresholds use the estimate raised by two of
	// its standard errors.)
	Noise float64
	// Threshold is the significance multiplier used.
	Threshold float64

	closes []int // per feature, the index of the rise it ends, or -1
}

// MinFeatureSamples is the shortest series Analyze looks for features in;
// shorter series get energies only: the noise estimate would rest on fewer
// than eight finest-scale coefficients, and from four of them pure noise
// looks like steps one time in ten.
const MinFeatureSamples = 16

// Analyze quantifies the variability of x with the Haar transform and finds
// its relevant features with scale-space filtering. It returns an error, and
// nothing else, when x holds a NaN or an infinity or opt is invalid.
//
// The method is Oleynik's, chapter 6; where Oleynik leaves a choice open:
//
//  1. Noise: σ is estimated from the finest Haar coefficients (NoiseLevel)
//     and raised by two standard errors of that estimate. A positive series
//     whose noise grows with its level (multiplicative) is analysed in
//     logarithms, where its noise is the same everywhere.
//  2. Outliers: samples (runs of up to three) farther than Threshold·σ
//     from the running median of 7 are one-iteration peaks or dips of their
//     own; the later steps see the median in their place, so an OS-like
//     interruption cannot cut a trend or pass for a step.
//  3. Scale space: the series is smoothed with Lindeberg's discrete
//     Gaussian at σ from 0.5 to N/8 iterations, ScalesPerOctave levels per
//     octave. At each level the critical points are the extrema of the slope
//     (edges: steps and the flanks of peaks) and of the curvature (kinks:
//     where trends start and end). Only points whose value and prominence
//     exceed Threshold times the standard deviation that white noise of
//     level σ has after the same smoothing are kept: features that only
//     noise carries are not reported.
//  4. The points are tracked from coarse to fine levels into contours; a
//     contour's stability is the number of levels it spans and its position
//     is the one at the finest level, as in Oleynik's interval tree.
//     Contours less stable than MinStability are dropped.
//  5. The contours' positions start a fit of the raw series by flat or
//     straight segments that jump or meet at breakpoints. Every parameter
//     (level, slope, breakpoint position) must lower the squared residual by
//     2·ln N·σ² (the risk inflation criterion); breakpoints move to the
//     best-fitting sample and each segment is searched for one more
//     breakpoint, which finds slow trends whose bend the scale space sees
//     only faintly.
//  6. Jumps are steps, sloped segments are trends; a rise followed by a
//     fall back to within a factor of two of its height (or the reverse) is
//     a peak (a dip) unless it is wider than the stretches beside it.
//     Consecutive changes in one direction with no flat stretch of
//     minTrendSamples between are one trend (a ramp the fit describes by
//     several pieces), or one step if all are jumps.
//  7. Costs: see Feature.Severity; they never exceed Σ|x|, alone or
//     together (TestCostsNeverExceedTheTotal).
//
// Location accuracy, measured over hundreds of noise draws
// (TestLocationAccuracy): steps of 5σ are placed exactly or ±1 iteration (3σ
// ones ±3), one-iteration spikes of 12σ exactly; the start or end of a trend,
// where the slope changes by s with L samples on the shorter side, within
// 6σ/(s·√L)+1 iterations (the standard error of a broken line's knot is
// about σ/(s·√L)). Spikes of 12σ are always found, of 8σ about four times
// in five: the universal threshold keeps pure noise quiet at the price of
// small single-iteration spikes.
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
	a := Analysis{N: n, Energy: Haar(x).Energy(), Noise: opt.Noise}
	perOctave := cmpDefault(opt.ScalesPerOctave, 4)
	grid := scaleGrid(n, perOctave)
	a.Threshold = opt.Threshold
	if a.Threshold == 0 {
		a.Threshold = math.Sqrt(2 * math.Log(float64(max(n, 2)*len(grid))))
	}
	var peak float64
	for _, v := range x {
		peak = max(peak, math.Abs(v))
	}
	if peak == 0 {
		return a, nil
	}
	// Work on x scaled by a power of two so that its largest sample is in
	// [0.5, 1): exact, and it keeps squares and sums of squares of huge or
	// tiny values from overflowing or underflowing.
	_, e := math.Frexp(peak)
	y := make([]float64, n)
	for i, v := range x {
		y[i] = math.Ldexp(v, -e)
	}
	noise := math.Ldexp(opt.Noise, -e)
	if opt.Noise == 0 {
		noise = NoiseLevel(y)
		a.Noise = math.Ldexp(noise, e)
	}
	if n < MinFeatureSamples {
		return a, nil
	}
	// Timings often vary by a factor rather than by an amount: an
	// iteration four times slower varies four times as much. Such a
	// series is analysed in logarithms, where its noise is the same
	// everywhere, so that the noise of its slow stretches does not look
	// like structure; the costs are then measured in value units.
	logDomain := opt.Noise == 0 && multiplicative(y)
	z := y
	if logDomain {
		z = make([]float64, n)
		for i, v := range y {
			z[i] = math.Log(v)
		}
		noise = NoiseLevel(z)
	}
	if opt.Noise == 0 {
		// The MAD of m independent values has a relative standard error
		// of 1.166/√m; the N-1 overlapping differences are worth about
		// N/2 independent ones. Thresholds use the estimate plus two
		// standard errors, so that an unlucky low estimate on a short
		// series does not turn noise into features.
		noise *= 1 + 2.33/math.Sqrt(float64(n/2))
	}
	noise = noiseFloor(z, noise)
	spikes, zc := findSpikes(z, noise, a.Threshold)
	// Outliers that recur at a fixed period are the series' regular
	// work, told as one feature; every place of the period is cleaned,
	// those the threshold missed too.
	per, periodic := findPeriodic(spikes, n)
	if periodic {
		spikes = per.clean(z, zc, spikes)
	}
	m, thr1 := fitModel(zc, noise, a.Threshold, grid, cmpDefault(opt.MinStability, 2))
	// The running median cannot judge the first and last samples; the fit
	// can: a level of one sample at an end (a slow first iteration) is an
	// outlier like the others, not a step.
	for refit := 0; refit < 2; refit++ {
		k := len(m.segs) - 1
		var end int
		switch {
		case k > 0 && m.segs[0].to == 0 && m.jumps[0]:
			end = 0
			zc[0] = m.segs[1].at(0)
		case k > 0 && m.segs[k].from == n-1 && m.jumps[k-1]:
			end = n - 1
			zc[n-1] = m.segs[k-1].at(float64(n - 1))
		default:
			refit = 2
			continue
		}
		spikes = append(spikes, spikeRun{from: end, to: end, up: z[end] > zc[end]})
		m, thr1 = fitModel(zc, noise, a.Threshold, grid, cmpDefault(opt.MinStability, 2))
	}
	clean := zc
	if logDomain {
		clean = make([]float64, n)
		for i, v := range zc {
			clean[i] = math.Exp(v)
		}
	}
	set := features(y, clean, logDomain, m, grid, thr1, spikes, per)
	for i := range set.fs {
		set.fs[i].Severity = math.Ldexp(set.fs[i].Severity, e)
	}
	a.Features, a.closes = set.fs, set.closes
	// Σ|x| on the scaled values, which cannot overflow.
	total := math.Ldexp(opt.Total, -e)
	if opt.Total == 0 {
		for _, v := range y {
			total += math.Abs(v)
		}
	}
	if opt.MinRelativeSeverity > 0 {
		a.Features, a.closes = a.relevant(math.Ldexp(opt.MinRelativeSeverity*total, e))
	}
	return a, nil
}

// Relevant returns the features that cost at least floor (in value units
// × iterations), with the falls that end a relevant rise: what a reader
// needs of the series when only costs above floor matter, such as 1 % of
// the whole loop's time (Oleynik's thresholdTime).
func (a Analysis) Relevant(floor float64) []Feature {
	fs, _ := a.relevant(floor)
	return fs
}

func (a Analysis) relevant(floor float64) ([]Feature, []int) {
	keep := make([]bool, len(a.Features))
	for i, f := range a.Features {
		keep[i] = math.Abs(f.Severity) >= floor
	}
	for i, c := range a.closes {
		if c >= 0 && keep[c] {
			keep[i] = true
		}
	}
	var fs []Feature
	var closes []int
	pos := make([]int, len(a.Features))
	for i, f := range a.Features {
		pos[i] = -1
		if keep[i] {
			pos[i] = len(fs)
			fs = append(fs, f)
		}
	}
	for i, c := range a.closes {
		if keep[i] {
			if c >= 0 {
				c = pos[c]
			}
			closes = append(closes, c)
		}
	}
	return fs, closes
}

// multiplicative reports whether the noise of the positive series y
// grows with its level: the logarithm of the size of each second
// difference |y[i+1] - 2y[i] + y[i-1]| (noise, with trends and smooth bumps
// cancelled) against the logarithm of the level there (the running
// median), fitted by
// a line over all steps, rises with a slope above one half (1 for noise
// proportional to the level, 0 for noise of a fixed amount). The logarithm
// of a noise sample's size has a fixed spread whatever its scale, so the
// slope's standard error is about 1.1/(spread of the log levels · √N): on a
// short series, or one whose level hardly changes, the test cannot tell, and
// the series keeps its values.
func multiplicative(y []float64) bool {
	n := len(y)
	if n < 3 || slices.Min(y) <= 0 {
		return false
	}
	level := runningMedian(y, spikeHalfWindow)
	var lx, ly []float64
	for i := 1; i+1 < n; i++ {
		if d := math.Abs(y[i+1] - 2*y[i] + y[i-1]); d > 0 {
			lx = append(lx, math.Log(level[i]))
			ly = append(ly, math.Log(d))
		}
	}
	m := float64(len(lx))
	if m < 16 {
		return false
	}
	var mx, my float64
	for i := range lx {
		mx += lx[i]
		my += ly[i]
	}
	mx /= m
	my /= m
	var sxy, sxx float64
	for i := range lx {
		sxy += (lx[i] - mx) * (ly[i] - my)
		sxx += (lx[i] - mx) * (lx[i] - mx)
	}
	// Decide only when the slope is known to ±0.25 (one standard error).
	if sxx == 0 || 1.1/math.Sqrt(sxx) > 0.25 {
		return false
	}
	return sxy > 0.5*sxx
}

// noiseFloor raises the noise level to what rounding alone could produce:
// the transforms round at about 1e-16 of the largest sample and residual
// sums at about 1e-16 × Σ(y - mean)²; a noise-free series must not see
// rounding as structure.
func noiseFloor(y []float64, noise float64) float64 {
	var mean, sumSq float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	for _, v := range y {
		sumSq += (v - mean) * (v - mean)
	}
	return max(noise, 1e-9, 1e-6*math.Sqrt(sumSq))
}

// fitModel runs the scale space and the fit on y with noise level noise
// and significance multiplier z; it returns the model and the slope
// thresholds of the levels.
func fitModel(y []float64, noise, z float64, grid []float64, minStability int) (model, []float64) {
	n := len(y)
	const roundoff = 1e-11

	// Scale space, coarse to fine, tracking critical points.
	ss := newScaleSpace(y, grid[len(grid)-1])
	det := newLevelDetector(n)
	thr1 := make([]float64, len(grid))
	thr2 := make([]float64, len(grid))
	for k, s := range grid {
		f, c := diffNoise(s*s, decimation(s))
		thr1[k] = z*noise*f + roundoff
		thr2[k] = z*noise*c + roundoff
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
	seg := &segmentation{p: newPrefixSums(y), n: n, param: 2 * math.Log(float64(n)) * noise * noise}
	bps = attachScale(seg.choose(bps), stable)
	return seg.describe(bps), thr1
}

// candidates returns the breakpoints suggested by the stable contours ts
// (sorted by position), at their finest positions. Kinks within 2σ+2 of an
// edge are dropped: the curvature of a smoothed step peaks at its two
// corners, σ before and after the edge (Oleynik's D and A episodes of a
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

// attachScale gives each chosen breakpoint the scale and stability of the
// most stable contour (ts, sorted by position) that ends within 2σ+2 of it;
// breakpoints that only the direct search found keep zero.
func attachScale(bps []breakpoint, ts []track) []breakpoint {
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
	case o.Total < 0 || math.IsNaN(o.Total) || math.IsInf(o.Total, 0):
		return fmt.Errorf("dynamics: Total %v: want a finite value ≥ 0, or 0 for Σ|x|", o.Total)
	}
	return nil
}

func cmpDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
