package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// streamed runs the report's one pass over files and returns its
// variation and dynamics, as the sections get them.
func streamed(t *testing.T, files []*tracefile.File, opt Options) (*variation.Variation, error, *trend.Result, error) {
	t.Helper()
	r := testRun(t, files)
	r.procs = 3 // the report's own grouping and merging, on workers
	plans := planAnalyses(r, opt)
	if _, err := readAll(r, planTimeline(r, DefaultMaxIntervals, DefaultMaxCells), plans.segmentPlans()); err != nil {
		t.Fatal(err)
	}
	var v *variation.Variation
	verr := plans.variation.err
	if verr == nil {
		v, verr = plans.variation.set.variation(plans.variation.plan, files)
	}
	tr, terr := dynamicsOf(r, opt, plans.trend)
	return v, verr, tr, terr
}

// corpus is the traces the streamed analyses are checked on: recorded
// runs with depth and keep-last reductions and a duration filter, several
// files, MPI and OpenMP-like synchronization, and the golden traces of
// cmd/hmbtrace.
func corpus(t *testing.T) map[string][]*tracefile.File {
	golden := filepath.Join("..", "cmd", "hmbtrace", "testdata", "golden", "traces")
	c := map[string][]*tracefile.File{
		"fixtures":   fixtures(t),
		"weber":      {tracetest.WeberFigure2(t)},
		"hot helper": {tracetest.HotHelper(t, measure.Config{})},
		"heat":       open(t, filepath.Join(golden, "heat", "heat.0.hmb")),
		"c-jacobi":   open(t, filepath.Join(golden, "c", "c-jacobi.0.hmb")),
		"mpi-jacobi": open(t, filepath.Join(golden, "mpi", "mpi-jacobi.0.hmb"), filepath.Join(golden, "mpi", "mpi-jacobi.1.hmb")),
		"omp": {tracetest.RecordCalls(t, measure.Config{}, 1000, map[string][]tracetest.Call{
			"thread 0": {tracetest.C("main", 0, 40,
				tracetest.C("step", 0, 10, tracetest.C("calc", 0, 6), tracetest.C("!$omp implicit barrier @a.c:5", 6, 10,
					tracetest.C("!$omp task @a.c:7", 7, 9, tracetest.C("!$omp taskwait @a.c:11", 8, 9)))),
				tracetest.C("step", 10, 18, tracetest.C("calc", 10, 12), tracetest.C("wait here", 12, 18)),
				tracetest.C("step", 18, 29, tracetest.C("calc", 18, 20)))},
			"thread 1": {tracetest.C("main", 0, 40,
				tracetest.C("step", 0, 10, tracetest.C("calc", 0, 9), tracetest.C("!$omp implicit barrier @a.c:5", 9, 10)),
				tracetest.C("step", 10, 18, tracetest.C("calc", 10, 16), tracetest.C("omp_set_lock", 16, 18)),
				tracetest.C("step", 18, 29, tracetest.C("calc", 18, 27)))},
		}, "thread 0", "thread 1")},
	}
	// An MPI+OpenMP run cut at its master threads' collective: the
	// threads of a rank, read in parallel, take their master's calls.
	hybrid := tracetest.ShapeRun{Shape: tracetest.ShapeHybrid, Ranks: 2, Threads: 3, Iterations: 20, Load: 1, Seed: 2, Slow: [2]int{4, 11}}
	locs, order := hybrid.Calls()
	for r := 0; r < hybrid.Ranks; r++ {
		c["hybrid"] = append(c["hybrid"], tracetest.RecordCalls(t, measure.Config{Rank: r}, tracetest.WeberUnit, locs, order[3*r:3*r+3]...))
	}
	return c
}

// Up to the segment budget, the report's one pass gives exactly what
// variation.Analyze and trend.Analyze give: the same segments, scores,
// notes and errors, the same findings.
func TestStreamedAnalysesMatchPackages(t *testing.T) {
	extra, err := filter.ParsePatternList("wait here, halo wait")
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range corpus(t) {
		for _, opt := range []Options{{}, {Variation: variation.Options{Sync: extra}}, {Variation: variation.Options{Region: "calc"}, Dynamics: trend.Options{Region: "calc"}},
			{Variation: variation.Options{Region: "no such region"}}} {
			t.Run(fmt.Sprintf("%s/%s/%s", name, opt.Variation.Region, opt.Variation.Sync), func(t *testing.T) {
				v, verr, tr, terr := streamed(t, files, opt)
				want, werr := variation.Analyze(files, opt.Variation)
				if fmt.Sprint(verr) != fmt.Sprint(werr) || reflect.TypeOf(verr) != reflect.TypeOf(werr) {
					t.Fatalf("variation error %v, want %v", verr, werr)
				}
				if werr == nil && !reflect.DeepEqual(v, want) {
					t.Errorf("variation differs:\n got %+v\nwant %+v", v, want)
				}
				wantTr, wterr := trend.Analyze(files, opt.Dynamics)
				if fmt.Sprint(terr) != fmt.Sprint(wterr) {
					t.Fatalf("dynamics error %v, want %v", terr, wterr)
				}
				if wterr != nil {
					return
				}
				for _, c := range []struct {
					what      string
					got, want any
				}{
					{"source", tr.Source, wantTr.Source}, {"series", tr.Series, wantTr.Series}, {"analyses", tr.Analyses, wantTr.Analyses},
					{"findings", tr.Findings, wantTr.Findings}, {"relevant", tr.Relevant, wantTr.Relevant}, {"quiet", tr.Quiet, wantTr.Quiet},
					{"notes", tr.Notes, wantTr.Notes}, {"min share", tr.MinShare, wantTr.MinShare},
				} {
					if !reflect.DeepEqual(c.got, c.want) {
						t.Errorf("dynamics %s differ:\n got %+v\nwant %+v", c.what, c.got, c.want)
					}
				}
			})
		}
	}
}

