package cshim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// checkArrivals checks each rank's arrival at MPI_Finalize on the
// synchronised clock, which its HMB_COLLECTIVE_TIMING line (in errs, the
// ranks' stderr) ends with: the wrapper reads it right after the rank
// entered MPI_Finalize, so on the rank's file's own conversion to rank 0's
// clock (GlobalNanos) it lies between that enter and the call's leave.
// The spread of the arrivals is the skew the collective end absorbs.
func checkArrivals(t *testing.T, files []*tracefile.File, errs []string) {
	t.Helper()
	const tag = "arrival at MPI_Finalize "
	first, last := int64(0), int64(0)
	for r, f := range files {
		i := strings.Index(errs[r], tag)
		if i < 0 {
			t.Errorf("rank %d's stderr %q lacks %q", r, errs[r], tag)
			continue
		}
		var s float64
		if _, err := fmt.Sscanf(errs[r][i+len(tag):], "%g s on the synchronised clock", &s); err != nil {
			t.Errorf("rank %d's arrival %q: %v", r, errs[r][i:], err)
			continue
		}
		at := int64(s*1e9 + 0.5)
		enter, leave := finalizeCall(t, f)
		// The line has the ns; the bounds' conversions round on their own.
		if at < enter-1 || at > leave+1 {
			t.Errorf("rank %d arrived at MPI_Finalize at %d ns on rank 0's clock, its call took %d..%d ns", r, at, enter, leave)
		}
		if r == 0 || at < first {
			first = at
		}
		last = max(last, at)
	}
	t.Logf("arrivals at MPI_Finalize %d ns apart (first at %d ns)", last-first, first)
}

// finalizeCall returns when f's rank entered and left MPI_Finalize, on
// rank 0's clock (GlobalNanos).
func finalizeCall(t *testing.T, f *tracefile.File) (enter, leave int64) {
	t.Helper()
	enter, leave = -1, -1
	for _, l := range f.Locations {
		var e tracefile.Event
		it := f.Events(l.ID)
		for it.Next(&e) {
			if f.RegionName(e.Region) != "MPI_Finalize" {
				continue
			}
			switch e.Kind {
			case encode.KindEnter:
				enter = f.GlobalNanos(e.Time)
			case encode.KindLeave:
				leave = f.GlobalNanos(e.Time)
			}
		}
		it.Close()
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
	}
	if enter < 0 || leave < enter {
		t.Fatalf("%s: MPI_Finalize entered at %d, left at %d", f.Path, enter, leave)
	}
	return enter, leave
}
