package dynamics

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func TestFFTMatchesNaiveDFT(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 2, 4, 8, 32, 256} {
		a := make([]complex128, n)
		for i := range a {
			a[i] = complex(r.NormFloat64(), r.NormFloat64())
		}
		got := append([]complex128(nil), a...)
		newFFT(n).transform(got, false)
		for k := 0; k < n; k++ {
			var want complex128
			for j := 0; j < n; j++ {
				want += a[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			if cmplx.Abs(got[k]-want) > 1e-9 {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, got[k], want)
			}
		}
		newFFT(n).transform(got, true)
		for j := range a {
			if cmplx.Abs(got[j]/complex(float64(n), 0)-a[j]) > 1e-12 {
				t.Fatalf("n=%d: inverse sample %d: %v, want %v", n, j, got[j], a[j])
			}
		}
	}
}

func TestDCTMatchesDefinitionAndInverts(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, m := range []int{1, 2, 4, 16, 128} {
		x := make([]float64, m)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		d := newDCT(m)
		c := make([]float64, m)
		d.forward(c, x)
		for k := 0; k < m; k++ {
			var want float64
			for n := 0; n < m; n++ {
				want += x[n] * math.Cos(math.Pi*float64(k*(2*n+1))/float64(2*m))
			}
			if math.Abs(c[k]-want) > 1e-9 {
				t.Fatalf("m=%d k=%d: %v, want %v", m, k, c[k], want)
			}
		}
		y := make([]float64, m)
		d.inverse(y, c)
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-12 {
				t.Fatalf("m=%d: inverse sample %d: %v, want %v", m, i, y[i], x[i])
			}
		}
	}
}

// Smaller transforms share the tables of a larger one.
func TestSubTransforms(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	big := newDCT(256)
	for _, m := range []int{128, 16, 2, 1} {
		d := big.sub(m)
		x := make([]float64, m)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		got, want := make([]float64, m), make([]float64, m)
		d.forward(got, x)
		newDCT(m).forward(want, x)
		for k := range got {
			if math.Abs(got[k]-want[k]) > 1e-12 {
				t.Fatalf("m=%d k=%d: shared %v, own %v", m, k, got[k], want[k])
			}
		}
		y := make([]float64, m)
		d.inverse(y, got)
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-12 {
				t.Fatalf("m=%d: inverse sample %d: %v, want %v", m, i, y[i], x[i])
			}
		}
	}
}
