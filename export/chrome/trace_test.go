package chrome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// traceEvent is one event as a trace viewer reads it.
type traceEvent struct {
	Ph   string                     `json:"ph"`
	Name string                     `json:"name"`
	Cat  string                     `json:"cat"`
	Ts   json.Number                `json:"ts"`
	Pid  int                        `json:"pid"`
	Tid  int                        `json:"tid"`
	ID   string                     `json:"id"`
	Bp   string                     `json:"bp"`
	S    string                     `json:"s"`
	Args map[string]json.RawMessage `json:"args"`
}

type document struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
}

// ns converts a timestamp in microseconds with three decimals back to
// nanoseconds, exactly.
func (e traceEvent) ns(t testing.TB) int64 {
	t.Helper()
	whole, frac, ok := strings.Cut(string(e.Ts), ".")
	if !ok || len(frac) != 3 {
		t.Fatalf("timestamp %q is not µs with three decimals", e.Ts)
	}
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func exportJSON(t testing.TB, files []*tracefile.File) document {
	t.Helper()
	var buf bytes.Buffer
	if err := Export(&buf, files); err != nil {
		t.Fatal(err)
	}
	var d document
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&struct {
		*document
		OtherData map[string]string `json:"otherData"`
	}{document: &d}); err != nil {
		t.Fatalf("the output does not parse: %v", err)
	}
	if d.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit %q", d.DisplayTimeUnit)
	}
	return d
}

// tracks groups the events by thread, in file order, and checks that each
// thread's B and E events balance and nest, and that its times never
// decrease.
func tracks(t *testing.T, d document) map[int][]traceEvent {
	t.Helper()
	out := map[int][]traceEvent{}
	for _, e := range d.TraceEvents {
		if e.Ph == "M" {
			continue
		}
		out[e.Tid] = append(out[e.Tid], e)
	}
	for tid, evs := range out {
		var open []string
		last := int64(-1)
		for _, e := range evs {
			if ts := e.ns(t); ts < last {
				t.Errorf("thread %d: %s %q at %d ns after %d ns", tid, e.Ph, e.Name, ts, last)
			} else {
				last = ts
			}
			switch e.Ph {
			case "B":
				open = append(open, e.Name)
			case "E":
				if len(open) == 0 || open[len(open)-1] != e.Name {
					t.Errorf("thread %d: E %q at %s with %v open", tid, e.Name, e.Ts, open)
					continue
				}
				open = open[:len(open)-1]
			}
		}
		if len(open) > 0 {
			t.Errorf("thread %d: %v never ended", tid, open)
		}
	}
	return out
}

