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

// BenchmarkRankPasses reports the in-situ passes that read a rank's events
// (its Choice, then its Segments by the Cut) per event: each reading the
// trace (file), or both reading the events decoded once (once).
func BenchmarkRankPasses(b *testing.B) {
	f := hotHelper(b, measure.Config{})
	c, err := LocalChoice(f)
	if err != nil {
		b.Fatal(err)
	}
	cut, err := c.Cut()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("file", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := LocalChoice(f); err != nil {
				b.Fatal(err)
			}
			if _, err := cut.Local(f); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(keptEvents(f)), "ns/event")
	})
	b.Run("once", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ev, err := ReadRankEvents(f, 1<<30)
			if err != nil || ev == nil {
				b.Fatal("ReadRankEvents: ", err)
			}
			if _, err := ev.Choice(); err != nil {
				b.Fatal(err)
			}
			if _, err := cut.Segments(ev); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(keptEvents(f)), "ns/event")
	})
}
