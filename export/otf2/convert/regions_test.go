package convert

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestExportLinearInRegions counts the allocations of an export of 10³
// and 10⁴ distinct regions on 4 ranks: they grow about as the regions do.
// (A scan of the region list per region, in the region definitions, took
// 19 minutes at 10⁶ regions.)
func TestExportLinearInRegions(t *testing.T) {
	tracetest.LinearInRegions(t, "allocations of an OTF2 export", func(t *testing.T, regions int) float64 {
		files := tracetest.OpenManyRegions(t, regions, 4)
		dir, n := t.TempDir(), 0
		var st Stats
		allocs := testing.AllocsPerRun(1, func() {
			n++
			var err error
			if st, err = ExportProcs(filepath.Join(dir, fmt.Sprint(n)), files, otf2.Options{}, 1); err != nil {
				t.Fatal(err)
			}
		})
		if st.Locations != 4 {
			t.Fatalf("%d regions: %d locations exported, want 4", regions, st.Locations)
		}
		return allocs
	})
}
