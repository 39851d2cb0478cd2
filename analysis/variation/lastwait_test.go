package variation_test

import (
	"fmt"
	"reflect"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// lastWait is a run whose every iteration ends in its wait: step computes
// (calc, 10 to 14 units) and then waits in MPI_Allreduce, its last MPI
// operation, until the iteration's 30 units are up; then io writes for 14
// units, waiting in nothing. It returns the files, one per rank, and each
// rank's calc units per iteration.
func lastWait(t *testing.T, ranks, iterations int) ([]*tracefile.File, [][]int64) {
	var files []*tracefile.File
	calcs := make([][]int64, ranks)
	for r := range ranks {
		var iters []call
		var at uint64 = 1
		for i := range iterations {
			calc := uint64(10 + (r*3+i)%5)
			calcs[r] = append(calcs[r], int64(calc))
			iters = append(iters, c("step", at, at+30, c("calc", at, at+calc), c("MPI_Allreduce", at+calc, at+30)),
				c("io", at+31, at+45))
			at += 46
		}
		name := fmt.Sprintf("rank %d", r)
		files = append(files, tracetest.RecordCalls(t, measure.Config{Rank: r}, unit,
			map[string][]call{name: {c("main", 0, at+1, append([]call{c("MPI_Init", 0, 1)}, iters...)...)}}, name))
	}
	return files, calcs
}

// TestLastOperationWaitSubtracted checks Weber et al.'s SOS-time where a
// call's waiting is all in its last MPI operation: the choice weighs step
// by its computation alone (so io, which computes more, is chosen, where
// step's inclusive time would win), post-mortem and in-situ alike, and
// step's segments are its calc, to the unit.
func TestLastOperationWaitSubtracted(t *testing.T) {
	const ranks, iterations = 3, 8
	files, calcs := lastWait(t, ranks, iterations)
	v, err := Analyze(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calcSum int64
	for _, cs := range calcs {
		for _, x := range cs {
			calcSum += x
		}
	}
	if v.Region != "io" {
		t.Fatalf("chose %q, want io: step's SOS-time is its calc (%d units), io's %d", v.Region, calcSum, 14*ranks*iterations)
	}
	var step *MinorRegion
	for i, m := range v.Dominance.Minor {
		if m.Name == "step" {
			step = &v.Dominance.Minor[i]
		}
	}
	if step == nil {
		t.Fatalf("step is not among the candidates passed over: %+v", v.Dominance.Minor)
	}
	if want := float64(calcSum * unit); step.SOS != want {
		t.Errorf("step's SOS-time %g ns, want its calc's %g: the wait in its last MPI operation not subtracted", step.SOS, want)
	}
	if want := 1 - float64(calcSum)/float64(30*ranks*iterations); step.Waiting < want-1e-12 || step.Waiting > want+1e-12 {
		t.Errorf("step waits %g of its time, want %g", step.Waiting, want)
	}
	got, err := inSitu(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Errorf("in-situ\n%+v\nfrom the files\n%+v", got, v)
	}

	// Cut at step, each segment's SOS-time is its calc.
	v, err = Analyze(files, Options{Region: "step"})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Segments) != ranks*iterations {
		t.Fatalf("%d segments, want %d", len(v.Segments), ranks*iterations)
	}
	for _, s := range v.Segments {
		r := v.Rows[s.Row].File
		if want := calcs[r][s.Index] * unit; s.SOS != want || s.Duration != 30*unit {
			t.Errorf("rank %d, segment %d: SOS %d ns of %d, want %d of %d", r, s.Index, s.SOS, s.Duration, want, 30*unit)
		}
	}
}
