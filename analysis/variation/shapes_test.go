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

// TestHybridCutFromMaster checks an MPI+OpenMP code whose compute is
// inlined (LULESH with threads): its parallel loops are a few percent of
// the run each, and the MPI_Allreduce each rank's master thread calls
// every iteration carries the iterations. Every thread is cut at its
// master's calls, so every location has the same segments; the planted
// slow iteration of a worker thread ranks first, quiet and under a
// perturbed load, on 2 and 4 ranks of 3 threads; and the note says the cut
// was taken from the master thread.
func TestHybridCutFromMaster(t *testing.T) {
	const threads, iters = 3, 30
	for _, ranks := range []int{2, 4} {
		for _, load := range []float64{0, 1} {
			for seed := uint64(1); seed <= 2; seed++ {
				if load == 0 && seed > 1 {
					continue
				}
				t.Run(fmt.Sprintf("%d ranks/load %g/seed %d", ranks, load, seed), func(t *testing.T) {
					// Rank 1's thread 2, iteration 17.
					const slow = 1*threads + 2
					files := rankFiles(t, tracetest.ShapeRun{Shape: tracetest.ShapeHybrid, Ranks: ranks, Threads: threads,
						Iterations: iters, Load: load, Seed: seed, Slow: [2]int{slow, 17}})
					checkHybrid(t, files, ranks*threads, iters, slow)
				})
			}
		}
	}
}

// checkHybrid checks the variation analysis of a ShapeHybrid run of
// locations locations, iters iterations, whose location slow is slow in
// iteration 17.
func checkHybrid(t *testing.T, files []*tracefile.File, locations, iters, slow int) {
	t.Helper()
	d, err := TimeDominant(files)
	if err != nil {
		t.Fatal(err)
	}
	if d.Region.Name != "MPI_Allreduce" || !d.Between || !d.ByRank || d.Weak != WeakRankFallback {
		t.Fatalf("chose %q (between %v, by rank %v, weak %d, share %.3f); want MPI_Allreduce cut by rank", d.Region.Name, d.Between, d.ByRank, d.Weak, d.Share)
	}
	v, err := Analyze(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) != locations {
		t.Fatalf("%d rows, want %d", len(v.Rows), locations)
	}
	for _, r := range v.Rows {
		if r.Segments != iters-1 || r.Invocations != uint64(iters) {
			t.Errorf("%s: %d segments of %d invocations; want %d of %d", r.Label, r.Segments, r.Invocations, iters-1, iters)
		}
	}
	// Segment 16 runs from the end of iteration 16 to that of 17.
	if top := v.Ranked()[0]; top.Row != slow || top.Index != 16 {
		t.Errorf("top segment %s %d (score %.1f); want %s 16", v.Rows[top.Row].Label, top.Index, top.Score, v.Rows[slow].Label)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"calls by the master thread of each rank", "the cut was taken from the master thread", "HMB_PHASE"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("variation lacks %q:\n%s", want, out.String())
		}
	}
}

// TestHybridStartupSkew is TestHybridCutFromMaster with the last rank
// leaving MPI_Init 10 times the loop's length late.
func TestHybridStartupSkew(t *testing.T) {
	const threads, iters = 3, 30
	files := rankFiles(t, tracetest.ShapeRun{Shape: tracetest.ShapeHybrid, Ranks: 2, Threads: threads,
		Iterations: iters, Load: 1, Seed: 5, Slow: [2]int{threads + 2, 17}, Skew: 10 * iters * 200})
	checkHybrid(t, files, 2*threads, iters, threads+2)
}

// TestHybridDynamicsCutFromMaster checks that dynamics, which cuts its
// iterations with variation's Scanner, cuts every thread of an MPI+OpenMP
// code at its master's collective and says so.
func TestHybridDynamicsCutFromMaster(t *testing.T) {
	const threads, iters = 3, 30
	files := rankFiles(t, tracetest.ShapeRun{Shape: tracetest.ShapeHybrid, Ranks: 2, Threads: threads,
		Iterations: iters, Slow: [2]int{-1, -1}})
	r, err := trend.Analyze(files, trend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	perLocation := map[string]uint64{}
	for _, s := range r.Series {
		perLocation[s.Location] = s.Iterations
	}
	if len(perLocation) != 2*threads {
		t.Errorf("series of %d locations, want %d: %v", len(perLocation), 2*threads, perLocation)
	}
	for loc, n := range perLocation {
		if n != iters-1 {
			t.Errorf("%s: %d iterations, want %d", loc, n, iters-1)
		}
	}
	var out bytes.Buffer
	if err := render.DynamicsText(&out, r, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Iterations: the intervals between consecutive calls of "MPI_Allreduce"`, "the cut was taken from the master thread"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dynamics lacks %q:\n%s", want, out.String())
		}
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
