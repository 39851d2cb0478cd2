package chrome

import (
	"io"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestExportLinearInRegions counts the allocations of a Chrome trace of
// 10³ and 10⁴ distinct regions on 4 ranks: they grow about as the regions
// do.
func TestExportLinearInRegions(t *testing.T) {
	tracetest.LinearInRegions(t, "allocations of a Chrome export", func(t *testing.T, regions int) float64 {
		files := tracetest.OpenManyRegions(t, regions, 4)
		return testing.AllocsPerRun(1, func() {
			if err := ExportProcs(io.Discard, files, 1); err != nil {
				t.Fatal(err)
			}
		})
	})
}