// A location's segments are summed into groups of width consecutive ones,
// every group but the last full, the width doubling when the groups would
// exceed their bound; the sums are those of all segments.
func TestSegmentGroups(t *testing.T) {
	for _, c := range []struct{ n, limit int }{{0, 4}, {1, 4}, {4, 4}, {5, 4}, {17, 4}, {1000, 7}, {4096, 256}, {100_003, 256}} {
		s := &segmentScan{width: 1, limit: c.limit}
		var dur, sync int64
		for k := range c.n {
			d, y := int64(100+k%13), int64(k%5)
			// Indices may skip invocations (truncated ones).
			s.add(variation.Segment{Index: k + k/3, Start: int64(1000 * k), Duration: d, Sync: y, SOS: d - y})
			dur += d
			sync += y
		}
		if len(s.groups) > c.limit {
			t.Errorf("%d segments, limit %d: %d groups", c.n, c.limit, len(s.groups))
		}
		var gd, gs int64
		n := 0
		for i, g := range s.groups {
			if i < len(s.groups)-1 && g.n != s.width || g.n < 1 || g.n > s.width {
				t.Errorf("%d segments, limit %d: group %d of %d holds %d, width %d", c.n, c.limit, i, len(s.groups), g.n, s.width)
			}
			first := i * s.width
			if g.index != first+first/3 || g.start != int64(1000*first) {
				t.Errorf("group %d starts at index %d, time %d; want %d, %d", i, g.index, g.start, first+first/3, 1000*first)
			}
			last := first + g.n - 1
			if g.end != int64(1000*last)+int64(100+last%13) {
				t.Errorf("group %d ends at %d", i, g.end)
			}
			gd += g.dur
			gs += g.sync
			n += g.n
		}
		if n != c.n || gd != dur || gs != sync || s.n != c.n {
			t.Errorf("%d segments, limit %d: groups hold %d, %d ns, %d ns sync; want %d ns, %d ns", c.n, c.limit, n, gd, gs, dur, sync)
		}
		if c.n > 0 && len(s.groups) <= c.limit/2 && s.width > 1 {
			t.Errorf("%d segments, limit %d: only %d groups of width %d", c.n, c.limit, len(s.groups), s.width)
		}
	}
}

// manySegments records a run of 4 locations with n iterations each of a
// short step that calls a kernel; iterations [slowFrom, slowTo) of worker
// 1 take three times as long.
func manySegments(t testing.TB, n, slowFrom, slowTo int) *tracefile.File {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "many", BufferSize: 256 << 20, Clock: "monotonic", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	step, kernel, main := m.Region("step"), m.Region("kernel"), m.Region("main")
	t0 := m.Now()
	last := t0
	for w := range 4 {
		l := m.Location(fmt.Sprintf("worker %d", w))
		at := t0
		l.EnterAt(main, at)
		for i := range n {
			d := uint64(200 + (i*7+w)%40)
			if w == 1 && i >= slowFrom && i < slowTo {
				d *= 3
			}
			l.EnterAt(step, at+10)
			l.EnterAt(kernel, at+20)
			l.LeaveAt(kernel, at+20+d)
			l.LeaveAt(step, at+30+d)
			at += 40 + d
		}
		l.LeaveAt(main, at+10)
		last = max(last, at+10)
	}
	for m.Now() <= last {
		time.Sleep(time.Duration(last-m.Now()) + time.Millisecond)
	}
	return tracetest.Finish(t, m)
}

