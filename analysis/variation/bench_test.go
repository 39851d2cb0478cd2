package variation_test

import (
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"

	"github.com/hmbtrace/hmbtrace/filter"
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

// BenchmarkAnalyze reports the cost of the variation analysis per event read.
func BenchmarkAnalyze(b *testing.B) {
	f := hotHelper(b, measure.Config{})
	sync, _ := filter.ParsePatternList("wait")
	files := []*tracefile.File{f}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(files, Options{Sync: sync}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(keptEvents(f)), "ns/event")
}
