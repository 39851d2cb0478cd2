package variation_test

import (
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
func rankFiles(t *testing.T, run tracetest.ShapeRun) []*tracefile.File {
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

// through passes v through its binary form, as it crosses the tree.
func through[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := Decode(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// inSitu runs the analysis as the ranks run it at the collective end: each
// its own Choice, merged up a binomial tree, the Cut down, each its own
// segments, gathered up the tree, finished at the root.
func inSitu(t *testing.T, files []*tracefile.File) (*Variation, error) {
	t.Helper()
	p := len(files)
	choices := make([]*Choice, p)
	for r, f := range files {
		c, err := LocalChoice(f)
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
				if name, _ := shape.SolverRegion(); got.Region != name || len(got.Segments) < 20*ranks-ranks {
					t.Errorf("in-situ cut %d segments at %q, want about %d at %q", len(got.Segments), got.Region, 20*ranks, name)
				}
			})
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
}