// expected lists per thread what the reader's events must become, in the
// terms of shown: kind, time in ns, region or peer.
func expected(t *testing.T, files []*tracefile.File) map[int][]string {
	t.Helper()
	origin := files[0].Header.StartWall
	for _, f := range files {
		if f.Header.StartWall.Before(origin) {
			origin = f.Header.StartWall
		}
	}
	want := map[int][]string{}
	tid := 0
	for _, f := range files {
		off := f.Header.StartWall.Sub(origin).Nanoseconds()
		for _, l := range f.Locations {
			tid++
			var e tracefile.Event
			var open []string
			var last int64
			evs := []string{}
			it := f.Events(l.ID)
			for it.Next(&e) {
				ts := off + f.Nanos(e.Time)
				last = ts
				switch e.Kind {
				case encode.KindEnter:
					open = append(open, f.RegionName(e.Region))
					evs = append(evs, fmt.Sprintf("B %d %s", ts, f.RegionName(e.Region)))
				case encode.KindLeave:
					open = open[:len(open)-1]
					evs = append(evs, fmt.Sprintf("E %d %s", ts, f.RegionName(e.Region)))
				case encode.KindSend:
					evs = append(evs, fmt.Sprintf("i %d send tag %d bytes %d", ts, e.Tag, e.Bytes))
				case encode.KindRecv:
					evs = append(evs, fmt.Sprintf("i %d recv tag %d bytes %d", ts, e.Tag, e.Bytes))
				case encode.KindIsend:
					evs = append(evs, fmt.Sprintf("i %d isend tag %d bytes %d", ts, e.Tag, e.Bytes))
				case encode.KindIrecv:
					evs = append(evs, fmt.Sprintf("i %d irecv tag %d bytes %d", ts, e.Tag, e.Bytes))
				case encode.KindMetric:
					evs = append(evs, fmt.Sprintf("C %d %v", ts, e.Values))
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			for k := len(open) - 1; k >= 0; k-- {
				evs = append(evs, fmt.Sprintf("E %d %s", last, open[k]))
			}
			want[tid] = evs
		}
	}
	return want
}

// shown reduces a thread's events to the terms of expected; flow events
// are checked apart (see flows).
func shown(t *testing.T, evs []traceEvent, metrics []string) []string {
	t.Helper()
	out := []string{}
	for _, e := range evs {
		ts := e.ns(t)
		switch e.Ph {
		case "B", "E":
			out = append(out, fmt.Sprintf("%s %d %s", e.Ph, ts, e.Name))
		case "i":
			out = append(out, fmt.Sprintf("i %d %s tag %s bytes %s", ts, e.Name, e.Args["tag"], e.Args["bytes"]))
		case "C":
			var vs []string
			for _, m := range metrics {
				vs = append(vs, string(e.Args[m]))
			}
			out = append(out, fmt.Sprintf("C %d [%s]", ts, strings.Join(vs, " ")))
		}
	}
	return out
}

// flows pairs the flow events: every start has one end with its id, and
// returns the (sender thread, receiver thread) of each.
func flows(t *testing.T, d document) map[[2]int]int {
	t.Helper()
	starts, ends := map[string]traceEvent{}, map[string]traceEvent{}
	for _, e := range d.TraceEvents {
		switch e.Ph {
		case "s":
			if _, dup := starts[e.ID]; dup {
				t.Errorf("flow id %s starts twice", e.ID)
			}
			starts[e.ID] = e
		case "f":
			if _, dup := ends[e.ID]; dup {
				t.Errorf("flow id %s ends twice", e.ID)
			}
			if e.Bp != "e" {
				t.Errorf("flow end %s does not bind to its enclosing slice", e.ID)
			}
			ends[e.ID] = e
		}
	}
	pairs := map[[2]int]int{}
	for id, s := range starts {
		f, ok := ends[id]
		if !ok {
			t.Errorf("flow %s from thread %d at %s has no end", id, s.Tid, s.Ts)
			continue
		}
		pairs[[2]int{s.Tid, f.Tid}]++
	}
	for id, f := range ends {
		if _, ok := starts[id]; !ok {
			t.Errorf("flow %s to thread %d at %s has no start", id, f.Tid, f.Ts)
		}
	}
	return pairs
}

func compare(t *testing.T, want map[int][]string, got map[int][]traceEvent, metrics map[int][]string) {
	t.Helper()
	for tid, w := range want {
		g := shown(t, got[tid], metrics[tid])
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("thread %d: %d events, want %d:\n got %q\nwant %q", tid, len(g), len(w), g, w)
		}
	}
	for tid := range got {
		if _, ok := want[tid]; !ok {
			t.Errorf("events on thread %d, which is no location", tid)
		}
	}
}

func record(t testing.TB, dir string, rank int, script func(m *measure.Measurement, t0 uint64)) *tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: dir, Name: "c", Rank: rank, TimerShift: measure.NoTimerShift, Clock: "monotonic", BufferSize: 16 << 20,
		NoThrottle: true}) // the scripts make thousands of calls of a few ns: every event is wanted
	if err != nil {
		t.Fatal(err)
	}
	script(m, m.Now())
	return tracetest.Finish(t, m)
}

// ring records locations passing messages around a ring.
func ring(n int) func(m *measure.Measurement, t0 uint64) {
	return func(m *measure.Measurement, t0 uint64) {
		work, send, recv := m.Region("work"), m.Region("send"), m.Region("recv")
		locs := make([]*measure.Location, n)
		for i := range locs {
			locs[i] = m.Location(fmt.Sprintf("worker %d", i))
		}
		for i, l := range locs {
			next, prev := locs[(i+1)%n], locs[(i+n-1)%n]
			base := t0 + uint64(i)*7
			l.EnterAt(work, base+10)
			for k := uint64(0); k < 4; k++ {
				at := base + 100 + 100*k
				l.EnterAt(send, at)
				l.MessageAt(measure.Message{Peer: uint64(next.ID()), Tag: 5, Bytes: 8 << k}, at+5)
				l.LeaveAt(send, at+10)
				l.EnterAt(recv, at+20)
				l.MessageAt(measure.Message{Recv: true, Peer: uint64(prev.ID()), Tag: 5, Bytes: 8 << k}, at+25)
				l.LeaveAt(recv, at+30)
			}
			l.LeaveAt(work, base+1000)
		}
	}
}

