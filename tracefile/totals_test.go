package tracefile

import (
	"reflect"
	"testing"
)

func TestTotals(t *testing.T) {
	tr := &Trace{Locations: []Location{
		{Recorded: 20, FilteredName: 2, FilteredDuration: 1, Usage: UsageErrors{LeaveNotOpen: 1, AfterClose: 2},
			Levels: []LevelStats{
				{Depth: 0, Class: ClassRegion, Written: 6},
				{Depth: 2, Class: ClassRegion, Written: 4, Revoked: ByReason{ByDepth: 4}, Dropped: ByReason{ByDepth: 3}, Closed: true, By: ByDepth},
				{Depth: 0, Class: ClassMessage, Written: 3, Dropped: ByReason{NoBin: 1}},
			}},
		{Recorded: 3, Usage: UsageErrors{AfterClose: 1, MessageNoPeer: 5},
			Levels: []LevelStats{{Depth: 1, Class: ClassMetric, Written: 3, Revoked: ByReason{ByClass: 1}, Closed: true, By: ByClass}}},
	}}
	want := Totals{
		Recorded: 23, Kept: 6 + 3 + 2, FilteredName: 2, FilteredDuration: 1,
		KeptByClass: [NumClasses]uint64{ClassRegion: 6, ClassMessage: 3, ClassMetric: 2},
		Removed:     ByReason{ByDepth: 7, ByClass: 1, NoBin: 1},
		Usage:       UsageErrors{LeaveNotOpen: 1, AfterClose: 3, MessageNoPeer: 5},
		Depths: []DepthTotals{
			{Depth: 0, Kept: 9, Removed: ByReason{NoBin: 1}},
			{Depth: 1, Kept: 2, Removed: ByReason{ByClass: 1}}, // closed, but by class
			{Depth: 2, Kept: 0, Removed: ByReason{ByDepth: 7}, Closed: true},
		},
	}
	got := tr.Totals()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
	if n := got.Removed.Total(); n != 9 {
		t.Errorf("removed in all %d, want 9", n)
	}
	for i := range tr.Locations {
		if l := &tr.Locations[i]; l.Accounted() != l.Recorded {
			t.Errorf("location %d accounts for %d of %d", i, l.Accounted(), l.Recorded)
		}
	}
}

// A file's depth numbers do not size the totals: levels at depths 3 and
// 2^30 give two entries.
func TestTotalsSparseDepths(t *testing.T) {
	tr := &Trace{Locations: []Location{{Recorded: 2, Levels: []LevelStats{
		{Depth: 1 << 30, Class: ClassRegion, Written: 1},
		{Depth: 3, Class: ClassRegion, Written: 1},
	}}}}
	got := tr.Totals().Depths
	want := []DepthTotals{{Depth: 3, Kept: 1}, {Depth: 1 << 30, Kept: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("depths %+v, want %+v", got, want)
	}
}

func TestUsageErrors(t *testing.T) {
	u := UsageErrors{UnknownRegion: 1, LeaveNothingOpen: 2, LeaveNotOpen: 3, LeftImplicitly: 4, OpenAtClose: 5, AfterClose: 6, MessageNoPeer: 7}
	var sum UsageErrors
	sum.Add(u)
	sum.Add(u)
	if want := (UsageErrors{2, 4, 6, 8, 10, 12, 14}); sum != want {
		t.Errorf("u+u = %+v, want %+v", sum, want)
	}
	if u.Total() != 28 {
		t.Errorf("total %d, want 28", u.Total())
	}
	// Every kind once, in the order of the fields, with its own words.
	counts := u.Counts()
	seen := map[string]bool{}
	for i, c := range counts {
		if c.N != uint64(i+1) || c.What == "" || seen[c.What] {
			t.Errorf("kind %d: %+v", i, c)
		}
		seen[c.What] = true
	}
	if len(counts) != reflect.TypeOf(u).NumField() {
		t.Errorf("%d kinds, UsageErrors has %d fields", len(counts), reflect.TypeOf(u).NumField())
	}
}
