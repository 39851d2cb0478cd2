//go:build linux

package measure

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/hwcounter"
	"github.com/hmbtrace/hmbtrace/tracefile"
	"golang.org/x/sys/unix"
)

// TestCounterRoundTrip checks that the values the probes read come back
// exactly from the file, in the metric records after their enters and
// leaves, and in the profile's inclusive and exclusive sums.
func TestCounterRoundTrip(t *testing.T) {
	withReplay(t,
		[]uint64{100, 1000}, // enter outer
		[]uint64{130, 1300}, // enter inner
		[]uint64{170, 1900}, // leave inner
		[]uint64{200, 2500}, // leave outer
	)
	m := startTest(t, Config{Metrics: []string{"task-clock", "page-faults"}})
	outer, inner := m.Region("outer"), m.Region("inner")
	loc := m.Location("main")
	loc.Enter(outer)
	loc.Enter(inner)
	loc.Leave(inner)
	loc.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	if got := strings.Join(f.Header.Metrics, ","); got != "task-clock,page-faults" {
		t.Fatalf("metrics %q", got)
	}
	var lines []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		s := fmt.Sprintf("%v %s %d", e.Kind, f.RegionName(e.Region), e.Depth)
		if e.Kind == encode.KindMetric {
			s += fmt.Sprint(" ", e.Values)
		}
		lines = append(lines, s)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	want := []string{
		"ENTER outer 1", "METRIC outer 1 [100 1000]",
		"ENTER inner 2", "METRIC inner 2 [130 1300]",
		"LEAVE inner 2", "METRIC inner 2 [170 1900]",
		"LEAVE outer 1", "METRIC outer 1 [200 2500]",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	l := f.Location(0)
	checkCounts(t, l)
	sums := map[string][2][]uint64{}
	for _, p := range l.Profile {
		sums[f.RegionName(p.Region)] = [2][]uint64{p.CounterInclusive, p.CounterExclusive}
	}
	if got := fmt.Sprint(sums["outer"]); got != "[[100 1500] [60 900]]" {
		t.Errorf("outer inclusive, exclusive: %s", got)
	}
	if got := fmt.Sprint(sums["inner"]); got != "[[40 600] [40 600]]" {
		t.Errorf("inner inclusive, exclusive: %s", got)
	}
}

// Regions outside HMB_METRICS_REGIONS and below HMB_METRICS_DEPTH read no
// counters; the counts of counting regions inside them reach the nearest
// counting ancestor.
func TestCounterSelection(t *testing.T) {
	withReplay(t, []uint64{0}, []uint64{10}, []uint64{25}, []uint64{100})
	m := startTest(t, Config{Metrics: []string{"page-faults"}, MetricsRegions: "solve*", MetricsDepth: 3})
	solve, io, solveDeep := m.Region("solve"), m.Region("io"), m.Region("solve inner")
	loc := m.Location("main")
	loc.Enter(solve)     // reads: 0
	loc.Enter(io)        // not selected
	loc.Enter(solveDeep) // depth 3: reads 10
	loc.Enter(solveDeep) // depth 4: too deep
	loc.Leave(solveDeep)
	loc.Leave(solveDeep) // reads 25
	loc.Leave(io)
	loc.Leave(solve) // reads 100
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f := openTrace(t, m)
	l := f.Location(0)
	checkCounts(t, l)
	for _, p := range l.Profile {
		name := f.RegionName(p.Region)
		got := fmt.Sprint(p.CounterInclusive, p.CounterExclusive)
		want := map[string]string{"solve": "[100] [85]", "io": "[] []", "solve inner": "[15] [15]"}[name]
		if got != want {
			t.Errorf("%s: counters %s, want %s", name, got, want)
		}
	}
}

// The class policy sheds the metric class before anything else.
func TestClassPolicyShedsMetricsFirst(t *testing.T) {
	old := openCounters
	t.Cleanup(func() { openCounters = old })
	openCounters = func(events []hwcounter.Event) (hwcounter.Source, error) { return &countingSource{events: events}, nil }
	m := startTest(t, Config{Metrics: []string{"page-faults", "task-clock", "minor-faults"}, Reduction: ReduceClass, BufferSize: 64 * 512, BinSize: 512})
	a, b := m.Region("a"), m.Region("b")
	loc := m.Location("main")
	for i := 0; i < 20000; i++ {
		loc.Enter(a)
		loc.Enter(b)
		loc.Leave(b)
		loc.Leave(a)
	}
	m.Close()
	f := openTrace(t, m)
	if len(f.Reductions) == 0 || f.Reductions[0].Reason != tracefile.ByClass || f.Reductions[0].Class != tracefile.ClassMetric {
		t.Fatalf("reductions %+v: want the metric class closed first", f.Reductions)
	}
	checkCounts(t, f.Location(0))
	evs, _ := readBack(t, f, 0)
	for _, e := range evs {
		if e.kind == encode.KindMetric {
			t.Fatal("a metric record survived the closing of its class")
		}
	}
}

// countingSource is a Source whose counts grow by one per read.
type countingSource struct {
	events []hwcounter.Event
	n      uint64
}

func (c *countingSource) Events() []hwcounter.Event { return c.events }
func (c *countingSource) Read(dst []uint64) (hwcounter.Scaling, error) {
	c.n++
	for i := range c.events {
		dst[i] = c.n * uint64(i+1)
	}
	return hwcounter.Scaling{Enabled: c.n, Running: c.n}, nil
}

// recordOnThread runs f on a goroutine of its own, as a location with
// counters expects, and returns the trace.
func recordOnThread(t *testing.T, cfg Config, f func(m *Measurement, loc *Location)) *tracefile.File {
	t.Helper()
	m := startTest(t, cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		loc := m.Location("main")
		f(m, loc)
	}()
	<-done
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return openTrace(t, m)
}

func counters(t *testing.T, f *tracefile.File, region string) map[string]uint64 {
	t.Helper()
	for _, p := range f.Location(0).Profile {
		if f.RegionName(p.Region) == region {
			out := map[string]uint64{}
			for i, name := range f.Header.Metrics {
				if i < len(p.CounterInclusive) {
					out[name] = p.CounterInclusive[i]
				}
			}
			return out
		}
	}
	t.Fatalf("no region %q in the profile", region)
	return nil
}

func TestSoftwareCountersArePlausible(t *testing.T) {
	const pages = 300
	var cpu time.Duration
	f := recordOnThread(t, Config{Metrics: []string{"page-faults", "task-clock", "context-switches"}}, func(m *Measurement, loc *Location) {
		touch, busy, sleep := m.Region("touch"), m.Region("busy"), m.Region("sleep")
		mem, err := unix.Mmap(-1, 0, pages*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Error(err)
			return
		}
		defer unix.Munmap(mem)
		loc.Enter(touch)
		for p := 0; p < pages; p++ {
			mem[p*4096] = 1
		}
		loc.Leave(touch)

		c0 := threadCPU()
		loc.Enter(busy)
		for x, deadline := 0, time.Now().Add(30*time.Millisecond); time.Now().Before(deadline); x++ {
		}
		loc.Leave(busy)
		cpu = threadCPU() - c0

		loc.Enter(sleep)
		time.Sleep(10 * time.Millisecond)
		loc.Leave(sleep)
	})
	if len(f.Header.MetricsMissing) > 0 {
		t.Fatalf("software events missing: %v", f.Header.MetricsMissing)
	}
	if pf := counters(t, f, "touch")["page-faults"]; pf < pages || pf > pages+pages/2 {
		t.Errorf("touching %d fresh pages counted %d page faults", pages, pf)
	}
	tc := time.Duration(counters(t, f, "busy")["task-clock"])
	if tc < cpu*7/10 || tc > cpu*13/10+time.Millisecond {
		t.Errorf("busy region: task-clock %v, the thread's CPU time %v", tc, cpu)
	}
	if cs := counters(t, f, "sleep")["context-switches"]; cs < 1 {
		t.Errorf("a region that sleeps shows %d context switches", cs)
	}
}

// On a machine without a PMU, hardware events are recorded without and
// said so; with HMB_METRICS_STRICT they are an error at Start. Where a PMU
// exists, the values are checked instead.
func TestHardwareCounters(t *testing.T) {
	pmu, err := hwcounter.HasHardwarePMU()
	if err != nil {
		t.Skipf("perf events are not permitted here: %v", err)
	}
	cfg := Config{Metrics: []string{"cycles", "instructions", "page-faults"}}
	if !pmu {
		t.Log("no hardware PMU: checking the error path")
		f := recordOnThread(t, cfg, func(m *Measurement, loc *Location) {
			r := m.Region("r")
			loc.Enter(r)
			loc.Leave(r)
		})
		if got := strings.Join(f.Header.Metrics, ","); got != "page-faults" {
			t.Errorf("recorded metrics %q, want page-faults only", got)
		}
		if missing := strings.Join(f.Header.MetricsMissing, "\n"); !strings.Contains(missing, "cycles") || !strings.Contains(missing, "no hardware PMU") {
			t.Errorf("missing metrics %q do not name cycles and the reason", missing)
		}
		cfg.MetricsStrict = true
		cfg.Output = t.TempDir()
		_, err := Start(cfg)
		if err == nil || !strings.Contains(err.Error(), "cycles") || !strings.Contains(err.Error(), "HMB_METRICS_STRICT") {
			t.Errorf("strict Start: %v, want an error naming cycles", err)
		}
		return
	}
	t.Log("hardware PMU present: checking values")
	f := recordOnThread(t, cfg, func(m *Measurement, loc *Location) {
		r := m.Region("loop")
		loc.Enter(r)
		x := 0
		for i := 0; i < 10_000_000; i++ {
			x += i
		}
		runtime.KeepAlive(x)
		loc.Leave(r)
	})
	c := counters(t, f, "loop")
	if c["instructions"] < 10_000_000 || c["cycles"] == 0 {
		t.Errorf("a loop of 1e7 iterations counted %v", c)
	}
	t.Logf("read path %s", f.Header.MetricsPath)
}

func TestCounterConfigErrors(t *testing.T) {
	for _, c := range []struct {
		env, value, want string
	}{
		{"HMB_METRICS", "cycles,bogus", `HMB_METRICS="cycles,bogus"`},
		{"HMB_METRICS", "cs,context-switches", `HMB_METRICS="cs,context-switches"`},
		{"HMB_METRICS_REGIONS", "solve[", `HMB_METRICS_REGIONS="solve["`},
		{"HMB_METRICS_DEPTH", "-1", `HMB_METRICS_DEPTH="-1"`},
		{"HMB_METRICS_STRICT", "perhaps", `HMB_METRICS_STRICT="perhaps"`},
	} {
		lookup, environ := envFrom(map[string]string{c.env: c.value})
		_, err := configFromLookup(lookup, environ, &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v", c.env, c.value, err)
		}
	}
}

func TestCounterProbesAllocateNothing(t *testing.T) {
	m := startTest(t, Config{Metrics: []string{"task-clock", "page-faults"}})
	done := make(chan float64)
	go func() {
		loc := m.Location("main")
		r := m.Region("r")
		loc.Enter(r)
		loc.Leave(r)
		done <- testing.AllocsPerRun(1000, func() {
			loc.Enter(r)
			loc.Leave(r)
		})
	}()
	if allocs := <-done; allocs != 0 {
		t.Errorf("probes with counters allocate %v times per run", allocs)
	}
	m.Close()
}

// BenchmarkEnterLeaveCounters measures probes that read 1 and 3 counters
// on the path this machine offers (software events: read()).
func BenchmarkEnterLeaveCounters(b *testing.B) {
	for _, set := range [][]string{{"task-clock"}, {"task-clock", "page-faults", "minor-faults"}} {
		b.Run(fmt.Sprintf("%d", len(set)), func(b *testing.B) {
			m := startTest(b, Config{Metrics: set, BufferSize: 256 << 20})
			done := make(chan struct{})
			go func() {
				defer close(done)
				loc := m.Location("bench")
				r := m.Region("bench")
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					loc.Enter(r)
					loc.Leave(r)
				}
				b.StopTimer()
			}()
			<-done
			m.Close()
			if b.N > 1 {
				b.Logf("counters read with %s", m.metricsPath)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/event")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// A location used from another thread than the one that made it reads no
// counters, and says why.
func TestCountersOnTheWrongThread(t *testing.T) {
	m := startTest(t, Config{Metrics: []string{"page-faults"}})
	locs := make(chan *Location)
	hold := make(chan struct{})
	go func() {
		locs <- m.Location("made elsewhere") // locks this goroutine's thread
		<-hold
	}()
	loc := <-locs
	r := m.Region("r")
	loc.Enter(r)
	loc.Leave(r)
	close(hold)
	m.Close()
	f := openTrace(t, m)
	l := f.Location(0)
	if !strings.Contains(l.CountersMissing, "another OS thread") {
		t.Errorf("counters missing: %q", l.CountersMissing)
	}
	checkCounts(t, l)
}