func TestRing(t *testing.T) {
	f := record(t, t.TempDir(), 0, ring(3))
	d := exportJSON(t, []*tracefile.File{f})
	compare(t, expected(t, []*tracefile.File{f}), tracks(t, d), nil)
	pairs := flows(t, d)
	// worker i (thread i+1) sends 4 messages to worker i+1.
	want := map[[2]int]int{{1, 2}: 4, {2, 3}: 4, {3, 1}: 4}
	if fmt.Sprint(pairs) != fmt.Sprint(want) {
		t.Errorf("flows (sender thread, receiver thread): %v, want %v", pairs, want)
	}
	names := map[int]string{}
	for _, e := range d.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			var n string
			if err := json.Unmarshal(e.Args["name"], &n); err != nil {
				t.Fatal(err)
			}
			names[e.Tid] = n
		}
	}
	if fmt.Sprint(names) != "map[1:worker 0 2:worker 1 3:worker 2]" {
		t.Errorf("thread names %v", names)
	}
}

// TestFilesCountersOpen: two synthetic files of two ranks on their common
// time axis, counters as C events, rank messages as flows between the
// processes, regions open at the end ended at the last event.
func TestFilesCountersOpen(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	a := tracetest.NewBuilder("run", "node-a", 0, start, "main", "compute \"quoted\"\n")
	a.Trace.Header.Metrics = []string{"cycles", "instructions"}
	l := a.Location("main")
	l.Enter(1000, 1, 10, 20)
	l.Enter(1100, 2, 15, 30)
	l.Message(1200, encode.KindSend, 1, true, 3, 64)
	l.Leave(1500, 115, 530)
	l.Message(1550, encode.KindRecv, 1, true, 4, 32)
	l.Leave(1600, 120, 600)
	b := tracetest.NewBuilder("run", "node-b", 1, start.Add(1500*time.Nanosecond), "main")
	b.Trace.Header.Metrics = []string{"instructions"}
	helper := b.Location("helper") // the rank's messages are on its second location
	helper.Enter(0, 1)
	helper.Leave(1)
	m := b.Location("master")
	m.Enter(0, 1, 7)
	m.Message(100, encode.KindRecv, 0, true, 3, 64)
	m.Message(200, encode.KindSend, 0, true, 4, 32)
	m.Enter(300, 1) // left open: the trace was written for a signal
	m.Message(900, encode.KindSend, 5, false, 0, 1)
	files := []*tracefile.File{a.Write(t, dir), b.Write(t, dir)}
	d := exportJSON(t, files)
	got := tracks(t, d)
	compare(t, expected(t, files), got, map[int][]string{1: a.Trace.Header.Metrics, 3: b.Trace.Header.Metrics})
	if pairs := flows(t, d); fmt.Sprint(pairs) != "map[[1 3]:1 [3 1]:1]" {
		t.Errorf("flows %v, want one each way between threads 1 and 3", pairs)
	}
	last := got[3][len(got[3])-1]
	if last.Ph != "E" || last.Name != "main" || last.ns(t) != 1500+900 || last.Pid != 2 {
		t.Errorf("the open region ends with %+v", last)
	}
	var counters int
	for _, e := range d.TraceEvents {
		if e.Ph == "C" {
			counters++
			if e.ID != strconv.Itoa(e.Tid) {
				t.Errorf("counter of thread %d has id %q", e.Tid, e.ID)
			}
		}
	}
	if counters != 5 {
		t.Errorf("%d counter events, want 5", counters)
	}
}

// TestNonBlocking: non-blocking sends and receives are instant events and
// flows like blocking ones, at the send's start and the receive's
// completion.
func TestNonBlocking(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	var files []*tracefile.File
	for r := 0; r < 2; r++ {
		b := tracetest.NewBuilder("nb", "node", r, start, "main")
		l := b.Location("main")
		l.Enter(100, 1)
		l.Request(110, encode.KindIrecvRequest, 1)
		l.Isend(120, int32(1-r), 5, 64, 0, 2)
		l.Request(130, encode.KindIsendComplete, 2)
		l.Irecv(140, int32(1-r), 5, 64, 0, 1)
		l.Leave(200)
		files = append(files, b.Write(t, dir))
	}
	d := exportJSON(t, files)
	compare(t, expected(t, files), tracks(t, d), nil)
	if pairs := flows(t, d); fmt.Sprint(pairs) != "map[[1 2]:1 [2 1]:1]" {
		t.Errorf("flows %v, want one each way between threads 1 and 2", pairs)
	}
}

