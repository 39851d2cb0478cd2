package variation_test

import (
	"reflect"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// scanAll does by hand what the package documents for a tool that reads
// the events itself: a Plan, a Scanner per location fed every event, the
// indices shifted by Finish, then Score and Notes.
func scanAll(t *testing.T, files []*tracefile.File, p *Plan) *Variation {
	t.Helper()
	v := p.Variation()
	for n, ref := range Locations(files) {
		f := files[ref.File]
		if &f.Locations[ref.Index] != ref.Location {
			t.Fatalf("location %d: Index and Location disagree", n)
		}
		var segs []Segment
		s := p.NewScanner(f, ref, n, func(seg Segment) { segs = append(segs, seg) })
		var e tracefile.Event
		it := f.Events(ref.Location.ID)
		for it.Next(&e) {
			s.Event(&e)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		row, shift := s.Finish()
		for i := range segs {
			segs[i].Index += shift
		}
		v.Rows = append(v.Rows, row)
		v.Segments = append(v.Segments, segs...)
	}
	if len(v.Segments) == 0 {
		t.Fatal(p.NoInvocation(files))
	}
	v.Score()
	v.Notes = p.Notes(v.Rows, files)
	return v
}

// The streaming pieces put together give Analyze's result, on a keep-last
// window (whose segments Finish renumbers) with extra sync patterns, on a
// depth reduction that shed synchronization calls, and on several files.
func TestPlanScannerMatchAnalyze(t *testing.T) {
	sync, _ := filter.ParsePatternList("barrier wait")
	p := planted{locations: 2, iterations: 400}
	locs, order := p.calls()
	window := recordCalls(t, measure.Config{BufferSize: 8 << 10, BinSize: 512, Reduction: measure.ReduceLast}, unit, locs, order...)
	q := planted{locations: 4, iterations: 400, slow: map[[2]int]bool{{1, 5}: true}}
	locs, order = q.calls()
	depth := recordCalls(t, measure.Config{BufferSize: 24 << 10, BinSize: 512}, unit, locs, order...)
	a, b := figure3(t, "MPI_Barrier"), figure3(t, "MPI_Barrier")
	b.Header.Rank = 1
	for name, c := range map[string]struct {
		files []*tracefile.File
		opt   Options
	}{
		"window":   {[]*tracefile.File{window}, Options{Sync: sync}},
		"depth":    {[]*tracefile.File{depth}, Options{Sync: sync}},
		"two":      {[]*tracefile.File{a, b}, Options{}},
		"picked":   {[]*tracefile.File{a, b}, Options{Region: "calc"}},
		"no notes": {[]*tracefile.File{a}, Options{}},
	} {
		want, err := Analyze(c.files, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := NewPlanner(c.files, 2).Plan(c.opt.Region, c.opt.Sync)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := scanAll(t, c.files, p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: by hand\n%+v\nAnalyze\n%+v", name, got, want)
		}
	}
}

// A Planner chooses the time-dominant region once per set of patterns, and
// its plans for other regions keep that choice; an unknown region is
// Analyze's error.
func TestPlanner(t *testing.T) {
	files := []*tracefile.File{figure3(t, "MPI_Barrier")}
	pl := NewPlanner(files, 1)
	dom, err := pl.Plan("", filter.Patterns{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := TimeDominant(files)
	if err != nil {
		t.Fatal(err)
	}
	if dom.Region != want.Region.Name || dom.Picked || !dom.HasDominance || !reflect.DeepEqual(dom.Dominance, want) {
		t.Errorf("plan %+v, want the time-dominant %+v", dom, want)
	}
	picked, err := pl.Plan("calc", filter.Patterns{})
	if err != nil {
		t.Fatal(err)
	}
	if picked.Region != "calc" || !picked.Picked || !reflect.DeepEqual(picked.Dominance, dom.Dominance) {
		t.Errorf("picked plan %+v", picked)
	}
	if !reflect.DeepEqual(picked.SyncRegions, []string{"MPI_Barrier"}) {
		t.Errorf("sync regions %q", picked.SyncRegions)
	}
	_, err = pl.Plan("no such region", filter.Patterns{})
	_, aerr := Analyze(files, Options{Region: "no such region"})
	if err == nil || aerr == nil || err.Error() != aerr.Error() || !strings.Contains(err.Error(), `"no such region"`) {
		t.Errorf("unknown region: %v; Analyze says %v", err, aerr)
	}
}
