package chrome

import (
	"slices"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A slice is named by its region of the run (tracefile.ReadUnified):
// "work" of a.c:10 on rank 0 and of b.c:5 on rank 1 are two regions and
// their slices say which; "only", of rank 2 alone, keeps its name.
func TestSlicesNameRunRegions(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank, r := range []tracefile.Region{{Name: "work", File: "a.c", Line: 10}, {Name: "work", File: "b.c", Line: 5}, {Name: "only", File: "o.c", Line: 3}} {
		b := tracetest.NewBuilder("run", "h", rank, time.Unix(0, 0))
		r.ID = 2
		b.Trace.Regions = []tracefile.Region{{ID: 1, Name: "main", File: "m.c", Line: 1}, r}
		l := b.Location("main")
		l.Enter(10, 1)
		l.Enter(20, 2)
		l.Leave(30)
		l.Leave(40)
		files = append(files, b.Write(t, dir))
	}
	var got []string
	for _, e := range exportJSON(t, files).TraceEvents {
		if e.Ph == "B" {
			got = append(got, e.Name)
		}
	}
	want := []string{"main", "work (a.c:10)", "main", "work (b.c:5)", "main", "only"}
	if !slices.Equal(got, want) {
		t.Errorf("slices %q, want %q", got, want)
	}
}
