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

// near reports whether two durations or points in time, in ns, agree as
// the in-situ and the post-mortem ones do: each rank's trace in memory
// holds the rate, the clock-sync points and the start its file is written
// with, and both paths convert its ticks by the same functions, so they
// are equal (seen: 0 ns apart at most, times and durations). The bound
// leaves the last bit of a product and a few roundings to the ns, which
// a compiler that fuses a multiply-add (arm64) may move: 1e-9 + 4 ns.
// Before, the passes converted at a rate of their own, 10^-6 off the
// file's, and 10^-4 before the collective end fixed the run's rate.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b)+4 }

// nearScore reports whether two robust z-scores (SOS-time less the
// median, over the spread) agree as their terms do within near: the
// SOS-time and the median by 4 ns each, the spread (1.4826 MAD, a median
// of differences) by 1.5 x 8 ns.
func nearScore(a, b, spread float64) bool {
	if spread == 0 {
		return a == b // robustZ's 0
	}
	return math.Abs(a-b) <= (8+12*math.Abs(b))/spread+1e-9*math.Abs(b)
}

// TestMPIInSitu: 8 ranks of halo.c. The exact communication matrix the
// ranks reduced is the one comm makes of their events (identical output);
// the variation analysis they ran on their own events chose the region the
// post-mortem one chooses, cut the same segments on the same locations,
// and measured them alike (times within near, scores within nearScore);
// the dynamics series, of the phase
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
		same := s.Row == q.Row && s.Index == q.Index && near(float64(s.Start), float64(q.Start)) &&
			near(float64(s.Duration), float64(q.Duration)) && near(float64(s.SOS), float64(q.SOS)) &&
			nearScore(s.Score, q.Score, post.Spread)
		if !same {
			if bad++; bad <= 5 {
				t.Errorf("segment %d: in-situ %+v, post-mortem %+v", i, s, q)
			}
		}
	}
	if !near(v.Median, post.Median) || math.Abs(v.MAD-post.MAD) > 1e-9*post.MAD+8 {
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
			ok := s.Region == q.Region && s.Location == q.Location && s.Metric == q.Metric && len(s.Values) == len(q.Values) && near(s.Loop, q.Loop)
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
