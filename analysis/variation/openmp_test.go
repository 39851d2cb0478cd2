package variation_test

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ompSteps is an OpenMP team of two threads, named as the adapter
// (cshim/openmp) names its regions: two steps each, then two explicit
// barriers that take longer than the steps. Thread 0's first step waits in
// the implicit barrier, where it runs a task that itself waits in a
// taskwait; its second waits for a critical section and in a taskwait.
// Thread 1 waits in the implicit barrier and for a lock.
func ompSteps(t testing.TB) *tracefile.File {
	const (
		ib   = "!$omp implicit barrier @a.c:5"
		task = "!$omp task @a.c:7"
		tw   = "!$omp taskwait @a.c:11"
		bar  = "!$omp barrier @a.c:20"
	)
	return recordCalls(t, measure.Config{}, unit, map[string][]call{
		"thread 0": {c("main", 0, 40,
			c("step", 0, 10, c("calc", 0, 6), c(ib, 6, 10, c(task, 7, 9, c(tw, 8, 9)))),
			c("step", 10, 18, c("calc", 10, 12), c("!$omp critical wait @a.c:9", 12, 14), c(tw, 14, 18)),
			c(bar, 18, 29), c(bar, 29, 40))},
		"thread 1": {c("main", 0, 40,
			c("step", 0, 10, c("calc", 0, 9), c(ib, 9, 10)),
			c("step", 10, 18, c("calc", 10, 16), c("omp_set_lock", 16, 18)),
			c(bar, 18, 29), c(bar, 29, 40))},
	}, "thread 0", "thread 1")
}

// TestOpenMPSync checks that OpenMP barriers and waits are synchronization:
// the SOS-time subtracts them, less the task run inside a barrier (but not
// the taskwait inside that task), and the barrier, though it has the most
// inclusive time of the regions entered often enough, is not the
// time-dominant region.
func TestOpenMPSync(t *testing.T) {
	f := ompSteps(t)
	d, err := TimeDominant([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if d.Region.Name != "step" || len(d.Sync) != 1 || d.Sync[0].Name != "!$omp barrier @a.c:20" {
		t.Errorf("dominant %q, passed over as synchronization %+v; want step, the barrier", d.Region.Name, d.Sync)
	}
	v, err := Analyze([]*tracefile.File{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Region != "step" || len(v.Segments) != 4 {
		t.Fatalf("segment region %q with %d segments; want step with 4", v.Region, len(v.Segments))
	}
	wantSync := []int64{1 + 1 + 1, 2 + 4, 1, 2}
	for i, s := range v.Segments {
		if s.Sync != wantSync[i]*unit || s.SOS != s.Duration-s.Sync {
			t.Errorf("thread %d step %d: sync %d, SOS %d of %d; want sync %d", i/2, i%2, s.Sync, s.SOS, s.Duration, wantSync[i]*unit)
		}
	}
	want := []string{"!$omp barrier @a.c:20", "!$omp critical wait @a.c:9", "!$omp implicit barrier @a.c:5",
		"!$omp taskwait @a.c:11", "omp_set_lock"}
	if strings.Join(v.SyncRegions, "|") != strings.Join(want, "|") {
		t.Errorf("sync regions %q; want %q", v.SyncRegions, want)
	}
	// A region the user names as synchronization is not a candidate
	// either.
	step, err := filter.ParsePatternList("step")
	if err != nil {
		t.Fatal(err)
	}
	if w, err := Analyze([]*tracefile.File{f}, Options{Sync: step}); err != nil {
		t.Error(err)
	} else if w.Region != "calc" {
		t.Errorf("with -sync step: segment region %q, want calc", w.Region)
	}
	var out bytes.Buffer
	if err := render.VariationText(&out, v, 3, 10); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "passed over: !$omp barrier @a.c:20, 44") {
		t.Errorf("the report does not say the barrier was passed over:\n%s", out.String())
	}
}

// TestScoreKeepsSync checks that score never flags a synchronization
// region, nor any other OpenMP region (the task), however costly its
// probes, and marks it in the report.
func TestScoreKeepsSync(t *testing.T) {
	f := ompSteps(t)
	f.Header.ProbeCost = 1e5 // more than any region's time: all would be flagged
	s, err := score.Compute([]*tracefile.File{f}, score.Options{MinShare: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Regions {
		omp := strings.HasPrefix(r.Name, "!$omp")
		sync := omp && r.Name != "!$omp task @a.c:7" || r.Name == "omp_set_lock"
		if r.Sync != sync || r.Paradigm != omp || r.Flagged != (!sync && !omp) {
			t.Errorf("%s: sync %v, paradigm %v, flagged %v; want sync %v, paradigm %v, flagged %v", r.Name, r.Sync, r.Paradigm, r.Flagged, sync, omp, !sync && !omp)
		}
	}
	var out bytes.Buffer
	if err := render.ScoreText(&out, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "s: a synchronization region") {
		t.Errorf("the report does not explain the s mark:\n%s", out.String())
	}
}
