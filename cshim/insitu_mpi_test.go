package cshim_test

// The run-wide analyses the ranks of an MPI run compute in-situ at its
// collective end, each from its own events still in memory (issue 35),
// against the post-mortem tools on the same run's events.

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// inSituResult returns the results section of kind of the archive at path.
func inSituResult(t *testing.T, path string, kind byte) []byte {
	t.Helper()
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, ok, err := a.Result(kind)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("%s: no results section of kind %d", path, kind)
	}
	return b
}

// near reports whether two durations in ns agree as the in-situ and the
// post-mortem ones can: each event's time is rounded to the ns on its own
// (a SOS-time sums a few of them: seen 3 ns apart), and the post-mortem
// times are on the reference clock, corrected between the rank's two
// clock-sync points, whose first offset MPI_Init took at the rate Start
// calibrated in a millisecond: on one node that correction, 10^-4 at
// most, is the rate's error, not drift (seen: 9.4e-5 on one rank). The
// collective end no longer adds a second such error (freezeRate).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Abs(b)+10 }

// nearTime reports whether two points in time agree as the in-situ and the
// post-mortem ones can: they share their rate but not quite their origin
// (seen: 188 ns apart, the same for every point of a run).
func nearTime(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Abs(b)+10 }

// TestMPIInSitu: 8 ranks of halo.c. The exact communication matrix the
// ranks reduced is the one comm makes of their events (identical output);
// the variation analysis they ran on their own events chose the region the
// post-mortem one chooses, cut the same segments on the same locations,
// and measured them alike (times within near; scores, which divide by the
// MAD of all SOS-times, within 2 %); the dynamics series, of the phase
// series (HMB_PHASE) and of the segments, are those of the post-mortem
// analysis (values within near). Passed-over regions may differ by the calls still
// open at the collective end (MPI_Finalize), whose time in-situ is 0.
func TestMPIInSitu(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	const np = 8
	out := filepath.Join(t.TempDir(), "out")
	// 300 iterations: enough segments to compare the two paths on. The
	// ranks of a loaded machine leave MPI_Init up to a second apart, which
	// the first exchange waits out; the fallback's loop rule does not
	// count that wait as run time.
	mpirun(t, np, out, []string{"HMB_PHASE=MPI_Allreduce"}, prog, "300")
	files := rankFiles(t, out, "halo", np)
	path := filepath.Join(out, "halo.hmbrun")

	if a, b := hmbtraceRun(t, "comm", "-insitu", "-tsv", out), hmbtraceRun(t, "comm", "-tsv", out); a != b || a == "" {
		t.Errorf("comm -insitu -tsv\n%s\ncomm -tsv of the events\n%s", a, b)
	}
	if a, b := hmbtraceRun(t, "comm", "-insitu", out), hmbtraceRun(t, "comm", out); a != b {
		t.Errorf("comm -insitu\n%s\ncomm of the events\n%s", a, b)
	}

	var in variation.InSitu
	if err := variation.Decode(inSituResult(t, path, tracefile.ResultVariation), &in); err != nil {
		t.Fatal(err)
	}
	post, err := variation.Analyze(files, variation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := in.Variation
	if v == nil {
		t.Fatalf("no in-situ variation: %s", in.Error)
	}
	if v.Region != post.Region || v.Between != post.Between || len(v.Rows) != len(post.Rows) || len(v.Segments) != len(post.Segments) {
		t.Fatalf("in-situ: %q (between %v), %d rows, %d segments; post-mortem %q (%v), %d, %d",
			v.Region, v.Between, len(v.Rows), len(v.Segments), post.Region, post.Between, len(post.Rows), len(post.Segments))
	}
	if len(v.Segments) < np*250 {
		t.Errorf("%d segments, want about %d", len(v.Segments), np*299)
	}
	for i, r := range v.Rows {
		q := post.Rows[i]
		if r.Label != q.Label || r.File != q.File || r.Segments != q.Segments || r.Invocations != q.Invocations || r.SyncCalls != q.SyncCalls || !near(r.Median, q.Median) {
			t.Errorf("row %d: in-situ %+v, post-mortem %+v", i, r, q)
		}
	}
	bad := 0
	for i, s := range v.Segments {
		q := post.Segments[i]
		same := s.Row == q.Row && s.Index == q.Index && nearTime(float64(s.Start), float64(q.Start)) &&
			near(float64(s.Duration), float64(q.Duration)) && near(float64(s.SOS), float64(q.SOS)) &&
			math.Abs(s.Score-q.Score) <= 0.02*math.Abs(q.Score)+0.02
		if !same {
			if bad++; bad <= 5 {
				t.Errorf("segment %d: in-situ %+v, post-mortem %+v", i, s, q)
			}
		}
	}
	if !near(v.Median, post.Median) || math.Abs(v.MAD-post.MAD) > 0.01*post.MAD+2 {
		t.Errorf("in-situ median %v MAD %v, post-mortem %v %v", v.Median, v.MAD, post.Median, post.MAD)
	}

	// The dynamics: of the phase series (HMB_PHASE) each rank cut, and
	// of the iterations the segments are.
	phases, err := trend.DecodeInSitu(inSituResult(t, path, tracefile.ResultDynamics))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := trend.Analyze(files, trend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if phases.Source != pr.Source || pr.Source.Region != "MPI_Allreduce" {
		t.Errorf("in-situ phase series of %+v, post-mortem %+v", phases.Source, pr.Source)
	}
	_, segs := trend.SegmentSeries(v)
	_, postSegs := trend.SegmentSeries(post)
	for _, c := range []struct {
		what      string
		got, want []*trend.Series
	}{{"phase", phases.Series, pr.Series}, {"segment", segs, postSegs}} {
		if len(c.got) != len(c.want) || len(c.got) < np {
			t.Errorf("%d in-situ %s series, %d post-mortem", len(c.got), c.what, len(c.want))
			continue
		}
		for i, s := range c.got {
			q := c.want[i]
			ok := s.Region == q.Region && s.Location == q.Location && s.Metric == q.Metric && len(s.Values) == len(q.Values) && nearTime(s.Loop, q.Loop)
			for k := 0; ok && k < len(s.Values); k++ {
				ok = near(s.Values[k], q.Values[k])
			}
			if !ok {
				t.Errorf("%s series %d: in-situ %s %s %s %v; post-mortem %s %s %s %v", c.what, i, s.Region, s.Location, s.Metric, s.Values, q.Region, q.Location, q.Metric, q.Values)
			}
		}
	}
	if text := hmbtraceRun(t, "dynamics", "-insitu", out); !containsAll(text, `the phase series of "MPI_Allreduce"`, "series") {
		t.Errorf("dynamics -insitu:\n%s", text)
	}
	if text := hmbtraceRun(t, "variation", "-insitu", out); !containsAll(text, "Segments: ", v.Region) {
		t.Errorf("variation -insitu:\n%s", text)
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
