package score_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	. "github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// MPI and OpenMP regions as short and frequent as a flagged helper are not
// flagged, and the generated filter file does not name them: the run-time
// filter would keep them anyway.
func TestScoreNeverFlagsParadigms(t *testing.T) {
	const irecv, critical = "MPI_Irecv", "!$omp critical GenerateProblem_ref"
	var calls []tracetest.Call
	for h := uint64(0); h < 1000; h++ {
		t0 := 1 + 1000*h
		calls = append(calls, tracetest.C("helper", t0, t0+30), tracetest.C(irecv, t0+100, t0+130),
			tracetest.C(critical, t0+200, t0+230))
	}
	f := tracetest.RecordCalls(t, measure.Config{NoThrottle: true}, 1,
		map[string][]tracetest.Call{"w0": {tracetest.C("main", 0, 1000*1000+10, calls...)}}, "w0")
	f.Header.ProbeCost = 5 // ns: 2 × 5 of 30 ns is well above the threshold
	s, err := Compute([]*tracefile.File{f}, Options{MinShare: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Flagged(); len(got) != 1 || got[0] != "helper" {
		t.Fatalf("flagged %q; want helper only", got)
	}
	for _, name := range []string{irecv, critical} {
		r := regionScore(t, s, name)
		if !r.Paradigm || r.Flagged || r.RelTotal <= DefaultThreshold {
			t.Errorf("%s: paradigm %v flagged %v relative overhead %g; want a paradigm region above the threshold, not flagged",
				name, r.Paradigm, r.Flagged, r.RelTotal)
		}
		if s.Filterable(name) {
			t.Errorf("%s is filterable", name)
		}
	}
	if r := regionScore(t, s, "helper"); r.Paradigm || !s.Filterable("helper") {
		t.Errorf("helper: paradigm %v, filterable %v", r.Paradigm, s.Filterable("helper"))
	}
	var ff bytes.Buffer
	if err := render.ScoreFilter(&ff, s); err != nil {
		t.Fatal(err)
	}
	flt, err := filter.Parse("generated", bytes.NewReader(ff.Bytes()))
	if err != nil {
		t.Fatalf("generated filter file does not parse: %v\n%s", err, ff.String())
	}
	for _, r := range s.Regions {
		if flt.Excluded(r.Name, "") != (r.Name == "helper") {
			t.Errorf("filter file excludes %s: %v\n%s", r.Name, flt.Excluded(r.Name, ""), ff.String())
		}
	}
}

// A throttled region's visits are all of them, as summary counts them: the
// ones after the throttle were counted, not timed. The relative overhead is
// that of the timed visits.
func TestScoreCountsThrottledVisits(t *testing.T) {
	timed := tracetest.HotHelper(t, measure.Config{NoThrottle: true})
	f := tracetest.HotHelper(t, measure.Config{ThrottleCalls: 500, ThrottleTime: time.Hour})
	// Both scored with one probe cost below the helper's 30 ns, which
	// Start measured in each run.
	g, h := *f, *timed
	g.Header.ProbeCost, h.Header.ProbeCost = 5, 5
	all, err := Compute([]*tracefile.File{&h}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compute([]*tracefile.File{&g}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Throttled) != 1 || s.Throttled[0].Name != "helper" {
		t.Fatalf("throttled %+v; want helper", s.Throttled)
	}
	const visits = 2 * 20 * 1000 // two locations, 20 iterations of 1000 calls
	r, want := regionScore(t, s, "helper"), regionScore(t, all, "helper")
	if r.Visits != visits || want.Visits != visits {
		t.Errorf("helper: %d visits throttled, %d unthrottled; want %d", r.Visits, want.Visits, visits)
	}
	if r.VisitsAfter != s.Throttled[0].VisitsAfter || r.VisitsAfter != visits-s.Throttled[0].Visits || r.VisitsAfter == 0 {
		t.Errorf("helper: %d visits after the throttle; the throttle says %d timed, %d after", r.VisitsAfter, s.Throttled[0].Visits, s.Throttled[0].VisitsAfter)
	}
	// The timed visits at the probe cost, the rest at the throttled
	// probe's; a run measuring every visit would cost the full figure.
	timedVisits := float64(r.Visits - r.VisitsAfter)
	wantOverhead := 2*timedVisits*s.ProbeCost + 2*float64(r.VisitsAfter)*ThrottledProbeCost
	if !near(r.Overhead, wantOverhead) || !near(r.Untimed, 2*float64(r.VisitsAfter)*ThrottledProbeCost) || !near(r.FullOverhead, 2*visits*s.ProbeCost) {
		t.Errorf("helper: overhead %g (untimed %g, full %g), want %g (untimed %g, full %g)", r.Overhead, r.Untimed, r.FullOverhead,
			wantOverhead, 2*float64(r.VisitsAfter)*ThrottledProbeCost, 2*visits*s.ProbeCost)
	}
	if s.ThrottledVisits != r.VisitsAfter || !near(s.Untimed, r.Untimed) || r.Overhead >= r.FullOverhead/2 {
		t.Errorf("score: %d throttled visits, untimed %g; want %d, %g, and the overhead %g well below the full %g",
			s.ThrottledVisits, s.Untimed, r.VisitsAfter, r.Untimed, r.Overhead, r.FullOverhead)
	}
	var out bytes.Buffer
	if err := render.ScoreText(&out, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "visits counted after a throttle, at 1.0 ns per event") {
		t.Errorf("score does not say how it estimated the throttled visits:\n%s", out.String())
	}
	if !near(r.Share, want.Share) || r.FullBytes < want.FullBytes/2 {
		t.Errorf("helper: share %g full bytes %g; unthrottled %g, %g", r.Share, r.FullBytes, want.Share, want.FullBytes)
	}
	// The helper's calls all last 30 ns, so the timed ones give the same
	// pure time per visit as all of them.
	if !near(r.Pure, want.Pure) || !near(r.RelTotal, want.RelTotal) || !r.Flagged {
		t.Errorf("helper: pure %g relative overhead %g flagged %v; unthrottled %g, %g", r.Pure, r.RelTotal, r.Flagged, want.Pure, want.RelTotal)
	}
}
