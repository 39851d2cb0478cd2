package measure_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// eventsOf returns the events of location id, one line each: kind,
// region and what an annotation says.
func eventsOf(t *testing.T, f *tracefile.File, id uint32) []string {
	t.Helper()
	var out []string
	it := f.Events(id)
	var e tracefile.Event
	for it.Next(&e) {
		s := fmt.Sprintf("%v %s d%d", e.Kind, f.RegionName(e.Region), e.Depth)
		if d := f.Describe(&e); d != "" {
			s += ": " + d
		}
		out = append(out, s)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAnnotationsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "annot", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	solve, step := m.Region("solve"), m.Region("step")
	n, mode := m.IntParam("n"), m.StringParam("mode")
	converged := m.Mark("converged")
	loc := m.Location("main")
	loc.MarkName("start")
	loc.EnterInt(solve, n, -42)
	for i := 0; i < 2; i++ {
		loc.EnterString(step, mode, []string{"coarse", "fine"}[i])
		loc.ParamInt(n, int64(i))
		loc.Leave(step)
	}
	loc.Mark(converged)
	loc.Leave(solve)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(raw[8:]); v != 2 {
		t.Errorf("a file with annotations has format version %d, want 2", v)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := strings.Join(eventsOf(t, f, loc.ID()), "\n")
	want := strings.Join([]string{
		`MARK region#0 d0: mark "start"`,
		`ENTER solve d1`,
		`PARAM_INT solve d1: param n = -42`,
		`ENTER step d2`,
		`PARAM_STRING step d2: param mode = "coarse"`,
		`PARAM_INT step d2: param n = 0`,
		`LEAVE step d2`,
		`ENTER step d2`,
		`PARAM_STRING step d2: param mode = "fine"`,
		`PARAM_INT step d2: param n = 1`,
		`LEAVE step d2`,
		`MARK solve d1: mark "converged"`,
		`LEAVE solve d1`,
	}, "\n")
	if got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	if len(f.Params) != 2 || f.Params[0] != (tracefile.Param{Name: "n", Type: tracefile.ParamInt}) ||
		f.Params[1] != (tracefile.Param{Name: "mode", Type: tracefile.ParamString}) {
		t.Errorf("parameters %+v", f.Params)
	}
	if strings.Join(f.Marks, ",") != "converged,start" || strings.Join(f.Strings, ",") != "coarse,fine" {
		t.Errorf("marks %q, strings %q", f.Marks, f.Strings)
	}
}

// A trace without annotations stays format version 1, which every older
// reader reads.
func TestNoAnnotationsVersion1(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	loc := m.Location("main")
	r := m.Region("r")
	loc.Enter(r)
	loc.Leave(r)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(raw[8:]); v != 1 {
		t.Errorf("format version %d, want 1", v)
	}
}

// TestEnterIntFiltered: a filtered region opens nothing, and EnterInt
// records no parameter for it (which would go to the region around it).
func TestEnterIntFiltered(t *testing.T) {
	dir := t.TempDir()
	ff := filepath.Join(dir, "filter")
	if err := os.WriteFile(ff, []byte("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE hidden\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := measure.Start(measure.Config{Output: dir, Name: "filtered", FilterFile: ff})
	if err != nil {
		t.Fatal(err)
	}
	outer, hidden := m.Region("outer"), m.Region("hidden")
	p := m.IntParam("p")
	loc := m.Location("main")
	loc.Enter(outer)
	loc.EnterInt(hidden, p, 7)
	loc.Leave(hidden)
	loc.Leave(outer)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := strings.Join(eventsOf(t, f, loc.ID()), "\n"); got != "ENTER outer d1\nLEAVE outer d1" {
		t.Errorf("events:\n%s", got)
	}
}

// TestAnnotationMisuse: handles of another measurement and tokens of
// another channel are usage errors, not records.
func TestAnnotationMisuse(t *testing.T) {
	dir := t.TempDir()
	m1, err := measure.Start(measure.Config{Output: dir, Name: "one"})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := measure.Start(measure.Config{Output: dir, Name: "two"})
	if err != nil {
		t.Fatal(err)
	}
	loc := m1.Location("main")
	loc.Mark(m2.Mark("x"))
	loc.ParamInt(m2.IntParam("p"), 1)
	loc.ParamInt(m1.StringParam("s"), 1) // an int for a string parameter
	a, b := m1.Channel("a"), m1.Channel("b")
	tok := a.Send(loc, 8)
	b.Recv(loc, tok, 8)
	a.Recv(loc, tok, 8)
	m2.Close()
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m1.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := f.Locations[0].Usage
	if u.UnknownRegion != 3 || u.MessageNoPeer != 1 {
		t.Errorf("usage errors %+v, want 3 undefined, 1 without a peer", u)
	}
	msgs, err := f.ChannelMessages()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || !msgs[0].Sent || !msgs[0].Received {
		t.Errorf("channel messages %+v, want the one on a, sent and received", msgs)
	}
}

// TestChannelMatchingExact sends values from several senders to several
// receivers through one Go channel, each value carrying its token and, to
// check against, its sender's lane and a serial. The reader must pair every
// receive with exactly its send.
func TestChannelMatchingExact(t *testing.T) {
	const senders, receivers, each = 4, 3, 500
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "chan"})
	if err != nil {
		t.Fatal(err)
	}
	jobs := m.Channel("jobs")
	type job struct {
		tok    measure.ChanToken
		from   uint32
		serial int
	}
	c := make(chan job, 16)
	type got struct {
		token    uint64
		from, to uint32
	}
	results := make([][]got, receivers)
	var wg, rg sync.WaitGroup
	for s := 0; s < senders; s++ {
		loc := m.Location(fmt.Sprint("sender ", s))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				serial := s*each + i
				c <- job{jobs.Send(loc, uint64(serial%7+1)), loc.ID(), serial}
			}
		}()
	}
	for r := 0; r < receivers; r++ {
		loc := m.Location(fmt.Sprint("receiver ", r))
		rg.Add(1)
		go func() {
			defer rg.Done()
			for j := range c {
				jobs.Recv(loc, j.tok, uint64(j.serial%7+1))
				results[r] = append(results[r], got{j.tok.Number(), j.from, loc.ID()})
			}
		}()
	}
	wg.Wait()
	close(c)
	rg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgs, err := f.ChannelMessages()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != senders*each {
		t.Fatalf("%d channel messages, want %d", len(msgs), senders*each)
	}
	// Every message is the program's own: the same token, sending lane
	// and receiving lane.
	want := map[uint64]got{}
	for _, rs := range results {
		for _, g := range rs {
			want[g.token] = g
		}
	}
	for _, msg := range msgs {
		if !msg.Sent || !msg.Received {
			t.Fatalf("message %+v not both sent and received", msg)
		}
		if msg.RecvTime < msg.SendTime {
			t.Errorf("message %+v received before it was sent", msg)
		}
		if w := want[msg.Token]; w.from != msg.From || w.to != msg.To {
			t.Fatalf("token %d: the reader pairs lanes %d -> %d, the program sent it %d -> %d", msg.Token, msg.From, msg.To, w.from, w.to)
		}
	}
	// Each receive's bytes are those its own send recorded.
	sent, recv := map[uint64]uint64{}, map[uint64]uint64{}
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindChanSend:
				sent[e.Token] = e.Bytes
			case encode.KindChanRecv:
				recv[e.Token] = e.Bytes
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for tok, b := range sent {
		if recv[tok] != b {
			t.Fatalf("token %d: sent %d bytes, received %d", tok, b, recv[tok])
		}
	}
}

