package variation_test

import (
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func hasNote(v *Variation, s string) bool {
	for _, n := range v.Notes {
		if strings.Contains(render.VariationNote(n), s) {
			return true
		}
	}
	return false
}

// When the buffer closes the depth of the synchronization regions, the
// segments lose their waits and the analysis says so.
func TestNoteShedSync(t *testing.T) {
	p := planted{locations: 4, iterations: 400, slow: map[[2]int]bool{{1, 5}: true}}
	locs, order := p.calls()
	f := recordCalls(t, measure.Config{BufferSize: 24 << 10, BinSize: 512}, unit, locs, order...)
	if len(f.Reductions) == 0 {
		t.Fatal("the small buffer did not reduce")
	}
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(v, "synchronization calls on 4 locations are not in the trace (depth >= 3 closed)") {
		t.Errorf("notes %+v", v.Notes)
	}
	for _, r := range v.Rows {
		if r.SyncCalls != 400 || r.SyncKept != 0 || r.Segments != 400 {
			t.Errorf("row %+v", r)
		}
	}
}

// The keep-last policy keeps a window of the newest events: the segment
// that began before it is left out, and the missing ones are counted.
func TestNoteWindow(t *testing.T) {
	p := planted{locations: 2, iterations: 400}
	locs, order := p.calls()
	f := recordCalls(t, measure.Config{BufferSize: 8 << 10, BinSize: 512, Reduction: measure.ReduceLast}, unit, locs, order...)
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(v, "invocations of iteration are not in the trace (oldest events revoked)") {
		t.Errorf("notes %+v", v.Notes)
	}
	for _, r := range v.Rows {
		if r.Segments == 0 || uint64(r.Segments+r.Truncated) >= r.Invocations {
			t.Errorf("row %+v: want some but not all segments", r)
		}
		// Segments keep their invocation numbers: the last is the 400th.
		var last Segment
		for _, s := range v.Segments {
			if v.Rows[s.Row].Label == r.Label {
				last = s
			}
		}
		if last.Index != 399 {
			t.Errorf("%s: last segment index %d; want 399", r.Label, last.Index)
		}
	}
}

// Several files are the ranks of one run: p counts all their locations,
// labels carry the rank, and times share one axis.
func TestSeveralFiles(t *testing.T) {
	a := figure3(t, "MPI_Barrier")
	b := figure3(t, "MPI_Barrier")
	b.Header.Rank = 1
	v, err := Analyze([]*tracefile.File{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Dominance.Locations != 6 || v.Dominance.MinVisits != 12 || v.Region != "a" || v.Dominance.Region.Visits != 18 {
		t.Errorf("dominance %+v", v.Dominance)
	}
	if len(v.Rows) != 6 || v.Rows[0].Label != "0:process 0" || v.Rows[5].Label != "1:process 2" {
		t.Errorf("rows %+v", v.Rows)
	}
	// Each file's times count from its own start; the earlier start is 0.
	onlyA, errA := Analyze([]*tracefile.File{a}, Options{})
	onlyB, errB := Analyze([]*tracefile.File{b}, Options{})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	offset := b.Header.StartWall.Sub(a.Header.StartWall).Nanoseconds()
	if offset < 0 {
		t.Fatalf("the second trace starts %d ns before the first", -offset)
	}
	if v.Segments[0].Start != onlyA.Segments[0].Start || v.Segments[9].Start != offset+onlyB.Segments[0].Start {
		t.Errorf("segments at %d and %d; alone at %d and %d, offset %d",
			v.Segments[0].Start, v.Segments[9].Start, onlyA.Segments[0].Start, onlyB.Segments[0].Start, offset)
	}
	b.Header.Rank = 0 // ranks repeat: the file names tell them apart
	v, err = Analyze([]*tracefile.File{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(v.Rows[0].Label, ".hmb:process 0") {
		t.Errorf("label %q", v.Rows[0].Label)
	}
}
