package measure

import (
	"runtime"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// span is a region read back from a trace, with what it is nested in.
type span struct {
	name     string
	from, to int64 // ns since the start
	depth    int
	parent   string
	class    tracefile.Class
}

// spans reads location id's regions back, checking that enters and leaves
// match.
func spans(t *testing.T, f *tracefile.File, id uint32) []span {
	t.Helper()
	names := map[uint32]string{}
	for _, r := range f.Regions {
		names[r.ID] = r.Name
	}
	type open struct {
		region uint32
		at     int64
		class  tracefile.Class
	}
	var stack []open
	var out []span
	it := f.Events(id)
	var e tracefile.Event
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindEnter:
			stack = append(stack, open{e.Region, f.Nanos(e.Time), e.Class})
		case encode.KindLeave:
			if len(stack) == 0 || stack[len(stack)-1].region != e.Region {
				t.Fatalf("location %d: leave of %q does not match the open regions", id, names[e.Region])
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			parent := ""
			if len(stack) > 0 {
				parent = names[stack[len(stack)-1].region]
			}
			out = append(out, span{names[e.Region], top.at, f.Nanos(e.Time), len(stack) + 1, parent, top.class})
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if len(stack) != 0 {
		t.Fatalf("location %d: %d regions left open", id, len(stack))
	}
	return out
}

// A worker that holds a location blocks on a channel for about 20 ms
// inside a region of its own, then the program forces a GC: the GC cycle
// with its pauses appears on the "Go GC" location, and the wait on the
// worker's companion location, inside the worker's region in time.
func TestGoRuntimeRegions(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the execution tracer is already on (go test -trace)")
	}
	m := startTest(t, Config{GoRuntime: true, NoThrottle: true})
	if m.gort == nil {
		t.Fatal("Config.GoRuntime did not start the bridge")
	}
	work := m.Region("work")
	ch := make(chan int)
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		loc := m.Location("worker")
		loc.Enter(work)
		close(ready) // the receive below blocks, however late this goroutine ran
		<-ch
		loc.Leave(work)
		loc.Done()
		<-ch // given back: this wait is no one's
	}()
	<-ready
	time.Sleep(20 * time.Millisecond)
	ch <- 1
	ch <- 2
	<-done
	runtime.GC()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if trace.IsEnabled() {
		t.Error("the execution tracer still runs after Close")
	}
	f := openTrace(t, m)
	ids := map[string]uint32{}
	for _, l := range f.Locations {
		ids[l.Name] = l.ID
	}
	for _, name := range []string{"worker", "worker (Go)", "Go GC"} {
		if _, ok := ids[name]; !ok {
			t.Fatalf("no location %q in %v", name, ids)
		}
	}
	for _, r := range f.Regions {
		if strings.HasPrefix(r.Name, "Go ") && r.Paradigm != tracefile.ParadigmGo {
			t.Errorf("region %q of paradigm %v, want go", r.Name, r.Paradigm)
		}
	}
	run := f.Duration()

	ws := spans(t, f, ids["worker"])
	if len(ws) != 1 || ws[0].name != "work" {
		t.Fatalf("worker: %+v, want one work region", ws)
	}
	var waits []span
	for _, s := range spans(t, f, ids["worker (Go)"]) {
		if s.class != tracefile.ClassParadigm {
			t.Errorf("%s in class %v, want the paradigm class", s.name, s.class)
		}
		if s.name == "Go wait: chan receive" {
			waits = append(waits, s)
		}
	}
	if len(waits) != 1 {
		t.Fatalf("worker (Go): %d chan receive waits, want 1: %+v", len(waits), waits)
	}
	w := waits[0]
	// The tracer's clock counts in 64 ns steps and is mapped onto the
	// probes' through clock pairs: the wait may seem to begin or end that
	// much outside the region around it.
	const slack = 1000
	if w.to < w.from || w.from < ws[0].from-slack || w.to > ws[0].to+slack || w.to > run {
		t.Errorf("the wait [%d, %d] ns is not inside the worker's region [%d, %d]", w.from, w.to, ws[0].from, ws[0].to)
	}
	t.Logf("work [%d, %d] ns, its chan receive wait [%d, %d] ns", ws[0].from, ws[0].to, w.from, w.to)
	var cycles, pauses int
	for _, s := range spans(t, f, ids["Go GC"]) {
		t.Logf("Go GC: %s [%d, %d] ns at depth %d", s.name, s.from, s.to, s.depth)
		if s.from < 0 || s.to < s.from || s.to > run {
			t.Errorf("%s [%d, %d] ns: not inside the run", s.name, s.from, s.to)
		}
		switch {
		case s.name == "Go GC":
			cycles++
		case strings.HasPrefix(s.name, "Go stop-the-world: GC"):
			pauses++
			if s.parent != "Go GC" {
				t.Errorf("%s nested in %q, want in the GC cycle", s.name, s.parent)
			}
		}
	}
	if cycles < 1 || pauses < 2 {
		t.Errorf("Go GC: %d cycles, %d GC pauses; want >= 1 and >= 2", cycles, pauses)
	}
}

// The tracer's monotonic times become ticks between the clock pairs
// around them, along the nearest segment outside them, and along the rate
// of Start while there is one pair only.
func TestGoRuntimeTicks(t *testing.T) {
	g := &goRuntime{m: &Measurement{startTPS: 2e9}, pairs: []clock.Pair{{Ticks: 1000, Nanos: 100}}}
	check := func(ns int64, want uint64) {
		t.Helper()
		if got := g.ticks(ns); got != want {
			t.Errorf("ticks(%d) with pairs %v = %d, want %d", ns, g.pairs, got, want)
		}
	}
	check(600, 2000)
	g.pairs = append(g.pairs, clock.Pair{Ticks: 3500, Nanos: 1100}) // 2.5 GHz
	check(600, 2250)
	check(1600, 4750)
	check(50, 875)
	g.pairs = append(g.pairs, clock.Pair{Ticks: 6500, Nanos: 2100}) // 3 GHz
	check(600, 2250)
	check(1600, 5000)
	check(2600, 8000)
	check(-5000, 750) // no time before the clock's zero
	g.pairs = []clock.Pair{{Ticks: 10, Nanos: 1000}, {Ticks: 20, Nanos: 2000}}
	check(0, 1) // never 0, which the probes read as "now"
	g.mono = true
	check(1234, 1234)
}

// A converter that falls behind the run stops the tracer; the regions it
// read are kept and Close writes the trace as ever.
func TestGoRuntimeBehind(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the execution tracer is already on (go test -trace)")
	}
	defer func(d time.Duration) { goRuntimeMaxLag = d }(goRuntimeMaxLag)
	goRuntimeMaxLag = time.Nanosecond // any generation is too old
	m := startTest(t, Config{GoRuntime: true})
	loc := m.Location("worker")
	// The first generation ends within a second or so; then the tracer
	// stops without Close.
	deadline := time.Now().Add(10 * time.Second)
	for trace.IsEnabled() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if trace.IsEnabled() {
		t.Fatal("the tracer still runs 10 s after a converter that is always behind")
	}
	loc.Done()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !m.gort.behind {
		t.Error("the converter did not note that it fell behind")
	}
	f := openTrace(t, m)
	var gc bool
	for _, l := range f.Locations {
		gc = gc || l.Name == "Go GC"
	}
	if !gc {
		t.Error(`no "Go GC" location: the start's pause, read before the stop, is lost`)
	}
}
