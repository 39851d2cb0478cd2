package dynamics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// T(k, 1) = e^{-1} I_k(1): I_0(1) = 1.2660658777520082,
// I_1(1) = 0.5651591039924851, I_2(1) = 0.1357476697670383 (Abramowitz and
// Stegun, table 9.8).
func TestDiscreteGaussianIsLindebergKernel(t *testing.T) {
	want := []float64{1.2660658777520082, 0.5651591039924851, 0.1357476697670383}
	k := discreteGaussian(1, 12)
	for i, w := range want {
		if math.Abs(k[i]-w/math.E) > 1e-13 {
			t.Errorf("T(%d, 1) = %.16g, want %.16g", i, k[i], w/math.E)
		}
	}
	for _, tt := range []float64{0.25, 3, 40} {
		k := discreteGaussian(tt, int(8*math.Sqrt(tt))+8)
		var sum, variance float64
		for i, v := range k {
			w := 2.0
			if i == 0 {
				w = 1
			}
			sum += w * v
			variance += w * v * float64(i*i)
		}
		if math.Abs(sum-1) > 1e-14 || math.Abs(variance-tt) > 1e-9*tt {
			t.Errorf("t=%v: kernel sums to %v with variance %v", tt, sum, variance)
		}
	}
}

// The spectral path (DCT) and the direct convolution must give the same
// smoothing, reflection at the ends included.
func TestSmoothingPathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{37, 64, 100, 1000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() + float64(i%7)
		}
		ss := newScaleSpace(x, float64(n)/8)
		direct := make([]float64, n)
		spectral := make([]float64, n)
		for _, sigma := range []float64{0.5, 1.3, 4, 7.9} {
			tt := sigma * sigma
			ss.convolve(direct, tt)
			md := ss.m
			for k, c := range ss.spectrum[:md] {
				ss.coef[k] = c * math.Exp(tt*ss.cosine[k])
			}
			ss.transform(md).inverse(ss.full[:md], ss.coef[:md])
			copy(spectral, ss.full[:n])
			for i := range direct {
				if math.Abs(direct[i]-spectral[i]) > 1e-10 {
					t.Fatalf("n=%d σ=%v: sample %d: direct %v, spectral %v", n, sigma, i, direct[i], spectral[i])
				}
			}
		}
	}
}

// Smoothing keeps constants and, away from the ends, straight lines; the
// reflection at the ends keeps the total.
func TestSmoothingInvariants(t *testing.T) {
	n := 500
	line := make([]float64, n)
	for i := range line {
		line[i] = 3 + 0.25*float64(i)
	}
	ss := newScaleSpace(line, 60)
	out := make([]float64, n)
	for _, sigma := range []float64{0.5, 3, 20, 60} {
		l := ss.smooth(out, sigma*sigma, 1)
		var sum, want float64
		for i := range l {
			sum += l[i]
			want += line[i]
			if i > int(9*sigma)+8 && i < n-int(9*sigma)-8 && math.Abs(l[i]-line[i]) > 1e-9 {
				t.Fatalf("σ=%v: line moved at %d: %v, want %v", sigma, i, l[i], line[i])
			}
		}
		if relErr(sum, want) > 1e-12 {
			t.Errorf("σ=%v: total %v, want %v", sigma, sum, want)
		}
	}
}

// The decimated grid of step d samples the same smooth function at
// d·j + (d-1)/2, which for even d falls between samples: compare with the
// inverse DCT evaluated there directly.
func TestDecimatedSmoothing(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	n := 300
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
		if i > 120 {
			x[i] += 4
		}
	}
	ss := newScaleSpace(x, 40)
	out := make([]float64, n)
	for _, sigma := range []float64{8, 16, 40} {
		d := decimation(sigma)
		if d < 2 {
			t.Fatalf("σ=%v: no decimation", sigma)
		}
		tt := sigma * sigma
		l := ss.smooth(out, tt, d)
		if len(l) != gridPoints(n, d) {
			t.Fatalf("σ=%v: %d points, want %d", sigma, len(l), gridPoints(n, d))
		}
		for j, v := range l {
			pos := float64(d*j) + float64(d-1)/2
			if pos > float64(n)-0.5 {
				t.Fatalf("σ=%v: grid point %d at %v is past the reflection at the end", sigma, j, pos)
			}
			var want float64
			for k := 0; k < ss.m; k++ {
				c := ss.spectrum[k] * math.Exp(tt*ss.cosine[k]) * math.Cos(math.Pi*float64(k)*(2*pos+1)/float64(2*ss.m))
				if k > 0 {
					c *= 2
				}
				want += c
			}
			want /= float64(ss.m)
			if math.Abs(v-want) > 1e-9 {
				t.Fatalf("σ=%v d=%d: point %d: %v, want %v", sigma, d, j, v, want)
			}
		}
	}
}

// diffNoise must be the standard deviation of the smoothed differences of
// white noise: compare with the smoothed impulse, whose differences' squares
// sum to exactly that.
func TestDiffNoiseMatchesKernel(t *testing.T) {
	n := 8192
	x := make([]float64, n)
	x[n/2] = 1
	ss := newScaleSpace(x, 200)
	out := make([]float64, n)
	for _, sigma := range []float64{0.5, 1, 2.5, 8, 20, 64, 200} {
		tt := sigma * sigma
		l := ss.smooth(out, tt, 1)
		for _, d := range []int{1, decimation(sigma)} {
			var s1, s2 float64
			for i := d; i+d < n; i++ {
				g := (l[i+d] - l[i]) / float64(d)
				c := (l[i+d] - 2*l[i] + l[i-d]) / float64(d*d)
				s1 += g * g
				s2 += c * c
			}
			f, c := diffNoise(tt, d)
			if relErr(f, math.Sqrt(s1)) > 1e-6 || relErr(c, math.Sqrt(s2)) > 1e-6 {
				t.Errorf("σ=%v d=%d: diffNoise %v %v, kernel %v %v", sigma, d, f, c, math.Sqrt(s1), math.Sqrt(s2))
			}
		}
	}
}

// A step is one edge contour, stable over every level above the one where
// it becomes significant, found at the step at the finest level.
func TestStepIsOneStableContour(t *testing.T) {
	x := addStep(series(5, 1024, 0, 1), 400, 6)
	n := len(x)
	grid := scaleGrid(n, 4)
	ss := newScaleSpace(x, grid[len(grid)-1])
	det := newLevelDetector(n)
	out := make([]float64, n)
	noise := NoiseLevel(x)
	z := math.Sqrt(2 * math.Log(float64(n*len(grid))))
	var tr tracker
	for k := len(grid) - 1; k >= 0; k-- {
		s := grid[k]
		d := decimation(s)
		f, c := diffNoise(s*s, d)
		pts := det.detect(nil, ss.smooth(out, s*s, d), d, s, z*noise*f, z*noise*c)
		window := 2.0
		if k+1 < len(grid) {
			window += 2*(grid[k+1]-s) + float64(decimation(grid[k+1]))
		}
		tr.step(pts, s, window)
	}
	var edges []track
	for _, c := range tr.finish() {
		if c.kind == edgeUp && c.stability >= 2 {
			edges = append(edges, c)
		}
		if c.kind == edgeDown && c.stability >= 2 {
			t.Errorf("falling edge in a rising step: %+v", c)
		}
	}
	if len(edges) != 1 || edges[0].pos < 399 || edges[0].pos > 401 || edges[0].stability < len(grid)/2 {
		t.Fatalf("rising edges %+v, want one at 400 over at least %d levels", edges, len(grid)/2)
	}
}
