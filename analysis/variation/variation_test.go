package variation_test

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// figure3 is Weber et al.'s figure 3: each iteration a is a calculation calc
// followed by an MPI synchronization; in the first, process 0 computes for
// 5 steps and process 2 for 1, so process 2 waits 5.
func figure3(t testing.TB, mpi string) *tracefile.File {
	iterations := func(calc1, calc2 uint64) []call {
		return []call{
			c("a", 4, 10, c("calc", 4, 4+calc1), c(mpi, 4+calc1, 10)),
			c("a", 10, 13, c("calc", 10, 10+calc2), c(mpi, 10+calc2, 13)),
			c("a", 13, 16, c("calc", 13, 15), c(mpi, 15, 16)),
		}
	}
	return recordCalls(t, measure.Config{}, unit, map[string][]call{
		"process 0": {c("main", 0, 18, iterations(5, 2)...)},
		"process 1": {c("main", 0, 18, iterations(3, 2)...)},
		"process 2": {c("main", 0, 18, iterations(1, 1)...)},
	}, "process 0", "process 1", "process 2")
}

func TestTimeDominantFigure2(t *testing.T) {
	f := figure2(t)
	d, err := TimeDominant([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if d.Locations != 3 || d.MinVisits != 6 {
		t.Errorf("p = %d, 2p = %d; want 3 and 6", d.Locations, d.MinVisits)
	}
	if d.Region.Name != "a" || d.Region.Visits != 9 || d.Region.Inclusive != 36*unit {
		t.Errorf("dominant %+v; want a, 9 invocations, 36 steps", d.Region)
	}
	if len(d.Ineligible) != 1 || d.Ineligible[0].Name != "main" || d.Ineligible[0].Inclusive != 54*unit || d.Ineligible[0].Visits != 3 {
		t.Errorf("passed over %+v; want main with 54 steps in 3 invocations", d.Ineligible)
	}
	// b takes 5+2+2, 3+2+2 and 1+2+2 steps: 21 in 9 invocations.
	if !d.HasRunnerUp || d.RunnerUp.Name != "b" || d.RunnerUp.Inclusive != 21*unit {
		t.Errorf("runner-up %+v; want b with 21 steps", d.RunnerUp)
	}
}

func TestSOSTimeFigure3(t *testing.T) {
	for _, tc := range []struct {
		mpi, sync string
	}{
		{"MPI_Barrier", ""}, // known by default
		{"MPI", "MPI"},      // the figure's generic name, given as a pattern
	} {
		f := figure3(t, tc.mpi)
		pats, err := filter.ParsePatternList(tc.sync)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Analyze([]*tracefile.File{f}, Options{Sync: pats})
		if err != nil {
			t.Fatal(err)
		}
		if v.Region != "a" || v.Picked {
			t.Errorf("%s: segment region %q picked=%v; want a chosen", tc.mpi, v.Region, v.Picked)
		}
		if len(v.SyncRegions) != 1 || v.SyncRegions[0] != tc.mpi {
			t.Errorf("%s: sync regions %q", tc.mpi, v.SyncRegions)
		}
		if len(v.Segments) != 9 || len(v.Rows) != 3 {
			t.Fatalf("%s: %d segments on %d rows; want 9 on 3", tc.mpi, len(v.Segments), len(v.Rows))
		}
		// Durations (figure 3, middle) and SOS-times (bottom).
		wantDur := []int64{6, 3, 3, 6, 3, 3, 6, 3, 3}
		wantSOS := []int64{5, 2, 2, 3, 2, 2, 1, 1, 2}
		for i, s := range v.Segments {
			if s.Row != i/3 || s.Index != i%3 {
				t.Errorf("%s: segment %d is row %d index %d", tc.mpi, i, s.Row, s.Index)
			}
			if s.Duration != wantDur[i]*unit || s.SOS != wantSOS[i]*unit || s.Sync != s.Duration-s.SOS {
				t.Errorf("%s: process %d iteration %d: duration %d, SOS %d, sync %d; want %d, %d",
					tc.mpi, i/3, i%3, s.Duration, s.SOS, s.Sync, wantDur[i]*unit, wantSOS[i]*unit)
			}
		}
		if v.Segments[0].SOS != 5*unit || v.Segments[6].SOS != 1*unit {
			t.Errorf("%s: first iteration SOS-times %d and %d; want 5 and 1 steps", tc.mpi, v.Segments[0].SOS, v.Segments[6].SOS)
		}
		if len(v.Notes) != 0 {
			t.Errorf("%s: notes %+v", tc.mpi, v.Notes)
		}
	}
}

// Without a synchronization region the SOS-time is the duration, and the
// report says so.
func TestNoSyncRegion(t *testing.T) {
	f := figure3(t, "MPI")
	v, err := Analyze([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Segments {
		if s.SOS != s.Duration || s.Sync != 0 {
			t.Errorf("segment %+v: SOS differs from duration without sync regions", s)
		}
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, DefaultMinScore, 10); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no region of the trace is a synchronization region") {
		t.Errorf("report does not say there is no sync region:\n%s", out.String())
	}
}

// A finer segmentation by a region the user names (Weber et al., figure 5c).
func TestPickedRegion(t *testing.T) {
	f := figure3(t, "MPI_Barrier")
	v, err := Analyze([]*tracefile.File{f}, Options{Region: "calc"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Picked || v.Region != "calc" || len(v.Segments) != 9 {
		t.Fatalf("picked %v region %q, %d segments", v.Picked, v.Region, len(v.Segments))
	}
	if v.Segments[0].SOS != 5*unit || v.Segments[0].Sync != 0 {
		t.Errorf("calc segment 0: %+v", v.Segments[0])
	}
	if _, err := Analyze([]*tracefile.File{f}, Options{Region: "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown region: err %v", err)
	}
}

func TestNoDominantRegion(t *testing.T) {
	f := recordCalls(t, measure.Config{}, unit, map[string][]call{
		"p0": {c("main", 0, 10, c("x", 1, 2), c("x", 3, 4))},
		"p1": {c("main", 0, 10, c("x", 1, 2))},
	}, "p0", "p1")
	_, err := TimeDominant([]*tracefile.File{f})
	if err == nil || !strings.Contains(err.Error(), "at least 4 times") {
		t.Fatalf("err %v; want no region invoked at least 4 times", err)
	}
	if _, err := Analyze([]*tracefile.File{f}, Options{}); err == nil {
		t.Error("Analyze without a dominant region and no region named: no error")
	}
	v, err := Analyze([]*tracefile.File{f}, Options{Region: "x"})
	if err != nil || len(v.Segments) != 3 || v.HasDominance {
		t.Errorf("named region x: %v, %+v", err, v)
	}
}

// TestSegmentCount checks that the report counts segments per location and
// names the locations that have none.
func TestSegmentCount(t *testing.T) {
	f := recordCalls(t, measure.Config{}, unit, map[string][]call{
		"p0": {c("main", 0, 10, c("x", 1, 2), c("x", 3, 4), c("x", 5, 6))},
		"p1": {c("main", 0, 10, c("x", 1, 2), c("x", 3, 4))},
		"p2": {c("main", 0, 10, c("y", 1, 2))},
	}, "p0", "p1", "p2")
	v, err := Analyze([]*tracefile.File{f}, Options{Region: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := render.VariationText(&text, v, DefaultMinScore, 5); err != nil {
		t.Fatal(err)
	}
	if want := "Segments: 5 on 2 of 3 locations (3 on p0, 2 on p1); none on p2;"; !strings.Contains(text.String(), want) {
		t.Errorf("report:\n%s\nwant %q", text.String(), want)
	}
	g := figure3(t, "MPI_Barrier")
	w, err := Analyze([]*tracefile.File{g}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, w, DefaultMinScore, 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Segments: 9, 3 on each of 3 locations;") {
		t.Errorf("report's segment count:\n%s", out.String())
	}
}

// Segments of a few timestamp units: their SOS-times are ticks of 6.54 ns
// rounded to ns (111 or 112 for the same count), so the MAD is 1 ns, and
// one tick above the median scored 4 and stood out (nbody's advance under
// hmbtrace-go: a quarter of 50,000 segments). The spread is floored at the
// files' timestamp unit: a tick is a score of 1.
func TestScoreSpreadAtLeastATick(t *testing.T) {
	v := &Variation{Rows: []Row{{Label: "l0", Resolution: 6.54}}}
	for i := range 1000 {
		sos := int64(111 + i%2)
		if i%4 == 3 {
			sos = 118 // a tick above
		}
		v.Segments = append(v.Segments, Segment{Index: i, Duration: sos, SOS: sos})
	}
	v.Rows[0].Segments = len(v.Segments)
	v.Score()
	if v.MAD > 1 || v.Spread != 6.54 {
		t.Errorf("MAD %g, spread %g; want at most 1 and the tick, 6.54", v.MAD, v.Spread)
	}
	for _, s := range v.Segments {
		if s.Score >= 3.5 {
			t.Fatalf("segment %d of %d ns scores %.1f: a tick above the median stands out", s.Index, s.SOS, s.Score)
		}
	}
}
