package dynamics

import (
	"math"
	"slices"
)

// The scale-space image (seed 004, §6.3.3–6.3.6) is computed with Lindeberg's
// discrete analogue of the Gaussian, T(n, t) = e^{-t} I_n(t) of variance t = σ²,
// whose Fourier transform is exp(t(cos ω - 1)). Convolving the series, extended
// by half-sample reflection at both ends (the zero-flux boundary of the
// diffusion equation, which adds no edge at the ends), is a multiplication of
// its DCT-II coefficients by that factor: exact at every scale, O(M log M) per
// scale, and free of the phantom zero-crossings of a sampled Gaussian.

// scaleSpace smooths one series at any scale.
type scaleSpace struct {
	n, m     int
	dct      *dct
	spectrum []float64 // DCT-II of the reflected series
	coef     []float64 // work: attenuated spectrum
	full     []float64 // work: smoothed series on [0, m)
	cosine   []float64 // cos(πk/m) - 1
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
	s := &scaleSpace{n: n, m: m, dct: newDCT(m),
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
	s.dct.forward(s.spectrum, ext)
	for k := range s.cosine {
		// cos θ - 1 = -2 sin²(θ/2) keeps precision at small θ.
		h := math.Sin(math.Pi * float64(k) / float64(2*m))
		s.cosine[k] = -2 * h * h
	}
	return s
}

// smooth writes the series smoothed at variance t into dst[:n].
func (s *scaleSpace) smooth(dst []float64, t float64) {
	for k, c := range s.spectrum {
		s.coef[k] = c * math.Exp(t*s.cosine[k])
	}
	s.dct.inverse(s.full, s.coef)
	copy(dst, s.full[:s.n])
}

// diffNoise returns the standard deviations of the first and second
// differences of white noise of unit variance smoothed at variance t:
// sqrt(Σ_n (T(n+1,t) - T(n,t))²) and the same for the second difference.
// By Parseval they are (1/π)∫_0^π (2 - 2cos ω)^p e^{2t(cos ω - 1)} dω for p = 1, 2.
// The integrand is even, smooth and negligible beyond ω = 12/√(2t), so the
// trapezoidal rule on [0, min(π, 12/√(2t))] is accurate to rounding.
func diffNoise(t float64) (first, second float64) {
	const points = 2048
	top := math.Pi
	if t > 0 {
		top = min(math.Pi, 12/math.Sqrt(2*t))
	}
	h := top / points
	var s1, s2 float64
	for i := 0; i <= points; i++ {
		w := float64(i) * h
		sh := math.Sin(w / 2)
		d := 4 * sh * sh      // 2 - 2cos ω
		e := math.Exp(-t * d) // e^{2t(cos ω - 1)}
		f1, f2 := d*e, d*d*e
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
	smoothed, slope, curvature []float64
}

func newLevelDetector(n int) *levelDetector {
	return &levelDetector{smoothed: make([]float64, n), slope: make([]float64, max(n-1, 0)), curvature: make([]float64, n)}
}

// detect appends to pts the significant critical points of the smoothed
// series l at scale sigma. A point is significant when its value and its
// prominence over the surrounding ±(3σ+1) samples both exceed the noise
// thresholds thr1 (slope) and thr2 (curvature): the prominence test keeps
// noise wiggles on a significant slope from counting as edges.
func (d *levelDetector) detect(pts []criticalPoint, sigma, thr1, thr2 float64) []criticalPoint {
	l := d.smoothed
	n := len(l)
	if n < 3 {
		return pts
	}
	g := d.slope
	for i := range g {
		g[i] = l[i+1] - l[i]
	}
	c := d.curvature
	for i := 1; i < n-1; i++ {
		c[i] = l[i+1] - 2*l[i] + l[i-1]
	}
	c[0], c[n-1] = c[1], c[n-2]
	w := int(math.Ceil(3*sigma)) + 1
	// Beyond either end the reflected slope is mirrored with opposite sign
	// and passes through 0, so a window that crosses an end sees a 0.
	pts = extrema(pts, g, w, thr1, true, edgeUp, edgeDown, 1)
	// The reflected curvature is mirrored with the same sign: clipping the
	// window at the ends loses nothing.
	return extrema(pts, c[1:n-1], w, thr2, false, kinkUp, kinkDown, 1)
}

// extrema appends the local maxima of v above thr with prominence above thr
// as up, and likewise the minima as down; positions are offset by off.
func extrema(pts []criticalPoint, v []float64, w int, thr float64, zeroOutside bool, up, down pointKind, off int) []criticalPoint {
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
		left, right := s*x, s*x
		for j := max(0, i-w); j < i; j++ {
			left = min(left, s*v[j])
		}
		for j := i + 1; j <= min(n-1, i+w); j++ {
			right = min(right, s*v[j])
		}
		if zeroOutside {
			if i-w < 0 {
				left = min(left, 0)
			}
			if i+w > n-1 {
				right = min(right, 0)
			}
		}
		if s*x-max(left, right) <= thr {
			continue
		}
		pts = append(pts, criticalPoint{pos: i + off, kind: kind})
	}
	return pts
}

// track is a critical point followed from coarse to fine scales, a contour
// of the seed's scale-space image (§6.3.4).
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
	var pairs []pairing
	lo := 0
	for ti, t := range tracks {
		for lo < len(pos) && float64(pos[lo]) < float64(t.pos)-window {
			lo++
		}
		for pi := lo; pi < len(pos) && float64(pos[pi]) <= float64(t.pos)+window; pi++ {
			pairs = append(pairs, pairing{math.Abs(float64(pos[pi] - t.pos)), ti, pi})
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
