package summary

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// BenchmarkRunProfileUnmarshal decodes the run profile of 4 ranks of
// 2000 regions each, the binary form the ranks' profiles travel in at a
// run's collective end.
func BenchmarkRunProfileUnmarshal(b *testing.B) {
	p := Reduce(tracetest.OpenManyRegions(b, 2000, 4))
	data, err := p.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var q RunProfile
	for b.Loop() {
		if err := q.UnmarshalBinary(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(p.Regions)), "ns/region")
}