// Beyond the budget the heat map's segments are groups, the page says so,
// and the dynamics still find the slow stretch, in iterations.
func TestGroupedSegments(t *testing.T) {
	if testing.Short() {
		t.Skip("records 4·10⁵ events")
	}
	const n = 25_000 // > 2^16/4 per location: groups of 2
	f := manySegments(t, n, 10_000, 14_000)
	files := []*tracefile.File{f}
	v, err, tr, terr := streamed(t, files, Options{})
	if err != nil || terr != nil {
		t.Fatal(err, terr)
	}
	if len(v.Segments) > segmentBudget || len(v.Segments) < segmentBudget/2 {
		t.Errorf("%d segments in the heat map, budget %d", len(v.Segments), segmentBudget)
	}
	var slow *trend.Finding
	for i, fd := range tr.Findings {
		if fd.Series.Location == "worker 1" && fd.Series.Metric == "time per iteration" && fd.Severity > 0 {
			slow = &tr.Findings[i]
			break
		}
	}
	if slow == nil {
		t.Fatalf("no finding on worker 1: %+v", tr.Findings)
	}
	if slow.Series.Width < 2 || slow.Series.Iterations != n {
		t.Errorf("series of %d values of width %d, %d iterations; want %d iterations in groups", len(slow.Series.Values), slow.Series.Width, slow.Series.Iterations, n)
	}
	if slow.From < 9_990 || slow.From > 10_010 || slow.To < 13_990 || slow.To > 14_010 {
		t.Errorf("slow stretch found over iterations %d–%d, want 10000–13999", slow.From, slow.To)
	}
	page := writePage(t, files, Options{Now: time.Unix(0, 0)})
	if !bytes.Contains(page, []byte("invocations are grouped into segments of up to 2 consecutive ones")) {
		t.Error("the page does not say that segments are grouped")
	}
}

// The page is the same whatever the number of workers.
func TestParallelSameAsSequential(t *testing.T) {
	files := fixtures(t)
	files = append(files, open(t, filepath.Join("..", "cmd", "hmbtrace", "testdata", "golden", "traces", "heat", "heat.0.hmb"))...)
	opt := Options{Now: time.Unix(0, 0), Procs: 1}
	one := writePage(t, files, opt)
	for _, procs := range []int{2, 5} {
		opt.Procs = procs
		if many := writePage(t, files, opt); !bytes.Equal(one, many) {
			t.Errorf("%d workers: the page differs from the sequential one", procs)
		}
	}
}

// peakHeap returns the most heap in use while work runs, sampled every
// millisecond, over what was in use before.
func peakHeap(work func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := base
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	work()
	runtime.ReadMemStats(&ms)
	close(done)
	<-stopped
	peak = max(peak, ms.HeapAlloc)
	return peak - min(base, peak)
}

// The report of a trace of 10⁶ events in 250,000 segments stays within a
// heap bound that holding every segment (variation.Analyze keeps 64 bytes
// per segment, and copies them to rank them; trend keeps series of them)
// exceeds: the page's memory is bounded by the timeline's budget and the
// segment groups, not by the events.
func TestReportHeapBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("records 10⁶ events")
	}
	files := []*tracefile.File{manySegments(t, 62_500, 30_000, 35_000)}
	var err error
	peak := peakHeap(func() { err = Write(&byteCounter{}, files, Options{}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak heap %.1f MB over the base for %d events", float64(peak)/1e6, 4*(2+4*62_500))
	const bound = 40e6
	if peak > bound {
		t.Errorf("peak heap %.1f MB, more than %.0f MB", float64(peak)/1e6, bound/1e6)
	}
}

// Region ids a file does not define get placeholder names in the order a
// sequential read meets them, however many workers read the locations.
func TestUndefinedRegionsInOrder(t *testing.T) {
	b := tracetest.NewBuilder("undefined", "", 0, time.Unix(1700000000, 0), "main", "work")
	b.Trace.Header.EndTicks = 100000
	for i, ids := range [][]uint32{{2, 2}, {2, 7}, {9, 2}} {
		l := b.Location(fmt.Sprintf("worker %d", i))
		l.Enter(1000, 1)
		for k, id := range ids {
			l.Enter(uint64(2000+10000*k), id)
			l.Leave(uint64(9000 + 10000*k))
		}
		l.Leave(90000)
	}
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	opt := Options{Now: time.Unix(0, 0), Procs: 1}
	one := writePage(t, files, opt)
	d, _ := parsePage(t, one)
	want := []string{"main", "work", files[0].RegionName(7), files[0].RegionName(9)}
	if !reflect.DeepEqual(d.Regions, want) {
		t.Errorf("regions %q, want %q", d.Regions, want)
	}
	opt.Procs = 3
	if many := writePage(t, files, opt); !bytes.Equal(one, many) {
		t.Error("3 workers: the page differs from the sequential one")
	}
}

// A malformed HMB_TOOL_PROCS is an error that names it, not a silent
// default; -procs (Options.Procs) takes precedence over it.
func TestProcsFromEnvironment(t *testing.T) {
	files := fixtures(t)
	t.Setenv(parallel.Env, "many")
	err := Write(&byteCounter{}, files, Options{Now: time.Unix(0, 0)})
	if err == nil || !strings.Contains(err.Error(), parallel.Env) {
		t.Errorf("HMB_TOOL_PROCS=many: error %v, want one naming %s", err, parallel.Env)
	}
	if err := Write(&byteCounter{}, files, Options{Now: time.Unix(0, 0), Procs: 2}); err != nil {
		t.Errorf("Procs 2 with HMB_TOOL_PROCS=many: %v", err)
	}
	if err := Write(&byteCounter{}, files, Options{Now: time.Unix(0, 0), Procs: -1}); err == nil {
		t.Error("Procs -1: no error")
	}
}
