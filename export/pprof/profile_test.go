package pprof

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// record runs a small solver's call tree on two locations, recursion
// included, at explicit times of the monotonic clock kept at full
// resolution, and opens the trace.
func record(t testing.TB, cfg measure.Config, iterations int) *tracefile.File {
	t.Helper()
	cfg.Output, cfg.Name = t.TempDir(), "p"
	cfg.TimerShift, cfg.Clock = measure.NoTimerShift, "monotonic"
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	main, solve, step, rec := m.RegionAt("main", "main.go", 3), m.RegionAt("solve", "solve.go", 17), m.Region("step"), m.Region("recurse")
	t0 := m.Now()
	for w, name := range []string{"main", "worker"} {
		l := m.Location(name)
		now := t0 + uint64(w)*3
		tick := func(d uint64) uint64 { now += d; return now }
		l.EnterAt(main, tick(10))
		for i := 0; i < iterations; i++ {
			l.EnterAt(solve, tick(5))
			for k := 0; k < 3; k++ {
				l.EnterAt(step, tick(uint64(7+k+w)))
				l.LeaveAt(step, tick(uint64(11+k)))
			}
			l.EnterAt(rec, tick(2))
			l.EnterAt(rec, tick(3))
			l.EnterAt(step, tick(1))
			l.LeaveAt(step, tick(4))
			l.LeaveAt(rec, tick(5))
			l.LeaveAt(rec, tick(6))
			l.LeaveAt(solve, tick(13))
		}
		l.LeaveAt(main, tick(20))
	}
	return tracetest.Finish(t, m)
}

// flatProfile is what `hmbtrace summary` prints per region: the exact flat
// profile the probes kept, over all locations, in nanoseconds.
type flatRow struct{ visits, incl, excl int64 }

func flatProfile(files ...*tracefile.File) map[string]flatRow {
	rows := map[string]flatRow{}
	for _, f := range files {
		for _, l := range f.Locations {
			for _, p := range l.Profile {
				r := rows[f.RegionName(p.Region)]
				r.visits += int64(p.Visits)
				r.incl += f.TicksToNanos(p.Inclusive)
				r.excl += f.TicksToNanos(p.Exclusive)
				rows[f.RegionName(p.Region)] = r
			}
		}
	}
	return rows
}

// flatCum sums sample index i by function the way pprof does: flat by the
// innermost function, cum once per function on the path.
func flatCum(p *profile.Profile, i int) (flat, cum map[string]int64) {
	flat, cum = map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		flat[s.Location[0].Line[0].Function.Name] += s.Value[i]
		seen := map[string]bool{}
		for _, l := range s.Location {
			name := l.Line[0].Function.Name
			if !seen[name] {
				seen[name] = true
				cum[name] += s.Value[i]
			}
		}
	}
	return flat, cum
}

