package dynamics

import (
	"math"
	"slices"
	"sync"
)

// The scale-space image (Oleynik, §6.3.3–6.3.6) is computed with Lindeberg's
// discrete analogue of the Gaussian, T(n, t) = e^{-t} I_n(t) of variance t = σ²,
// whose Fourier transform is exp(t(cos ω - 1)). Convolving the series, extended
// by half-sample reflection at both ends (the zero-flux boundary of the
// diffusion equation, which adds no edge at the ends), is a multiplication of
// its DCT-II coefficients by that factor: exact at every scale and free of
// the phantom zero-crossings of a sampled Gaussian. Fine levels (σ < 8)
// convolve with the kernel directly, which is cheaper there; coarse levels
// are sampled on a grid of step about σ/4 and cost O(M/step · log M).

// scaleSpace smooths one series at any scale.
type scaleSpace struct {
	series   []float64
	n, m     int
	dcts     map[int]*dct // by length: m, m/2, m/4, ...
	spectrum []float64    // DCT-II of the reflected series
	coef     []float64    // work: attenuated spectrum
	full     []float64    // work: smoothed series on the grid
	cosine   []float64    // cos(πk/m) - 1
}

// newScaleSpace prepares smoothing of x up to scale sigmaMax. Lengths that
// are not powers of two are extended by reflection to a power of two m with
// at least 8·sigmaMax samples past the end, so that the reflection the DCT
// imposes at m is farther from the series than the kernel reaches (its mass
// beyond 8σ is below 1e-15): the result on [0, n) is then the one with
// reflection at n.
func newScaleSpace(x []float64, sigmaMax float64) *scaleSpace {
	n := len(x)
	m := 1
	for m < n {
		m <<= 1
	}
	if m != n {
		pad := min(int(math.Ceil(8*sigmaMax))+1, n)
		for m < n+pad {
			m <<= 1
		}
	}
	s := &scaleSpace{series: x, n: n, m: m, dcts: map[int]*dct{},
		spectrum: make([]float64, m), coef: make([]float64, m), full: make([]float64, m),
		cosine: make([]float64, m)}
	ext := s.full
	for i := range ext {
		p := i % (2 * n)
		if p >= n {
			p = 2*n - 1 - p
		}
		ext[i] = x[p]
	}
	s.transform(m).forward(s.spectrum, ext)
	for k := range s.cosine {
		// cos θ - 1 = -2 sin²(θ/2) keeps precision at small θ.
		h := math.Sin(math.Pi * float64(k) / float64(2*m))
		s.cosine[k] = -2 * h * h
	}
	return s
}

// transform returns the DCT of length m, sharing tables with the one of
// length s.m.
func (s *scaleSpace) transform(m int) *dct {
	d, ok := s.dcts[m]
	if !ok {
		if m == s.m {
			d = newDCT(m)
		} else {
			d = s.transform(s.m).sub(m)
		}
		s.dcts[m] = d
	}
	return d
}

// decimation returns the grid step used at scale sigma: the largest power
// of two not above σ/4. The smoothed series then has no energy above
// e^{-8π²} ≈ 1e-34 of the grid's Nyquist frequency, so sampling it every
// step samples loses nothing, and coarse levels cost O(M/step) instead of
// O(M) (the whole scale space costs about as much as its 16 finest levels).
func decimation(sigma float64) int {
	d := 1
	for float64(2*d) <= sigma/4 {
		d *= 2
	}
	return d
}

// gridPoints returns how many grid points of step d lie in [0, n): the
// points are at d·j + (d-1)/2.
func gridPoints(n, d int) int {
	return (2*n - d + 1 + 2*d - 1) / (2 * d)
}

// directSigma is the scale below which smoothing convolves the series with
// the kernel directly: up to 8σ+8 taps on either side cost less than an
// M-point FFT there.
const directSigma = 8

// smooth writes the series smoothed at variance t, sampled every d samples
// at d·j + (d-1)/2, into dst and returns it. The samples of the inverse
// DCT-II of length m at those points are the inverse DCT-II of length m/d of
// the first m/d coefficients, divided by d (the others are negligible).
func (s *scaleSpace) smooth(dst []float64, t float64, d int) []float64 {
	if d == 1 && t < directSigma*directSigma {
		return s.convolve(dst, t)
	}
	md := s.m / d
	for k, c := range s.spectrum[:md] {
		s.coef[k] = c * math.Exp(t*s.cosine[k])
	}
	s.transform(md).inverse(s.full[:md], s.coef[:md])
	dst = dst[:gridPoints(s.n, d)]
	inv := 1 / float64(d)
	for j := range dst {
		dst[j] = s.full[j] * inv
	}
	return dst
}

