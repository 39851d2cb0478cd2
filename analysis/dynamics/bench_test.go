package dynamics

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchSeries is noise with a step, a spike and a trend, so that every stage
// of Analyze has work to do.
func benchSeries(n int) []float64 {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	x := make([]float64, n)
	for i := range x {
		x[i] = 100 + r.NormFloat64()
		if i >= n/3 {
			x[i] += 5
		}
		if i >= 2*n/3 {
			x[i] += 20 * float64(i-2*n/3) / float64(n)
		}
	}
	x[n/5] += 15
	return x
}

var benchSizes = []int{10_000, 1_000_000}

func BenchmarkHaar(b *testing.B) {
	for _, n := range benchSizes {
		x := benchSeries(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Haar(x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
		})
	}
}

func BenchmarkAnalyze(b *testing.B) {
	for _, n := range benchSizes {
		x := benchSeries(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Analyze(x, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
		})
	}
}
