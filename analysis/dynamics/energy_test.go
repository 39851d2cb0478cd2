package dynamics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Oleynik, eq. 6.3: the energy of the coefficients is the energy of the series.
func TestEnergyConservation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range testLengths {
		for trial := 0; trial < 5; trial++ {
			x := randomSeries(r, n)
			var want float64
			for _, v := range x {
				want += v * v
			}
			e := Haar(x).Energy()
			if relErr(e.Total, want) > 1e-9 {
				t.Errorf("n=%d: total energy %v, sum of squares %v", n, e.Total, want)
			}
		}
	}
}

// Oleynik, eq. 6.4: the wavelet coefficients alone decompose the variance.
func TestVarianceDecomposition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range testLengths[1:] {
		for trial := 0; trial < 5; trial++ {
			x := randomSeries(r, n)
			var mean float64
			for _, v := range x {
				mean += v
			}
			mean /= float64(n)
			var variance float64
			for _, v := range x {
				variance += (v - mean) * (v - mean)
			}
			variance /= float64(n)
			e := Haar(x).Energy()
			if relErr(e.Dynamic/float64(n), variance) > 1e-9 {
				t.Errorf("n=%d: dynamic/N %v, variance %v", n, e.Dynamic/float64(n), variance)
			}
			var perScale float64
			for _, s := range e.PerScale {
				perScale += s
			}
			if relErr(perScale, e.Dynamic) > 1e-12 || relErr(e.ShortScales+e.WideScales, e.Dynamic) > 1e-12 {
				t.Errorf("n=%d: per-scale %v, short+wide %v, dynamic %v", n, perScale, e.ShortScales+e.WideScales, e.Dynamic)
			}
		}
	}
}

func TestEnergyInTimeSumsToDynamic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range testLengths {
		tr := Haar(randomSeries(r, n))
		var s float64
		for _, v := range tr.EnergyInTime() {
			if v < 0 {
				t.Fatalf("n=%d: negative energy %v", n, v)
			}
			s += v
		}
		if d := tr.Energy().Dynamic; relErr(s, d) > 1e-12 && math.Abs(s-d) > 1e-300 {
			t.Errorf("n=%d: energy in time sums to %v, dynamic energy %v", n, s, d)
		}
	}
}

// A spike puts its energy at its own iterations, short scales first.
func TestEnergyLocatesASpike(t *testing.T) {
	x := make([]float64, 256)
	x[77] = 10
	tr := Haar(x)
	inTime := tr.EnergyInTime()
	best := 0
	for i, v := range inTime {
		if v > inTime[best] {
			best = i
		}
	}
	// Energy is spread over a coefficient's support; the finest one covers 76-77.
	if best != 76 || inTime[76] != inTime[77] {
		t.Errorf("most energetic iteration %d, want 76 tied with 77", best)
	}
	e := tr.Energy()
	if e.PerScale[0] < e.PerScale[len(e.PerScale)-1] || e.ShortScales < e.WideScales {
		t.Errorf("spike energy not at short scales: %+v", e)
	}
	// A ramp puts it at wide scales.
	for i := range x {
		x[i] = float64(i)
	}
	if e := Haar(x).Energy(); e.WideScales < e.ShortScales {
		t.Errorf("ramp energy not at wide scales: %+v", e)
	}
}

func TestNoiseLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	x := make([]float64, 4096)
	for i := range x {
		x[i] = 100 + 0.01*float64(i) + 2*r.NormFloat64()
	}
	x[1000] += 500 // an outlier must not move the estimate
	x[3000] += 50
	if got := NoiseLevel(x); math.Abs(got-2) > 0.15 {
		t.Errorf("noise level %v, want 2 ± 0.15", got)
	}
	// Quantised data: most differences are exactly zero.
	for i := range x {
		x[i] = 5
		if i%7 == 0 {
			x[i] = 6
		}
	}
	if got := NoiseLevel(x); got <= 0 {
		t.Errorf("noise level of quantised series %v, want > 0", got)
	}
	for i := range x {
		x[i] = 5
	}
	if got := NoiseLevel(x); got != 0 {
		t.Errorf("noise level of a constant %v, want 0", got)
	}
}

func TestMedian(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := 1; n < 60; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(r.IntN(10))
		}
		s := append([]float64(nil), v...)
		sortFloats(s)
		want := s[n/2]
		if n%2 == 0 {
			want = (s[n/2-1] + s[n/2]) / 2
		}
		if got := median(v); got != want {
			t.Fatalf("median of %v = %v, want %v", s, got, want)
		}
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