// convolve smooths at variance t by direct convolution with the kernel
// truncated at 8σ+8 (the mass beyond is below 1e-15: at small t the kernel's
// tail is Poisson-like, heavier than a Gaussian's of the same σ), reflecting
// at the ends like the DCT does.
func (s *scaleSpace) convolve(dst []float64, t float64) []float64 {
	x := s.series
	n := len(x)
	kernel := discreteGaussian(t, int(math.Ceil(8*math.Sqrt(t)))+8)
	r := len(kernel) - 1
	dst = dst[:n]
	at := func(i int) float64 {
		p := i % (2 * n)
		if p < 0 {
			p += 2 * n
		}
		if p >= n {
			p = 2*n - 1 - p
		}
		return x[p]
	}
	for i := range dst {
		v := kernel[0] * x[i]
		if i >= r && i+r < n {
			for k := 1; k <= r; k++ {
				v += kernel[k] * (x[i-k] + x[i+k])
			}
		} else {
			for k := 1; k <= r; k++ {
				v += kernel[k] * (at(i-k) + at(i+k))
			}
		}
		dst[i] = v
	}
	return dst
}

// discreteGaussian returns T(k, t) = e^{-t} I_k(t) for k = 0..r, computed
// as (1/π)∫_0^π cos(kω) e^{t(cos ω - 1)} dω by the trapezoidal rule, which is
// exact to rounding for a periodic analytic integrand sampled this finely,
// and normalised so that the two-sided kernel sums to 1.
func discreteGaussian(t float64, r int) []float64 {
	// The integrand's Fourier coefficients beyond order k are I_k(t)/I_0(t),
	// below 1e-30 for k > 100 at the t < 64 used here: 512 points alias
	// nothing that matters.
	const points = 512
	h := math.Pi / points
	kernel := make([]float64, r+1)
	for i := 0; i <= points; i++ {
		w := float64(i) * h
		sw := math.Sin(w / 2)
		e := math.Exp(-2 * t * sw * sw)
		if i == 0 || i == points {
			e /= 2
		}
		// cos(kω) by the Chebyshev recurrence.
		c1 := math.Cos(w)
		prev, cur := c1, 1.0 // cos(-ω), cos(0)
		for k := range kernel {
			kernel[k] += e * cur
			prev, cur = cur, 2*c1*cur-prev
		}
	}
	sum := kernel[0]
	for k := 1; k <= r; k++ {
		sum += 2 * kernel[k]
	}
	for k := range kernel {
		kernel[k] /= sum
	}
	return kernel
}

// diffNoise returns the standard deviations of the first and second
// differences, over a grid step d and divided by d and d², of white noise of
// unit variance smoothed at variance t. For d = 1 these are
// sqrt(Σ_n (T(n+1,t) - T(n,t))²) and the same for the second difference. By
// Parseval they are (1/π)∫_0^π ((2 - 2cos dω)/d²)^p e^{2t(cos ω - 1)} dω for
// p = 1, 2. The integrand is even, smooth and negligible beyond
// ω = 12/√(2t), so the trapezoidal rule on [0, min(π, 12/√(2t))] is
// accurate to rounding.
func diffNoise(t float64, d int) (first, second float64) {
	key := noiseKey{t, d}
	if v, ok := noiseCache.Load(key); ok {
		r := v.([2]float64)
		return r[0], r[1]
	}
	first, second = integrateDiffNoise(t, d, 512)
	noiseCache.Store(key, [2]float64{first, second})
	return first, second
}

// noiseCache holds diffNoise by scale: the levels are the same for every
// series, and each value costs a thousand exponentials.
var noiseCache sync.Map

type noiseKey struct {
	t float64
	d int
}

