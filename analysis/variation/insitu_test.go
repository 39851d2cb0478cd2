package variation_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// rankFiles records a shape's run as one file per rank, as an MPI run
// writes it.
func rankFiles(t testing.TB, run tracetest.ShapeRun) []*tracefile.File {
	t.Helper()
	locs, order := run.Calls()
	var files []*tracefile.File
	for r := 0; r < run.Ranks; r++ {
		mine := map[string][]tracetest.Call{}
		var names []string
		for _, name := range order {
			if name == fmt.Sprintf("rank %d", r) || strings.HasPrefix(name, fmt.Sprintf("rank %d ", r)) {
				mine[name] = locs[name]
				names = append(names, name)
			}
		}
		files = append(files, tracetest.RecordCalls(t, measure.Config{Rank: r}, tracetest.WeberUnit, mine, names...))
	}
	return files
}

// through passes v through the form it crosses the tree in: the wire
// form for a Choice or Segments (read back, it must encode to the JSON
// of v), JSON for the rest.
func through[T any](t *testing.T, v *T) *T {
	t.Helper()
	var out T
	switch any(v).(type) {
	case *Choice, *Segments:
		b, err := EncodeWire(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := DecodeWire(b, &out); err != nil {
			t.Fatal(err)
		}
		want, _ := Encode(v)
		if got, _ := Encode(&out); string(got) != string(want) {
			t.Fatalf("%T through its wire form:\n%s\nwant\n%s", v, got, want)
		}
		return &out
	}
	b, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := Decode(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// inSitu runs the analysis as the ranks run it at the collective end: each
// its own Choice, merged up a binomial tree, the Cut down, each its own
// segments, gathered up the tree, finished at the root.
func inSitu(t *testing.T, files []*tracefile.File) (*Variation, error) {
	return inSituWith(t, files, false)
}

// inSituWith is inSitu; with once, each rank decodes its events once for
// both of its passes (ReadRankEvents), as cshim's collective end does.
func inSituWith(t *testing.T, files []*tracefile.File, once bool) (*Variation, error) {
	t.Helper()
	p := len(files)
	events := make([]*RankEvents, p)
	if once {
		for r, f := range files {
			ev, err := ReadRankEvents(f, 1<<30)
			if err != nil || ev == nil {
				t.Fatalf("rank %d: ReadRankEvents: %v, %v", r, ev, err)
			}
			events[r] = ev
		}
	}
	choices := make([]*Choice, p)
	for r, f := range files {
		c, err := LocalChoice(f)
		if once {
			c, err = events[r].Choice()
		}
		if err != nil {
			t.Fatal(err)
		}
		choices[r] = through(t, c)
	}
	for step := 1; step < p; step <<= 1 {
		for r := 0; r+step < p; r += 2 * step {
			choices[r].Merge(through(t, choices[r+step]))
		}
	}
	cut, err := choices[0].Cut()
	if err != nil {
		return nil, err
	}
	segs := make([]*Segments, p)
	for r, f := range files {
		s, err := through(t, cut).Local(f)
		if once {
			s, err = through(t, cut).Segments(events[r])
		}
		if err != nil {
			t.Fatal(err)
		}
		segs[r] = s
	}
	for step := 1; step < p; step <<= 1 {
		for r := 0; r+step < p; r += 2 * step {
			segs[r].Merge(through(t, segs[r+step]))
		}
	}
	v, err := cut.Finish(segs[0])
	if err != nil {
		return nil, err
	}
	res := through(t, &InSitu{Variation: v})
	return res.Variation, nil
}

// The analysis in-situ is the analysis of the files: the same region
// chosen, segments, scores and notes, on the shapes of issue 33 at 2 to 5
// ranks (an odd count leaves a subtree short), quiet and loaded.
func TestInSituEqualsFiles(t *testing.T) {
	for _, shape := range []tracetest.Shape{tracetest.ShapeCG, tracetest.ShapeOpenMP, tracetest.ShapeInlined, tracetest.ShapeHybrid} {
		for _, ranks := range []int{2, 5} {
			t.Run(fmt.Sprintf("%s/%d ranks", shape, ranks), func(t *testing.T) {
				files := rankFiles(t, tracetest.ShapeRun{Shape: shape, Ranks: ranks, Threads: 2, Iterations: 20,
					Load: 1, Seed: 3, Slow: [2]int{1, 11}})
				want, err := Analyze(files, Options{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := inSitu(t, files)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("in-situ\n%+v\nfrom the files\n%+v", got, want)
				}
				once, err := inSituWith(t, files, true)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(once, want) {
					t.Errorf("in-situ, events decoded once\n%+v\nfrom the files\n%+v", once, want)
				}
				if name, _ := shape.SolverRegion(); got.Region != name || len(got.Segments) < 20*ranks-ranks {
					t.Errorf("in-situ cut %d segments at %q, want about %d at %q", len(got.Segments), got.Region, 20*ranks, name)
				}
			})
		}
	}
}

// Events that do not fit the limit are not decoded: the passes read the
// trace themselves.
func TestReadRankEventsLimit(t *testing.T) {
	files := rankFiles(t, tracetest.ShapeRun{Shape: tracetest.ShapeCG, Ranks: 1, Iterations: 5, Load: 1, Seed: 3})
	f := files[0]
	ev, err := ReadRankEvents(f, 1<<30)
	if err != nil || ev == nil || ev.File() != f {
		t.Fatalf("ReadRankEvents with room: %v, %v", ev, err)
	}
	var kept uint64
	for _, l := range f.Locations {
		kept += l.Kept()
	}
	if kept == 0 {
		t.Fatal("the trace kept no events")
	}
	for _, limit := range []int64{0, int64(kept)*RankEventBytes - 1} {
		if ev, err := ReadRankEvents(f, limit); ev != nil || err != nil {
			t.Errorf("ReadRankEvents(limit %d bytes, %d events kept) = %v, %v; want nil, nil", limit, kept, ev, err)
		}
	}
}

// Without a region to cut at, the in-situ analysis fails as Analyze does.
func TestInSituNoDominantRegion(t *testing.T) {
	locs := map[string][]tracetest.Call{"main": {tracetest.C("main", 0, 100)}}
	files := []*tracefile.File{
		tracetest.RecordCalls(t, measure.Config{Rank: 0}, 1, locs, "main"),
		tracetest.RecordCalls(t, measure.Config{Rank: 1}, 1, locs, "main"),
	}
	_, want := Analyze(files, Options{})
	_, got := inSitu(t, files)
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Errorf("in-situ: %v; from the files: %v", got, want)
	}
	if _, once := inSituWith(t, files, true); once == nil || want == nil || once.Error() != want.Error() {
		t.Errorf("in-situ, events decoded once: %v; from the files: %v", once, want)
	}
}

// The archive holds the in-situ segments in their wire form, a few times
// smaller than JSON's, and still reads archives that hold them as JSON
// inside the analysis.
func TestInSituSegmentsCompact(t *testing.T) {
	files := rankFiles(t, tracetest.ShapeRun{Shape: tracetest.ShapeCG, Ranks: 3, Threads: 1, Iterations: 200, Load: 1, Seed: 5})
	v, err := Analyze(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Segments) < 500 {
		t.Fatalf("%d segments; want the shape's 600", len(v.Segments))
	}
	b, err := Encode(&InSitu{Variation: v})
	if err != nil {
		t.Fatal(err)
	}
	type plain InSitu // without InSitu's methods: the form archives had
	old, err := json.Marshal(plain{Variation: v})
	if err != nil {
		t.Fatal(err)
	}
	if per, oldPer := len(b)/len(v.Segments), len(old)/len(v.Segments); per > 40 || per*3 > oldPer {
		t.Errorf("%d bytes a segment, %d as JSON; want at most 40 and a third", per, oldPer)
	}
	for _, enc := range [][]byte{b, old} {
		var in InSitu
		if err := Decode(enc, &in); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in.Variation, v) {
			t.Errorf("read back %d segments, %d rows; want the analysis as it was", len(in.Variation.Segments), len(in.Variation.Rows))
		}
	}
}
