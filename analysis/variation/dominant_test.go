package variation_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// cg is a conjugate-gradient solver on p ranks as a fully instrumented run
// on a loaded machine shows it: each iteration computes a sparse
// matrix–vector product (spmv), exchanges halos (MPI_Isend, MPI_Irecv,
// MPI_Waitall), and waits in two MPI_Allreduce that take wait steps each,
// far longer than the computation. slow plants an spmv that computes 3×
// longer at (rank, iteration).
func cg(t testing.TB, ranks, iterations int, wait uint64, slow [2]int) *tracefile.File {
	locs := map[string][]call{}
	var order []string
	for r := 0; r < ranks; r++ {
		var iters []call
		var at uint64 = 1
		for it := 0; it < iterations; it++ {
			spmv := 10 + uint64(r*3+it*7)%4
			if r == slow[0] && it == slow[1] {
				spmv *= 3
			}
			start := at
			at += 1
			halo := []call{c("MPI_Isend", at, at+1), c("MPI_Irecv", at+1, at+2), c("MPI_Waitall", at+2, at+4)}
			at += 4
			k := c("spmv", at, at+spmv)
			at += spmv
			d1 := c("dot", at, at+1)
			r1 := c("MPI_Allreduce", at+1, at+1+wait)
			at += 1 + wait
			ax := c("axpy", at, at+2)
			r2 := c("MPI_Allreduce", at+2, at+2+wait)
			at += 2 + wait
			iters = append(iters, c("cg_iteration", start, at, append(halo, k, d1, r1, ax, r2)...))
			at++
		}
		name := fmt.Sprintf("rank %d", r)
		order = append(order, name)
		locs[name] = []call{c("main", 0, at+1, c("MPI_Init", 0, 1), c("solve", 1, at, iters...))}
	}
	return recordCalls(t, measure.Config{}, unit, locs, order...)
}

