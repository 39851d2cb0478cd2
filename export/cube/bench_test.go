package cube

import (
	"io"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// BenchmarkExport measures the export of a run of 2 ranks × 4 locations
// (about 0.6 M events) by one worker: the events' walk, the profile and
// the archive, per event read.
func BenchmarkExport(b *testing.B) {
	files := tracetest.Ranks(b, b.TempDir(), 2, 4, 4000, 0)
	var events uint64
	for _, f := range files {
		for _, l := range f.Locations {
			events += l.Recorded
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := ExportProcs(io.Discard, files, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
}
