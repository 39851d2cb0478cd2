package tracefile

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoundNonNeg compares roundNonNeg with int64(math.Round(x)) on the
// values where rounding can go wrong: halves, their neighbours, the
// neighbours of 2^52 and 2^53, and random values of every magnitude.
func TestRoundNonNeg(t *testing.T) {
	check := func(x float64) {
		if x < 0 || x > math.MaxInt64 || math.IsNaN(x) {
			return
		}
		if got, want := roundNonNeg(x), int64(math.Round(x)); got != want {
			t.Fatalf("roundNonNeg(%v) = %d, math.Round gives %d", x, got, want)
		}
	}
	edges := []float64{0, 0.5, 1 << 52, 1 << 53, 1 << 62, math.MaxInt64}
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
