package score_test

import (
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/score"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// keptEvents counts the records of f.
func keptEvents(f *tracefile.File) (n uint64) {
	for i := range f.Locations {
		n += f.Locations[i].Kept()
	}
	return n
}

// BenchmarkComputeScore reports the cost of the score, re-encoding
// included, per event read.
func BenchmarkComputeScore(b *testing.B) {
	f := hotHelper(b, measure.Config{})
	files := []*tracefile.File{f}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Compute(files, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(keptEvents(f)), "ns/event")
}