// integrateDiffNoise evaluates the diffNoise integrals with the given
// number of trapezoids; the integrand spans the interval whatever t is, so
// a few hundred are accurate to rounding.
func integrateDiffNoise(t float64, d, points int) (first, second float64) {
	top := math.Pi
	if t > 0 {
		top = min(math.Pi, 12/math.Sqrt(2*t))
	}
	h := top / float64(points)
	dd := float64(d)
	var s1, s2 float64
	for i := 0; i <= points; i++ {
		w := float64(i) * h
		sh := math.Sin(dd * w / 2)
		diff := 4 * sh * sh / (dd * dd) // (2 - 2cos dω)/d²
		sw := math.Sin(w / 2)
		e := math.Exp(-4 * t * sw * sw) // e^{2t(cos ω - 1)}
		f1, f2 := diff*e, diff*diff*e
		if i == 0 || i == points {
			f1, f2 = f1/2, f2/2
		}
		s1 += f1
		s2 += f2
	}
	return math.Sqrt(s1 * h / math.Pi), math.Sqrt(s2 * h / math.Pi)
}

// scaleGrid returns the σ of the scale-space levels: from 0.5 iteration up
// to an eighth of the series, perOctave levels per doubling.
func scaleGrid(n, perOctave int) []float64 {
	const first = 0.5
	top := max(first, float64(n)/8)
	var g []float64
	for k := 0; ; k++ {
		s := first * math.Exp2(float64(k)/float64(perOctave))
		if s > top*(1+1e-9) {
			break
		}
		g = append(g, s)
	}
	return g
}

// pointKind is the type of a critical point of the scale-space image.
type pointKind uint8

const (
	edgeUp   pointKind = iota // maximum of the slope: the series rises fastest here
	edgeDown                  // minimum of the slope
	kinkUp                    // maximum of the curvature: the slope starts to grow
	kinkDown                  // minimum of the curvature
	pointKinds
)

// criticalPoint is a significant critical point at one scale. pos is the
// first sample after the change: for an edge between samples i and i+1 it
// is i+1, for a kink at sample i it is i.
type criticalPoint struct {
	pos  int
	kind pointKind
}

// levelDetector finds significant critical points at one scale.
type levelDetector struct {
	slope, curvature []float64
}

func newLevelDetector(n int) *levelDetector {
	return &levelDetector{slope: make([]float64, n), curvature: make([]float64, n)}
}

// detect appends to pts the significant critical points of the smoothed
// series l, sampled every d samples, at scale sigma. A point is significant
// when its value and its prominence over the surrounding ±(3σ+1) samples both
// exceed the noise thresholds thr1 (slope) and thr2 (curvature): the
// prominence test keeps noise wiggles on a significant slope from counting as
// edges.
func (det *levelDetector) detect(pts []criticalPoint, l []float64, d int, sigma, thr1, thr2 float64) []criticalPoint {
	n := len(l)
	if n < 3 {
		return pts
	}
	inv := 1 / float64(d)
	g := det.slope[:n-1]
	for i := range g {
		g[i] = (l[i+1] - l[i]) * inv
	}
	c := det.curvature[:n]
	for i := 1; i < n-1; i++ {
		c[i] = (l[i+1] - 2*l[i] + l[i-1]) * inv * inv
	}
	w := int(math.Ceil((3*sigma+1)/float64(d))) + 1
	// Grid point j is at d·j + (d-1)/2. An edge between points j and j+1 is
	// centred at d(j+1) - 1/2: the first sample after it is d(j+1). A kink at
	// point j is at sample d·j + d/2 (rounding the half-sample up).
	start := len(pts)
	// Beyond either end the reflected slope is mirrored with opposite sign
	// and passes through 0, so a window that crosses an end sees a 0.
	pts = extrema(pts, g, w, thr1, true, edgeUp, edgeDown)
	for k := start; k < len(pts); k++ {
		pts[k].pos = d * (pts[k].pos + 1)
	}
	start = len(pts)
	// The reflected curvature is mirrored with the same sign: clipping the
	// window at the ends loses nothing.
	pts = extrema(pts, c[1:n-1], w, thr2, false, kinkUp, kinkDown)
	for k := start; k < len(pts); k++ {
		pts[k].pos = d*(pts[k].pos+1) + d/2
	}
	return pts
}