func TestMatchesFlatProfile(t *testing.T) {
	f := record(t, measure.Config{}, 50)
	p, err := Build([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	rows := flatProfile(f)
	calls, _ := flatCum(p, 0)
	excl, incl := flatCum(p, 1)
	if len(rows) != 4 {
		t.Fatalf("flat profile of %d regions: %v", len(rows), rows)
	}
	for name, r := range rows {
		if calls[name] != r.visits || excl[name] != r.excl || incl[name] != r.incl {
			t.Errorf("%s: calls %d, exclusive %d ns, inclusive %d ns; the flat profile has %d, %d, %d",
				name, calls[name], excl[name], incl[name], r.visits, r.excl, r.incl)
		}
	}
	for _, fn := range p.Function {
		if fn.Name == "solve" && (fn.Filename != "solve.go" || fn.StartLine != 17) {
			t.Errorf("solve at %s:%d, want solve.go:17", fn.Filename, fn.StartLine)
		}
	}
	if got := strings.Join(p.Comments, "\n"); strings.Contains(got, "removed") || strings.Contains(got, "timer shift") {
		t.Errorf("comments of an unreduced trace: %q", p.Comments)
	}
	// One sample per call path and location: main, main>solve,
	// main>solve>step, main>solve>recurse, ...>recurse>recurse,
	// ...>recurse>recurse>step.
	paths := map[string]bool{}
	for _, s := range p.Sample {
		paths[pathOf(s)] = true
	}
	if len(paths) != 6 || len(p.Sample) != 6*len(f.Locations) {
		t.Errorf("%d samples of %d call paths, want 6 call paths on each of %d locations", len(p.Sample), len(paths), len(f.Locations))
	}
}

// TestGoToolPprof reads the exported file with `go tool pprof -top`: the
// regions' flat times are the exclusive times of the flat profile, and
// -sample_index=calls gives their visits.
func TestGoToolPprof(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	f := record(t, measure.Config{}, 20)
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	var buf bytes.Buffer
	if err := Export(&buf, []*tracefile.File{f}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := flatProfile(f)
	for _, c := range []struct {
		index string
		want  func(flatRow) int64
	}{
		{"time", func(r flatRow) int64 { return r.excl }},
		{"calls", func(r flatRow) int64 { return r.visits }},
	} {
		cmd := exec.Command(goTool, "tool", "pprof", "-top", "-unit=ns", "-nodefraction=0", "-sample_index="+c.index, path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go tool pprof: %v: %s", err, stderr.String())
		}
		got := parseTop(t, string(out))
		if len(got) != len(rows) {
			t.Errorf("-sample_index=%s: %d functions, want %d:\n%s", c.index, len(got), len(rows), out)
		}
		for name, r := range rows {
			if got[name] != c.want(r) {
				t.Errorf("-sample_index=%s: %s flat %d, want %d", c.index, name, got[name], c.want(r))
			}
		}
	}
}

// parseTop returns the flat column of `pprof -top -unit=ns` by function.
func parseTop(t *testing.T, out string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	rows := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && f[0] == "flat" {
			rows = true
			continue
		}
		if !rows || len(f) < 6 {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(f[0], "ns"), 10, 64)
		if err != nil {
			t.Fatalf("flat column %q: %v", f[0], err)
		}
		got[strings.Join(f[5:], " ")] = v
	}
	return got
}

// TestCounters checks the exclusive counts of each call path against values
// worked out by hand: a call's counts minus those of the counted calls
// inside it, through calls that read no counters, with the leave's record
// of one call removed; and counters of two files with different counter
// lists merged by name.
func TestCounters(t *testing.T) {
	dir := t.TempDir()
	a := tracetest.NewBuilder("a", "h", 0, time.Unix(0, 0), "main", "compute", "inner", "leaf", "partial")
	a.Trace.Header.Metrics = []string{"cycles", "instructions"}
	l := a.Location("main")
	l.Enter(0, 1, 0, 0)
	l.Enter(100, 2, 10, 100)
	l.Enter(150, 3) // reads no counters
	l.Enter(200, 4, 20, 200)
	l.Leave(300, 50, 260)
	l.Leave(350)
	l.Message(380, encode.KindSend, 0, true, 1, 8) // messages do not count
	l.Leave(400, 110, 500)
	l.Enter(500, 5, 120, 510) // its leave's record is gone
	l.Enter(600, 4, 130, 520)
	l.Leave(700, 140, 540)
	l.Leave(800)
	l.Leave(1000, 200, 900)
	b := tracetest.NewBuilder("b", "h", 1, time.Unix(0, 0), "main")
	b.Trace.Header.Metrics = []string{"instructions"}
	m := b.Location("main")
	m.Enter(0, 1, 5)
	m.Leave(20, 25)
	p, err := Build([]*tracefile.File{a.Write(t, dir), b.Write(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if want := []string{"calls/count", "time/nanoseconds", "cycles/count", "instructions/count"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("sample types %v, want %v", types, want)
	}
	// Summed over the locations, as pprof shows them.
	got := map[string][]int64{}
	for _, s := range p.Sample {
		path := pathOf(s)
		if got[path] == nil {
			got[path] = make([]int64, len(s.Value))
		}
		for k, v := range s.Value {
			got[path][k] += v
		}
	}
	want := map[string][]int64{
		"main":                    {2, 400 + 20, 90, 480 + 20},
		"main>compute":            {1, 100, 70, 340},
		"main>compute>inner":      {1, 100, 0, 0},
		"main>compute>inner>leaf": {1, 100, 30, 60},
		"main>partial":            {1, 200, 0, 0},
		"main>partial>leaf":       {1, 100, 10, 20},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples (calls, ns, cycles, instructions):\n got %v\nwant %v", got, want)
	}
}

// TestReducedAndOpen: a trace whose buffer shed its deepest calls says so,
// and regions open at a location's end count up to its last event.
func TestReducedAndOpen(t *testing.T) {
	f := record(t, measure.Config{BufferSize: 16 << 10, BinSize: 1 << 10}, 3000)
	p, err := Build([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Comments, "\n"), "events were removed") {
		t.Errorf("comments of a reduced trace: %q", p.Comments)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}

	s := tracetest.NewBuilder("open", "h", 0, time.Unix(0, 0), "main", "work")
	l := s.Location("main")
	l.Enter(10, 1)
	l.Enter(20, 2)
	l.Enter(50, 2)
	l.Leave(70)
	l.Message(90, encode.KindRecv, 3, true, 0, 1)
	s.Trace.Locations[0].Interrupted = true
	p, err = Build([]*tracefile.File{s.Write(t, t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	excl, incl := flatCum(p, 1)
	// main 10..90 with work inside from 20; work 20..90 with work 50..70.
	if excl["main"] != 10 || incl["main"] != 80 || excl["work"] != 70 || incl["work"] != 70 {
		t.Errorf("exclusive %v, inclusive %v", excl, incl)
	}
}

// TestTruncatedCalls: in a keep-last window, the calls open at its start
// count time from there but are not counted as calls.
func TestTruncatedCalls(t *testing.T) {
	f := record(t, measure.Config{Reduction: measure.ReduceLast, BufferSize: 16 << 10, BinSize: 1 << 10}, 3000)
	if !f.Locations[0].Windowed {
		t.Fatal("no window: the buffer did not fill")
	}
	p, err := Build([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := flatCum(p, 0)
	if calls["main"] != 0 {
		t.Errorf("main, entered before the window, counted %d calls", calls["main"])
	}
	_, incl := flatCum(p, 1)
	if incl["main"] <= 0 {
		t.Errorf("main has no time")
	}
	if !strings.Contains(strings.Join(p.Comments, "\n"), "keep-last window") {
		t.Errorf("comments: %q", p.Comments)
	}
}

func TestErrors(t *testing.T) {
	if _, err := Build(nil); err == nil {
		t.Error("no files: no error")
	}
	s := tracetest.NewBuilder("bad", "h", 0, time.Unix(0, 0), "main")
	s.Trace.Header.Metrics = []string{"cycles"}
	l := s.Location("main")
	l.Enter(10, 1, 1, 2)
	l.Leave(20)
	err := Export(&bytes.Buffer{}, []*tracefile.File{s.Write(t, t.TempDir())})
	if want := `location "main": metric record at time 10 with 2 values, the header names 1 counters`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want one containing %q", err, want)
	}
}

// BenchmarkBuild reports the cost of the call-path walk per event.
func BenchmarkBuild(b *testing.B) {
	f := record(b, measure.Config{BufferSize: 16 << 20}, 2000)
	var events float64
	for _, l := range f.Locations {
		events += float64(l.Kept())
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Build([]*tracefile.File{f}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/events, "ns/event")
}

func ExampleBuild() {
	dir, err := os.MkdirTemp("", "pprof-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	m, err := measure.Start(measure.Config{Output: dir, Name: "example"})
	if err != nil {
		panic(err)
	}
	solve, step := m.Region("solve"), m.Region("step")
	l := m.Location("main")
	l.Enter(solve)
	for i := 0; i < 3; i++ {
		l.Enter(step)
		l.Leave(step)
	}
	l.Leave(solve)
	if err := m.Close(); err != nil {
		panic(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		panic(err)
	}
	defer f.Close()
	p, err := Build([]*tracefile.File{f})
	if err != nil {
		panic(err)
	}
	for _, s := range p.Sample {
		var path []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			path = append(path, s.Location[i].Line[0].Function.Name)
		}
		fmt.Println(strings.Join(path, " > "), s.Value[0], "calls")
	}
	// Output:
	// solve 1 calls
	// solve > step 3 calls
}

// pathOf is a sample's call path, outermost first: "main>solve>step".
func pathOf(s *profile.Sample) string {
	var path []string
	for i := len(s.Location) - 1; i >= 0; i-- {
		path = append(path, s.Location[i].Line[0].Function.Name)
	}
	return strings.Join(path, ">")
}

// TestCommentsOncePerRun: a run's traces get a comment per fact, not per
// trace: 40 ranks, 30 of them reduced, say the removals once, with the
// sum, how many ranks and the most, and name the first ranks' only.
func TestCommentsOncePerRun(t *testing.T) {
	reduced := record(t, measure.Config{BufferSize: 16 << 10, BinSize: 1 << 10}, 3000)
	var one uint64
	for i := range reduced.Locations {
		for _, v := range reduced.Locations[i].Removed() {
			one += v
		}
		one += reduced.Locations[i].FilteredDuration
	}
	plain := record(t, measure.Config{}, 10)
	var files []*tracefile.File
	dir := t.TempDir()
	for i := range 40 {
		b, err := os.ReadFile(map[bool]string{true: reduced.Path, false: plain.Path}[i%4 != 3])
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("run.%d.hmb", i))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := tracefile.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Comments, "\n")
	want := fmt.Sprintf("%d events were removed (buffer reductions, duration filter) in 30 of 40 traces (", 30*one)
	first := filepath.Join(dir, "run.0.hmb")
	if !strings.HasPrefix(got, "hmbtrace call-path profile of "+first+", ") || !strings.Contains(got, ", and 37 more\n") ||
		!strings.Contains(got, want) || !strings.Contains(got, fmt.Sprintf("the most, %d, in %s:", one, first)) || len(p.Comments) > 3 {
		t.Errorf("comments of 40 ranks, 30 reduced: want one on the removals (%q), got\n%s", want, got)
	}
}
