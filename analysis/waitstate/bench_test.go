package waitstate

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// BenchmarkAnalyze replays a synthetic run of 8 ranks (two locations
// each, halo exchanges and allreduces) with one worker: the cost per event
// read.
func BenchmarkAnalyze(b *testing.B) {
	dir := b.TempDir()
	var files []*tracefile.File
	for _, p := range tracetest.SyntheticRun(b, dir, "bench", 8, 2000) {
		files = append(files, tracetest.Open(b, p))
	}
	var events uint64
	for _, f := range files {
		for _, l := range f.Locations {
			events += l.Kept()
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Analyze(files, Options{Procs: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
}