// extrema appends the local maxima of v above thr with prominence above thr
// as up, and likewise the minima as down, at their index in v. The
// prominence of a maximum is its height above the deeper of the two lowest
// points between it and the nearest higher value on either side (looking at
// most w samples away): the wiggles of noise on a broad maximum, or of
// rounding on a flat top, are not prominent however high they are.
func extrema(pts []criticalPoint, v []float64, w int, thr float64, zeroOutside bool, up, down pointKind) []criticalPoint {
	n := len(v)
	for i := 0; i < n; i++ {
		x := v[i]
		if math.Abs(x) <= thr {
			continue
		}
		s := 1.0
		kind := up
		if x < 0 {
			s, kind = -1, down
		}
		// Strict on the left, non-strict on the right: one point per plateau.
		if i > 0 && s*v[i-1] >= s*x || i < n-1 && s*v[i+1] > s*x {
			continue
		}
		top := s * x
		left := top
		j := i - 1
		for ; j >= max(0, i-w); j-- {
			y := s * v[j]
			if y > top {
				break
			}
			left = min(left, y)
		}
		if zeroOutside && j < 0 && i-w < 0 {
			left = min(left, 0)
		}
		if top-left <= thr {
			continue
		}
		right := top
		j = i + 1
		for ; j <= min(n-1, i+w); j++ {
			y := s * v[j]
			if y >= top {
				break
			}
			right = min(right, y)
		}
		if zeroOutside && j > n-1 && i+w > n-1 {
			right = min(right, 0)
		}
		if top-right <= thr {
			continue
		}
		pts = append(pts, criticalPoint{pos: i, kind: kind})
	}
	return pts
}

// track is a critical point followed from coarse to fine scales, a contour
// of Oleynik's scale-space image (§6.3.4).
type track struct {
	kind      pointKind
	pos       int     // position at the finest scale reached
	sigma     float64 // that finest scale
	stability int     // number of scales at which the point is significant
}

// tracker links the critical points of successive scales, coarse to fine.
type tracker struct {
	active [pointKinds][]track // tracks present at the previous (coarser) scale
	done   []track
}

// step matches the points of the next finer scale to the active tracks. A
// point may move by window samples between neighbouring scales; each track
// takes the nearest free point of its kind. Unmatched tracks end, unmatched
// points start new tracks: going finer, critical points appear in pairs and
// never vanish (causality of the Gaussian scale space).
func (tr *tracker) step(pts []criticalPoint, sigma, window float64) {
	var byKind [pointKinds][]int
	for _, p := range pts {
		byKind[p.kind] = append(byKind[p.kind], p.pos)
	}
	for k := pointKind(0); k < pointKinds; k++ {
		tr.active[k] = tr.match(k, tr.active[k], byKind[k], sigma, window)
	}
}

type pairing struct {
	dist        float64
	track, item int
}

func (tr *tracker) match(kind pointKind, tracks []track, pos []int, sigma, window float64) []track {
	// Each track is offered its nearest point on either side: enough for a
	// greedy nearest-first matching, and linear in the number of points.
	var pairs []pairing
	for ti, t := range tracks {
		k, _ := slices.BinarySearch(pos, t.pos)
		for _, pi := range [2]int{k - 1, k} {
			if pi >= 0 && pi < len(pos) {
				if d := math.Abs(float64(pos[pi] - t.pos)); d <= window {
					pairs = append(pairs, pairing{d, ti, pi})
				}
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pairing) int {
		switch {
		case a.dist < b.dist:
			return -1
		case a.dist > b.dist:
			return 1
		}
		return a.track - b.track
	})
	trackUsed := make([]bool, len(tracks))
	posUsed := make([]bool, len(pos))
	next := make([]track, 0, len(pos))
	for _, p := range pairs {
		if trackUsed[p.track] || posUsed[p.item] {
			continue
		}
		trackUsed[p.track], posUsed[p.item] = true, true
		t := tracks[p.track]
		t.pos, t.sigma = pos[p.item], sigma
		t.stability++
		next = append(next, t)
	}
	for ti, used := range trackUsed {
		if !used {
			tr.done = append(tr.done, tracks[ti])
		}
	}
	for pi, used := range posUsed {
		if !used {
			next = append(next, track{kind: kind, pos: pos[pi], sigma: sigma, stability: 1})
		}
	}
	slices.SortFunc(next, func(a, b track) int { return a.pos - b.pos })
	return next
}

// finish ends all tracks and returns them.
func (tr *tracker) finish() []track {
	for k := range tr.active {
		tr.done = append(tr.done, tr.active[k]...)
		tr.active[k] = nil
	}
	return tr.done
}
