package tracefile

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoundNear compares roundNear with int64(math.Round(x)) on the
// values where rounding can go wrong, of both signs: halves, their
// neighbours, the largest fraction below a half, the neighbours of 2^52
// and 2^53, and random values of every magnitude.
func TestRoundNear(t *testing.T) {
	check := func(x float64) {
		for _, v := range []float64{x, -x} {
			if v < math.MinInt64 || v >= 1<<63 || math.IsNaN(v) {
				continue // int64 does not hold it: float64(math.MaxInt64) is 2^63
			}
			if got, want := roundNear(v), int64(math.Round(v)); got != want {
				t.Fatalf("roundNear(%v) = %d, math.Round gives %d", v, got, want)
			}
		}
	}
	edges := []float64{0, 0.5, 1.5, 2.5, 0.49999999999999994, 1e-300, 1<<52 - 0.5, 1 << 52, 1<<53 + 2, 1 << 53, 1 << 62, math.MaxInt64}
	for i := int64(0); i < 1000; i++ {
		edges = append(edges, float64(i)+0.5, float64(i)+0.25, float64(i)+0.75, float64(1<<52-i)+0.5, float64(1<<51+i)+0.5)
	}
	for _, x := range edges {
		for _, y := range []float64{x, math.Nextafter(x, 0), math.Nextafter(x, math.Inf(1))} {
			check(y)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1_000_000; i++ {
		check(math.Ldexp(rng.Float64(), rng.IntN(64)))
		check(math.Float64frombits(rng.Uint64() >> 1))
	}
}
