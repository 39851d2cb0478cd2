package pprof

import (
	"io"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestExportLinearInRegions counts the allocations of a profile of 10³ and
// 10⁴ distinct regions on 4 ranks: they grow about as the regions do.
// (A scan of the region list per function made the export quadratic.)
func TestExportLinearInRegions(t *testing.T) {
	tracetest.LinearInRegions(t, "allocations of a pprof export", func(t *testing.T, regions int) float64 {
		files := tracetest.OpenManyRegions(t, regions, 4)
		p, err := BuildProcs(files, 1)
		if err != nil {
			t.Fatal(err)
		}
		// main, MPI_Allreduce and the regions, on every rank.
		if len(p.Function) != regions+2 {
			t.Fatalf("%d regions: %d functions, want %d", regions, len(p.Function), regions+2)
		}
		return testing.AllocsPerRun(1, func() {
			if err := ExportProcs(io.Discard, files, 1); err != nil {
				t.Fatal(err)
			}
		})
	})
}