// TestKeepLastWindow: the calls open at a flight recorder's window start as
// slices marked truncated.
func TestKeepLastWindow(t *testing.T) {
	dir := t.TempDir()
	mm, err := measure.Start(measure.Config{Output: dir, Name: "w", TimerShift: measure.NoTimerShift, Clock: "monotonic",
		Reduction: measure.ReduceLast, BufferSize: 16 << 10, BinSize: 1 << 10, NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	main, step := mm.Region("main"), mm.Region("step")
	l := mm.Location("main")
	t0 := mm.Now()
	l.EnterAt(main, t0)
	for i := uint64(1); i <= 20000; i++ {
		l.EnterAt(step, t0+10*i)
		l.LeaveAt(step, t0+10*i+5)
	}
	l.LeaveAt(main, t0+300000)
	wf := tracetest.Finish(t, mm)
	d := exportJSON(t, []*tracefile.File{wf})
	got := tracks(t, d)
	compare(t, expected(t, []*tracefile.File{wf}), got, nil)
	first := got[1][0]
	if first.Ph != "B" || first.Name != "main" || string(first.Args["truncated"]) != "true" {
		t.Errorf("the window starts with %+v", first)
	}
}

// countingWriter records the largest single write.
type countingWriter struct {
	n, largest int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

// TestStreams: the document goes out in writes of at most the buffer size,
// and a ten times longer trace costs only a few more allocations, so
// nothing is held per event.
func TestStreams(t *testing.T) {
	long := func(calls uint64) func(m *measure.Measurement, t0 uint64) {
		return func(m *measure.Measurement, t0 uint64) {
			main, step := m.Region("main"), m.Region("step")
			l := m.Location("main")
			l.EnterAt(main, t0)
			for i := uint64(1); i <= calls; i++ {
				l.EnterAt(step, t0+10*i)
				l.LeaveAt(step, t0+10*i+5)
			}
			l.LeaveAt(main, t0+10*calls+10)
		}
	}
	mallocs := func(calls uint64) (uint64, *countingWriter) {
		f := record(t, t.TempDir(), 0, long(calls))
		w := &countingWriter{}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := Export(w, []*tracefile.File{f}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, w
	}
	small, _ := mallocs(10000)
	large, w := mallocs(100000)
	if w.largest > 64<<10 || w.n < 10*w.largest {
		t.Errorf("%d bytes in writes of up to %d: not streamed", w.n, w.largest)
	}
	if extra := int64(large) - int64(small); extra > 2*90000/1000 {
		t.Errorf("%d more allocations for 180,000 more events: the export allocates per event", extra)
	}
}

type failingWriter struct{ left int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errors.New("disk full")
	}
	w.left -= len(p)
	return len(p), nil
}

func TestErrors(t *testing.T) {
	if err := Export(io.Discard, nil); err == nil {
		t.Error("no files: no error")
	}
	f := record(t, t.TempDir(), 0, ring(2))
	if err := Export(&failingWriter{left: 100}, []*tracefile.File{f}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing writer: err = %v", err)
	}
	s := tracetest.NewBuilder("bad", "h", 0, time.Unix(0, 0), "main")
	s.Trace.Header.Metrics = []string{"cycles"}
	l := s.Location("main")
	l.Enter(10, 1, 1, 2)
	l.Leave(20)
	err := Export(io.Discard, []*tracefile.File{s.Write(t, filepath.Join(t.TempDir()))})
	if want := `location "main": metric record at 10 ns with 2 values, the header names 1 counters`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want one containing %q", err, want)
	}
}

func BenchmarkExport(b *testing.B) {
	f := record(b, b.TempDir(), 0, func(m *measure.Measurement, t0 uint64) {
		ring(4)(m, t0)
		step := m.Region("step")
		l := m.Location("steps")
		for i := uint64(1); i <= 50000; i++ {
			l.EnterAt(step, t0+10*i)
			l.LeaveAt(step, t0+10*i+5)
		}
	})
	var events float64
	for _, l := range f.Locations {
		events += float64(l.Kept())
	}
	w := &countingWriter{}
	b.ResetTimer()
	for range b.N {
		if err := Export(w, []*tracefile.File{f}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/events, "ns/event")
	b.ReportMetric(float64(w.n)/float64(b.N)/events, "bytes/event")
}