// TestDominantCG checks that the time-dominant region of a CG solver is its
// iteration, however long it waits in the collectives: MPI_Allreduce has
// the most inclusive time of the regions invoked often enough but is
// synchronization, and the iteration's waiting is what the SOS-time
// subtracts, so the planted slow spmv still ranks first.
func TestDominantCG(t *testing.T) {
	f := cg(t, 4, 30, 40, [2]int{2, 17})
	files := []*tracefile.File{f}
	d, err := TimeDominant(files)
	if err != nil {
		t.Fatal(err)
	}
	if d.Region.Name != "cg_iteration" || d.Weak != WeakNone || d.Between {
		t.Errorf("time-dominant %q (weak %d, between %v); want cg_iteration", d.Region.Name, d.Weak, d.Between)
	}
	v, err := Analyze(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	top := v.Ranked()[0]
	if v.Rows[top.Row].Label != "rank 2" || top.Index != 17 {
		t.Errorf("top segment %s %d; want the planted slow spmv, rank 2 segment 17", v.Rows[top.Row].Label, top.Index)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Time-dominant region: cg_iteration", `Synchronization regions: "MPI_Allreduce", "MPI_Waitall"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	// On a quiet machine the choice is the same.
	quiet := cg(t, 4, 30, 1, [2]int{-1, -1})
	if d, err := TimeDominant([]*tracefile.File{quiet}); err != nil || d.Region.Name != "cg_iteration" {
		t.Errorf("quiet machine: time-dominant %q, %v; want cg_iteration", d.Region.Name, err)
	}
}

// mpiOnly is a trace of the MPI wrappers alone on 3 ranks, 20 iterations
// of a halo exchange, with an MPI_Allreduce each unless noReduce.
func mpiOnly(t testing.TB, noReduce bool) *tracefile.File {
	locs := map[string][]call{}
	var order []string
	for r := 0; r < 3; r++ {
		var calls []call
		var at uint64
		for it := 0; it < 20; it++ {
			calls = append(calls, c("MPI_Isend", at, at+1), c("MPI_Irecv", at+1, at+2), c("MPI_Waitall", at+2, at+9))
			if !noReduce {
				calls = append(calls, c("MPI_Allreduce", at+12, at+14))
			}
			at += 15
		}
		calls = append([]call{c("MPI_Init", 0, 0)}, calls...)
		name := fmt.Sprintf("rank %d", r)
		order = append(order, name)
		locs[name] = calls
	}
	return recordCalls(t, measure.Config{}, unit, locs, order...)
}

// TestDominantMPIOnly checks that a trace of the MPI wrappers alone is cut
// between the calls of the collective every iteration makes once, and says
// so; without a collective it has no time-dominant region, and the error
// says why instead of ranking MPI calls.
func TestDominantMPIOnly(t *testing.T) {
	f := mpiOnly(t, false)
	d, err := TimeDominant([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Between || d.Region.Name != "MPI_Allreduce" || d.Weak != WeakFallback {
		t.Errorf("choice %q (between %v, weak %d); want the fallback to MPI_Allreduce", d.Region.Name, d.Between, d.Weak)
	}
	v, err := Analyze([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 19 iterations from one call to the next on each rank; each holds
	// the exchange's 9 steps, of which the Waitall's 7 and the Allreduce's
	// 2 are synchronization.
	if len(v.Segments) != 3*19 || v.Segments[0].Duration != 15*unit || v.Segments[0].SOS != 2*unit+4*unit {
		t.Errorf("%d segments, the first %+v; want 57 of 15 steps with an SOS-time of 6", len(v.Segments), v.Segments[0])
	}
	if len(v.Notes) != 1 || v.Notes[0].Kind != NoteWeakChoice {
		t.Fatalf("notes %+v; want the weak choice only", v.Notes)
	}
	for _, want := range []string{"cut between consecutive calls of MPI_Allreduce", "HMB_PHASE", "-fno-inline"} {
		if got := render.VariationNote(v.Notes[0]); !strings.Contains(got, want) {
			t.Errorf("note lacks %q: %s", want, got)
		}
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Iterations: between consecutive calls of MPI_Allreduce") {
		t.Errorf("report:\n%s", out.String())
	}

	none := mpiOnly(t, true)
	_, err = TimeDominant([]*tracefile.File{none})
	if !errors.Is(err, ErrNoComputation) {
		t.Fatalf("err %v; want ErrNoComputation", err)
	}
	for _, want := range []string{"MPI calls (MPI_Irecv, MPI_Isend)", "synchronization (MPI_Waitall)", "no MPI collective", "name the region"} {
		if !strings.Contains(render.ErrorText(err), want) {
			t.Errorf("error lacks %q: %v", want, render.ErrorText(err))
		}
	}
	if _, err := Analyze([]*tracefile.File{none}, Options{}); !errors.Is(err, ErrNoComputation) {
		t.Errorf("Analyze: err %v; want ErrNoComputation", err)
	}
	// A region named by the user still segments the run.
	if v, err := Analyze([]*tracefile.File{none}, Options{Region: "MPI_Waitall"}); err != nil || len(v.Segments) != 60 {
		t.Errorf("-region MPI_Waitall: %v", err)
	}
}

// TestIrregularity checks the period statistic: a region invoked once per
// iteration is regular, a helper called in bursts is not, and a region's
// calls nested in its own do not count.
func TestIrregularity(t *testing.T) {
	var iters []call
	var at uint64
	for it := 0; it < 20; it++ {
		var burst []call
		for k := uint64(0); k < 10; k++ {
			burst = append(burst, c("helper", at+k, at+k+1, c("helper", at+k, at+k+1)))
		}
		iters = append(iters, c("iteration", at, at+1000, burst...))
		at += 1000
	}
	f := recordCalls(t, measure.Config{}, unit, map[string][]call{"thread 0": {c("main", 0, at, iters...)}}, "thread 0")
	ws, err := WaitShares([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	irr := map[string]float64{}
	for name, w := range ws {
		irr[name] = w.Irregularity
	}
	if irr["iteration"] != 0 {
		t.Errorf("iteration: irregularity %g; want 0", irr["iteration"])
	}
	if irr["helper"] <= MaxIrregularity {
		t.Errorf("helper in bursts: irregularity %g; want above %g", irr["helper"], MaxIrregularity)
	}
	if irr["main"] != 0 {
		t.Errorf("main, invoked once: irregularity %g; want 0", irr["main"])
	}
}

// TestWaitShareNested checks the share of a region's time that waits: a
// wait nested in it counts, a task run in that wait does not, and a region
// called inside a wait does not wait itself.
func TestWaitShareNested(t *testing.T) {
	const (
		bar  = "!$omp barrier @a.c:3"
		task = "!$omp task @a.c:4"
	)
	f := recordCalls(t, measure.Config{}, unit, map[string][]call{
		"thread 0": {c("main", 0, 100,
			c("outer", 0, 20, c("MPI_Recv", 2, 12, c("progress", 4, 6))),
			c("outer", 20, 40, c(bar, 20, 36, c(task, 22, 30, c("work", 22, 30))))),
		},
	}, "thread 0")
	ws, err := WaitShares([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, traced, waiting int64) {
		t.Helper()
		if got := ws[name]; got.Traced != traced*unit || got.Waiting != waiting*unit {
			t.Errorf("%s: traced %d, waiting %d; want %d and %d", name, got.Traced, got.Waiting, traced*unit, waiting*unit)
		}
	}
	check("outer", 40, 10+8)  // MPI_Recv's 10, the barrier's 16 less the task's 8
	check("progress", 2, 0)   // inside MPI_Recv, waits in nothing of its own
	check("work", 8, 0)       // the task's body
	check("main", 100, 18)    // all of it
	check("MPI_Recv", 10, 10) // a wait waits
	check(task, 8, 0)         // a task run in a barrier works
	if s := ws["outer"].Share; s != 18.0/40 {
		t.Errorf("outer's share %g; want 0.45", s)
	}
}

// TestSlowestRows checks that a location slow in every segment (a load
// imbalance) is named first by its median SOS-time, before a location slow
// in a single segment.
func TestSlowestRows(t *testing.T) {
	slow := map[[2]int]bool{{1, 5}: true}
	for it := 0; it < 40; it++ {
		slow[[2]int{3, it}] = true
	}
	f := planted{locations: 6, iterations: 40, slow: slow}.record(t)
	sync, _ := filter.ParsePatternList("barrier wait")
	v, err := Analyze([]*tracefile.File{f}, Options{Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	if rows := v.SlowestRows(); len(rows) != 6 || v.Rows[rows[0]].Label != "rank 3" || v.Rows[rows[0]].Median != 30*unit {
		t.Fatalf("slowest rows %v; want rank 3 first with a median of 30 steps", rows)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Slowest locations by median SOS-time: rank 3 30.000 µs (") {
		t.Errorf("report does not name rank 3 first:\n%s", out.String())
	}
}

// TestBalancedRows checks that without an imbalance no location is named
// as slowest.
func TestBalancedRows(t *testing.T) {
	locs := map[string][]call{}
	var order []string
	for l := 0; l < 4; l++ {
		var iters []call
		var at uint64
		for it := 0; it < 20; it++ {
			d := 10 + uint64(it+l)%3 // every location computes 10, 11 and 12 steps in turn
			iters = append(iters, c("iteration", at, at+d))
			at += d
		}
		name := fmt.Sprintf("rank %d", l)
		order = append(order, name)
		locs[name] = []call{c("main", 0, at, iters...)}
	}
	f := recordCalls(t, measure.Config{}, unit, locs, order...)
	v, err := Analyze([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Locations by median SOS-time: none stands out (the slowest, ") {
		t.Errorf("report of a balanced run:\n%s", out.String())
	}
}

// TestBetweenCallsOfAWrapper: the collective is called through a function
// that wraps it (a dot product's sum, as HPCCG's ddot and the ParRes
// kernels' bail_out have it), and the compute is inlined into main: the
// iterations run from one call to the next although the wrapper returns
// in each. The wrapper's return once ended them, and no segment was left.
func TestBetweenCallsOfAWrapper(t *testing.T) {
	locs := map[string][]call{}
	var order []string
	for r := 0; r < 3; r++ {
		var iters []call
		var at uint64
		for it := 0; it < 20; it++ {
			at += 10 // inlined compute
			iters = append(iters, c("gsum", at, at+5, c("MPI_Allreduce", at, at+5)))
			at += 5
		}
		name := fmt.Sprintf("rank %d", r)
		order = append(order, name)
		locs[name] = []call{c("MPI_Init", 0, 0), c("main", 0, at+1, iters...)}
	}
	f := recordCalls(t, measure.Config{}, unit, locs, order...)
	v, err := Analyze([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Between || v.Region != "MPI_Allreduce" {
		t.Fatalf("cut at %q (between %v); want between the calls of MPI_Allreduce", v.Region, v.Between)
	}
	if len(v.Segments) != 3*19 || v.Segments[0].Duration != 15*unit || v.Segments[0].SOS != 10*unit {
		t.Errorf("%d segments, the first %+v; want 57 of 15 steps with an SOS-time of 10", len(v.Segments), v.Segments[0])
	}
}

// TestBetweenCallsOfTwoCallers cuts between calls of MPI_Allreduce made
// through wrappers: two functions in turn in one loop (a sum and a norm),
// a timer's barrier two functions down, and two phases each with a loop
// of its own. A gap between two calls is an iteration when the location
// returned no higher than the loop's depth, the depth it most often
// returns to: the wrappers' gaps all are (they failed with "no invocation
// of MPI_Allreduce is in the trace", as miniMD's timer barrier did), and
// only the gap from one phase to the next, which returns to main, begins
// the iterations again (counted, and said in a note: those calls were
// counted as invocations "not in the trace").
func TestBetweenCallsOfTwoCallers(t *testing.T) {
	allreduce := func(at uint64) call { return c("MPI_Allreduce", at, at+5) }
	for _, tc := range []struct {
		name     string
		body     func(at *uint64) []call
		segments int // per rank
		starts   int
	}{
		{"two wrappers in one loop", func(at *uint64) []call {
			var body []call
			for it := 0; it < 10; it++ {
				for _, fn := range []string{"sumA", "sumB"} {
					*at += 10
					body = append(body, c(fn, *at, *at+5, allreduce(*at)))
					*at += 5
				}
			}
			return body
		}, 19, 1},
		{"a barrier two functions down", func(at *uint64) []call {
			var body []call
			for it := 0; it < 10; it++ {
				*at += 10
				body = append(body, c("report", *at, *at+5, c("stamp", *at, *at+5, allreduce(*at))))
				*at += 5
			}
			return body
		}, 9, 1},
		{"two phases", func(at *uint64) []call {
			var body []call
			for _, ph := range []string{"phase1", "phase2"} {
				start := *at
				var loop []call
				for it := 0; it < 10; it++ {
					*at += 10
					loop = append(loop, c("gsum", *at, *at+5, allreduce(*at)))
					*at += 5
				}
				*at += 100
				body = append(body, c(ph, start, *at, loop...))
			}
			return body
		}, 18, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locs := map[string][]call{}
			var order []string
			for r := 0; r < 3; r++ {
				var at uint64
				body := tc.body(&at)
				name := fmt.Sprintf("rank %d", r)
				order = append(order, name)
				locs[name] = []call{c("MPI_Init", 0, 0), c("main", 0, at+1, body...)}
			}
			f := recordCalls(t, measure.Config{}, unit, locs, order...)
			v, err := Analyze([]*tracefile.File{f}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !v.Between {
				t.Fatalf("cut at %q (between %v); want between the calls of MPI_Allreduce", v.Region, v.Between)
			}
			if len(v.Segments) != 3*tc.segments {
				t.Errorf("%d segments; want %d on each of 3 ranks", len(v.Segments), tc.segments)
			}
			restarts := uint64(0)
			for _, n := range v.Notes {
				switch n.Kind {
				case NoteShedInvocations:
					t.Errorf("note: %d of %d invocations not in the trace; want none", n.Missing, n.Of)
				case NoteRestarted:
					restarts = n.Missing
				}
			}
			if want := uint64(3 * (tc.starts - 1)); restarts != want {
				t.Errorf("%d calls noted as beginning the iterations again; want %d", restarts, want)
			}
			for _, r := range v.Rows {
				if r.Starts != tc.starts {
					t.Errorf("row %s: %d starts; want %d", r.Label, r.Starts, tc.starts)
				}
			}
		})
	}
}
