package variation_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestShapesSegmentBySolver checks issue 33's three shapes of program —
// a CG solver waiting 70 % in MPI_Allreduce beside a 1 % setup routine,
// an MPI+OpenMP solve whose work is all in parallel loops, and a code
// with everything inlined into main — on 2 and 4 ranks, quiet and with
// the timings perturbed as a loaded machine does: each is cut by its
// solver loop, the planted slowdown ranks first, and the inlined one says
// that its iterations are cut between the collective's calls; and
// LULESH's shape, whose exchange routine, called three times an iteration
// and waiting in it, is no iteration: cut between the collective's calls.
func TestShapesSegmentBySolver(t *testing.T) {
	for _, shape := range []tracetest.Shape{tracetest.ShapeCG, tracetest.ShapeOpenMP, tracetest.ShapeInlined, tracetest.ShapeExchange} {
		for _, ranks := range []int{2, 4} {
			for _, load := range []float64{0, 1} {
				for seed := uint64(1); seed <= 2; seed++ {
					if load == 0 && seed > 1 {
						continue
					}
					t.Run(fmt.Sprintf("%s/%d ranks/load %g/seed %d", shape, ranks, load, seed), func(t *testing.T) {
						checkShape(t, tracetest.ShapeRun{Shape: shape, Ranks: ranks, Threads: 2, Iterations: 30,
							Load: load, Seed: seed, Slow: [2]int{1, 17}})
					})
				}
			}
		}
	}
}

func checkShape(t *testing.T, run tracetest.ShapeRun) {
	checkShapeNote(t, run, true)
}

// checkShapeNote is checkShape that checks the weak-choice note only with
// note.
func checkShapeNote(t *testing.T, run tracetest.ShapeRun, note bool) {
	f := run.Record(t)
	files := []*tracefile.File{f}
	want, between := run.Shape.SolverRegion()
	d, err := TimeDominant(files)
	if err != nil {
		t.Fatal(err)
	}
	if d.Region.Name != want || d.Between != between {
		t.Fatalf("chose %q (between calls: %v, weak %d, share %.3f); want %q", d.Region.Name, d.Between, d.Weak, d.Share, want)
	}
	if between != (d.Weak == WeakFallback) {
		t.Errorf("weakness %d; want the fallback exactly when cut between calls", d.Weak)
	}
	v, err := Analyze(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The planted slowdown is location 1's iteration 17: segment 17 of
	// the solver's invocations, or segment 16 between the collective's
	// calls (from the end of iteration 16 to that of iteration 17).
	wantIndex := 17
	if between {
		wantIndex = 16
	}
	top := v.Ranked()[0]
	if top.Row != 1 || top.Index != wantIndex {
		t.Errorf("top segment %s %d (score %.1f); want %s %d", v.Rows[top.Row].Label, top.Index, top.Score, v.Rows[1].Label, wantIndex)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 3); err != nil {
		t.Fatal(err)
	}
	weakNote := strings.Contains(out.String(), "HMB_PHASE")
	if note && weakNote != between {
		t.Errorf("weak-choice note printed %v; want %v:\n%s", weakNote, between, out.String())
	}
}

// TestShapeDynamicsSaysWeak checks that dynamics, which cuts its
// iterations as variation does, says where they come from and why the
// choice is weak when the code is inlined into main.
func TestShapeDynamicsSaysWeak(t *testing.T) {
	f := tracetest.ShapeRun{Shape: tracetest.ShapeInlined, Ranks: 2, Iterations: 30, Slow: [2]int{-1, -1}}.Record(t)
	r, err := trend.Analyze([]*tracefile.File{f}, trend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.DynamicsText(&out, r, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Iterations: the intervals between consecutive calls of "MPI_Allreduce"`,
		"note: no region of the program carries the iterations (none holds 10.0% of the run's computation", "HMB_PHASE", "-fno-inline"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dynamics lacks %q:\n%s", want, out.String())
		}
	}
}

// TestHybridWeakNoteNamesRankCollective checks an MPI+OpenMP code whose
// compute is inlined (LULESH with two threads): only small parallel
// regions are candidates, and the MPI_Allreduce each rank's master thread
// calls every iteration cannot cut the other threads' iterations, which
// the weak choice's note says instead of "no collective".
func TestHybridWeakNoteNamesRankCollective(t *testing.T) {
	const ranks, threads, iters = 2, 2, 20
	var files []*tracefile.File
	for r := 0; r < ranks; r++ {
		locs := map[string][]tracetest.Call{}
		var order []string
		for th := 0; th < threads; th++ {
			name := fmt.Sprintf("rank %d thread %d", r, th)
			order = append(order, name)
			var calls []tracetest.Call
			at := uint64(1)
			for it := 0; it < iters; it++ {
				calls = append(calls, tracetest.C("!$omp parallel @eos.c:7", at, at+3))
				if th == 0 {
					calls = append(calls, tracetest.C("MPI_Allreduce", at+90, at+99))
				}
				at += 100
			}
			locs[name] = []tracetest.Call{tracetest.C("main", 0, at+1, calls...)}
		}
		files = append(files, tracetest.RecordCalls(t, measure.Config{}, tracetest.WeberUnit, locs, order...))
	}
	d, err := TimeDominant(files)
	if err != nil {
		t.Fatal(err)
	}
	if d.Weak != WeakShareOfRun || !d.HasRankLoop || d.RankLoop.Name != "MPI_Allreduce" || d.HasLoop {
		t.Fatalf("weak %d, rank loop %v %q, loop %v; want WeakShareOfRun with MPI_Allreduce as the ranks' loop", d.Weak, d.HasRankLoop, d.RankLoop.Name, d.HasLoop)
	}
	v, err := Analyze(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "MPI_Allreduce, called throughout the run (40 calls), is called by one thread of each rank only") {
		t.Errorf("the note does not name the ranks' collective:\n%s", out.String())
	}
}

// TestShapesStartupSkew checks that the choice does not depend on how far
// apart the ranks leave MPI_Init: on a loaded machine one rank can be a
// second late, which the others wait out in their first synchronizing
// call, and a short run then spends most of its time in that wait. Here
// the last rank is 10 times the length of the whole loop late; the shapes
// are still cut by their solver loops, and the inlined ones between the
// collective's calls. The MPI+OpenMP shape's parallel region then covers
// a few percent of a run that the skew fills (its worker threads' main
// counts the idle start), and its note says so: the note is not checked.
func TestShapesStartupSkew(t *testing.T) {
	const iters = 30
	// An iteration of the shapes takes 125 to 330 units; 10 × the longest
	// loop.
	const skew = 10 * iters * 330
	for _, shape := range []tracetest.Shape{tracetest.ShapeCG, tracetest.ShapeOpenMP, tracetest.ShapeInlined, tracetest.ShapeExchange} {
		for _, ranks := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/%d ranks", shape, ranks), func(t *testing.T) {
				checkShapeNote(t, tracetest.ShapeRun{Shape: shape, Ranks: ranks, Threads: 2, Iterations: iters,
					Load: 1, Seed: 3, Slow: [2]int{1, 17}, Skew: skew}, shape != tracetest.ShapeOpenMP)
			})
		}
	}
}
