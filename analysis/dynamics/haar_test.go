package dynamics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// testLengths covers powers of two, their neighbours and small odd lengths,
// where the unbalanced last block matters most.
var testLengths = []int{1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 127, 128, 129, 1000, 1023, 1025, 4099}

func randomSeries(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	base := r.Float64()*10 - 5
	for i := range x {
		x[i] = base + r.NormFloat64()*(0.1+r.Float64())
	}
	return x
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func TestHaarInverseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range testLengths {
		x := randomSeries(r, n)
		y := Haar(x).Inverse()
		if len(y) != n {
			t.Fatalf("n=%d: inverse has %d samples", n, len(y))
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > 1e-12*(1+math.Abs(x[i])) {
				t.Fatalf("n=%d: sample %d: got %v, want %v", n, i, y[i], x[i])
			}
		}
	}
}

func TestHaarCoefficientCount(t *testing.T) {
	for _, n := range testLengths {
		tr := Haar(make([]float64, n))
		c := 0
		for j, d := range tr.Detail {
			c += len(d)
			for k := range d {
				from, to := tr.Support(j+1, k)
				if from < 0 || to > n || to-from < 2 {
					t.Fatalf("n=%d: scale %d shift %d covers [%d,%d)", n, j+1, k, from, to)
				}
			}
		}
		if c != n-1 {
			t.Errorf("n=%d: %d wavelet coefficients, want N-1=%d", n, c, n-1)
		}
		if len(tr.Detail) != Levels(n) {
			t.Errorf("n=%d: %d scales, want %d", n, len(tr.Detail), Levels(n))
		}
	}
}

// For N a power of two the transform must be the textbook Haar transform.
func TestHaarMatchesClassicalForPowerOfTwo(t *testing.T) {
	x := []float64{4, 6, 10, 12, 8, 6, 5, 5}
	tr := Haar(x)
	s := math.Sqrt2
	want := [][]float64{
		{(6 - 4) / s, (12 - 10) / s, (6 - 8) / s, 0},
		{((10 + 12) - (4 + 6)) / 2, ((5 + 5) - (8 + 6)) / 2},
		{((8 + 6 + 5 + 5) - (4 + 6 + 10 + 12)) / (2 * s)},
	}
	for j := range want {
		for k := range want[j] {
			if math.Abs(tr.Detail[j][k]-want[j][k]) > 1e-12 {
				t.Errorf("W[%d,%d] = %v, want %v", j+1, k, tr.Detail[j][k], want[j][k])
			}
		}
	}
	if math.Abs(tr.Approx-56/math.Sqrt(8)) > 1e-12 {
		t.Errorf("approx = %v, want %v", tr.Approx, 56/math.Sqrt(8))
	}
}

// Every basis vector of the unbalanced transform must be unit-norm and
// orthogonal to the others: the synthesis of a unit coefficient is that vector.
func TestHaarBasisIsOrthonormal(t *testing.T) {
	for _, n := range []int{3, 5, 6, 7, 11, 13} {
		tr := Haar(make([]float64, n))
		// coefficients returns an all-zero coefficient set of the right shape.
		coefficients := func() Transform {
			c := Transform{N: n, Detail: make([][]float64, len(tr.Detail))}
			for j := range tr.Detail {
				c.Detail[j] = make([]float64, len(tr.Detail[j]))
			}
			return c
		}
		scaling := coefficients()
		scaling.Approx = 1
		basis := [][]float64{scaling.Inverse()}
		for j := range tr.Detail {
			for k := range tr.Detail[j] {
				c := coefficients()
				c.Detail[j][k] = 1
				basis = append(basis, c.Inverse())
			}
		}
		if len(basis) != n {
			t.Fatalf("n=%d: %d basis vectors", n, len(basis))
		}
		for a := range basis {
			for b := range basis {
				var dot float64
				for i := range basis[a] {
					dot += basis[a][i] * basis[b][i]
				}
				want := 0.0
				if a == b {
					want = 1
				}
				if math.Abs(dot-want) > 1e-12 {
					t.Fatalf("n=%d: <v%d,v%d> = %v, want %v", n, a, b, dot, want)
				}
			}
		}
	}
}

func TestHaarEmptyAndNonFinite(t *testing.T) {
	tr := Haar(nil)
	if tr.N != 0 || tr.Inverse() != nil || tr.Energy().Total != 0 {
		t.Fatalf("empty transform: %+v", tr)
	}
	tr = Haar([]float64{1, math.NaN(), 3})
	if !math.IsNaN(tr.Approx) {
		t.Errorf("NaN sample did not propagate into the approximation: %v", tr.Approx)
	}
	_ = NoiseLevel([]float64{1, math.NaN(), 3, math.Inf(1)}) // must not panic or hang
}
