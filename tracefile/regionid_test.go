package tracefile

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// TestRegionByIDDoesNotScan looks up every region of files of 10³ and 10⁴
// regions, numbered 1, 2, ... as the probes do and with other ids (every
// third, backwards), and counts the definitions scanned: none, so a tool
// that looks up each region once stays linear in the regions. A scan per
// lookup made the OTF2 and pprof exports take 19 minutes at 10⁶ regions.
func TestRegionByIDDoesNotScan(t *testing.T) {
	for _, dense := range []bool{true, false} {
		for _, n := range []int{1_000, 10_000} {
			t.Run(fmt.Sprintf("dense=%v/%d", dense, n), func(t *testing.T) {
				tr := &Trace{Header: Header{Name: "ids", Host: "h", Clock: "monotonic", TicksPerSecond: 1e9, StartWall: time.Unix(1700000000, 0)}}
				id := func(i int) uint32 {
					if dense {
						return uint32(i + 1)
					}
					return uint32(3 * (n - i))
				}
				for i := range n {
					tr.Regions = append(tr.Regions, Region{ID: id(i), Name: fmt.Sprintf("r%d", i), Line: i})
				}
				var buf bytes.Buffer
				if err := Write(&buf, tr, func(func(Bin) error) error { return nil }); err != nil {
					t.Fatal(err)
				}
				f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
				if err != nil {
					t.Fatal(err)
				}
				before := regionScanned.Load()
				for i := range n {
					r := f.RegionByID(id(i))
					if r == nil || r.Name != fmt.Sprintf("r%d", i) || r.Line != i {
						t.Fatalf("RegionByID(%d) = %+v, want r%d at line %d", id(i), r, i, i)
					}
					if got := f.RegionName(id(i)); got != r.Name {
						t.Fatalf("RegionName(%d) = %q, want %q", id(i), got, r.Name)
					}
				}
				if f.RegionByID(uint32(3*n+1)) != nil || f.RegionName(uint32(3*n+1)) != fmt.Sprintf("region#%d", 3*n+1) {
					t.Errorf("an undefined id %d was found", 3*n+1)
				}
				// Only the undefined id's two lookups may scan.
				if scanned := regionScanned.Load() - before; scanned > int64(2*n) {
					t.Errorf("%d lookups scanned %d definitions, want at most %d (the undefined id's)", 2*n, scanned, 2*n)
				}
			})
		}
	}
}