func TestAnnotationAllocs(t *testing.T) {
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "allocs"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	loc := m.Location("main")
	r, p, s, k, ch := m.Region("r"), m.IntParam("p"), m.StringParam("s"), m.Mark("k"), m.Channel("c")
	loc.EnterString(r, s, "warm")
	loc.Leave(r)
	if n := testing.AllocsPerRun(1000, func() {
		loc.EnterInt(r, p, 3)
		loc.ParamString(s, "warm")
		loc.Mark(k)
		ch.Recv(loc, ch.Send(loc, 8), 8)
		loc.Leave(r)
	}); n != 0 {
		t.Errorf("%v allocations per annotated call, want 0", n)
	}
}

// TestAnnotationsRecovered: a trace recovered from a surviving mapping has
// the annotation records (not their names, which the mapping does not
// keep) and is format version 2, so that older readers refuse it by name.
func TestAnnotationsRecovered(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	m, err := measure.Start(measure.Config{Output: out, Name: "surv", Survive: true, SurviveDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	loc := m.Location("main")
	r := m.Region("r")
	loc.EnterInt(r, m.IntParam("n"), 9)
	loc.MarkName("here")
	loc.Leave(r)
	loc.Done()
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("mappings %v, %v", paths, err)
	}
	rec, err := tracefile.Recover(paths[0], true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != 2 {
		t.Errorf("recovered file has version %d, want 2", v)
	}
	f, err := tracefile.Read(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(eventsOf(t, f, loc.ID()), "\n")
	if want := "ENTER r d1\nPARAM_INT r d1: param parameter 1 = 9\nMARK r d1: mark \"mark 1\"\nLEAVE r d1"; got != want {
		t.Errorf("recovered events:\n%s\nwant\n%s", got, want)
	}
}

// TestAnnotationsUnderReduction records parameters on every call of a deep
// recursion, marks and channel messages, into a buffer far too small, with
// each reduction policy and with the duration filter: whatever is kept
// nests, and every parameter kept follows the enter of its own call (the
// depth policy sheds it with that enter, never leaving it behind).
func TestAnnotationsUnderReduction(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  measure.Config
	}{
		{"depth", measure.Config{Reduction: measure.ReduceDepth}},
		{"class", measure.Config{Reduction: measure.ReduceClass}},
		{"first", measure.Config{Reduction: measure.ReduceFirst}},
		{"last", measure.Config{Reduction: measure.ReduceLast}},
		{"min-duration", measure.Config{MinDuration: 300 * time.Nanosecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Output, cfg.Name, cfg.NoThrottle = t.TempDir(), "reduce", true
			if cfg.MinDuration == 0 {
				cfg.BufferSize, cfg.BinSize = 32<<10, 1<<10
			}
			m, err := measure.Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			regions := []measure.Region{m.Region("a"), m.Region("b"), m.Region("c")}
			depth, label := m.IntParam("depth"), m.StringParam("label")
			ch := m.Channel("c")
			loc := m.Location("main")
			var rec func(d int)
			rec = func(d int) {
				loc.EnterInt(regions[d%3], depth, int64(d))
				if d%2 == 0 {
					loc.ParamString(label, fmt.Sprint("even ", d))
				}
				if d > 1 {
					rec(d - 1)
					rec(d - 2)
				} else {
					loc.MarkName("leaf")
					ch.Recv(loc, ch.Send(loc, 8), 8)
				}
				loc.Leave(regions[d%3])
			}
			for i := 0; i < 60; i++ {
				rec(3 + i%6)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if c.cfg.MinDuration == 0 && len(m.Reductions()) == 0 {
				t.Fatal("no reduction happened: the test does not test them")
			}
			f, err := tracefile.Open(m.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			type open struct {
				region uint32
				d      int64 // the call's own depth parameter, once seen
			}
			var stack []open
			var params, marks int
			it := f.Events(loc.ID())
			var e tracefile.Event
			for it.Next(&e) {
				switch e.Kind {
				case encode.KindEnter:
					for len(stack) < e.Depth-1 {
						stack = append(stack, open{}) // an ancestor the buffer removed
					}
					stack = append(stack[:e.Depth-1], open{region: e.Region, d: -1})
				case encode.KindLeave:
					stack = stack[:e.Depth-1]
				case encode.KindParamInt, encode.KindParamString:
					params++
					if e.Depth != len(stack) || e.Depth == 0 || stack[e.Depth-1].region != e.Region || stack[e.Depth-1].region == 0 {
						t.Fatalf("%s at depth %d (region %d) does not follow its call's enter: open %+v", f.Describe(&e), e.Depth, e.Region, stack)
					}
					if e.Kind == encode.KindParamInt {
						// Depth d's call is region d%3: the value is its own.
						if regions[e.Value%3] != measure.Region(e.Region) {
							t.Fatalf("%s recorded in region %d, not its call's", f.Describe(&e), e.Region)
						}
					}
				case encode.KindMark:
					marks++
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			// The class policy closes the metric class first, and the
			// parameters with it, then the message class with the marks,
			// as documented; the other policies keep some of each.
			closed := map[tracefile.Class]bool{}
			for _, r := range f.Reductions {
				if r.Reason == tracefile.ByClass {
					closed[r.Class] = true
				}
			}
			if (params == 0 && !closed[tracefile.ClassMetric]) || (marks == 0 && !closed[tracefile.ClassMessage]) {
				t.Errorf("%d parameters and %d marks kept, classes closed %v: nothing to check", params, marks, closed)
			}
			if _, err := f.ChannelMessages(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
