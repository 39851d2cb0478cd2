package goruntime

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	xt "golang.org/x/exp/trace"
)

// record is what a sink saw: one enter or leave.
type record struct {
	enter bool
	track int64
	name  string
	ns    int64
}

type recordSink struct {
	c     *Converter
	recs  []record
	syncs int
	mono  []int64
}

func (s *recordSink) Enter(track int64, name Name, ns int64) {
	s.recs = append(s.recs, record{true, track, s.c.Name(name), ns})
}
func (s *recordSink) Leave(track int64, name Name, ns int64) {
	s.recs = append(s.recs, record{false, track, s.c.Name(name), ns})
}
func (s *recordSink) Sync(mono int64) {
	s.syncs++
	s.mono = append(s.mono, mono)
}

func newRecordSink() (*recordSink, *Converter) {
	s := &recordSink{}
	s.c = NewConverter(s)
	return s, s.c
}

// interval is a closed region on a track, with its nesting depth.
type interval struct {
	name       string
	from, to   int64
	depth      int
	parentName string
}

// nest checks that every track's records are well nested and in time
// order, and returns each track's intervals.
func nest(t *testing.T, recs []record) map[int64][]interval {
	t.Helper()
	type frame struct {
		name string
		at   int64
	}
	stacks := map[int64][]frame{}
	last := map[int64]int64{}
	out := map[int64][]interval{}
	for _, r := range recs {
		if r.ns < last[r.track] {
			t.Fatalf("track %d: %s at %d before the track's last time %d", r.track, r.name, r.ns, last[r.track])
		}
		last[r.track] = r.ns
		st := stacks[r.track]
		if r.enter {
			stacks[r.track] = append(st, frame{r.name, r.ns})
			continue
		}
		if len(st) == 0 || st[len(st)-1].name != r.name {
			t.Fatalf("track %d: leave of %q does not match the open stack %v", r.track, r.name, st)
		}
		parent := ""
		if len(st) > 1 {
			parent = st[len(st)-2].name
		}
		out[r.track] = append(out[r.track], interval{r.name, st[len(st)-1].at, r.ns, len(st) - 1, parent})
		stacks[r.track] = st[:len(st)-1]
	}
	for tr, st := range stacks {
		if len(st) != 0 {
			t.Fatalf("track %d: %v left open after Finish", tr, st)
		}
	}
	return out
}

// TestConvertRealTrace traces a goroutine that holds lane 7, blocks on a
// channel for about 20 ms, then forces a GC, and checks the regions.
func TestConvertRealTrace(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the execution tracer is already on (go test -trace)")
	}
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	ch := make(chan int)
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		ctx := context.Background()
		trace.Log(ctx, LaneCategory, HoldMessage(7))
		close(ready) // the receive below blocks, however late this goroutine ran
		<-ch         // blocks until the main goroutine sends
		trace.Log(ctx, LaneCategory, ReleaseMessage(7))
		<-ch // not held: must not appear
	}()
	<-ready
	time.Sleep(20 * time.Millisecond)
	ch <- 1
	ch <- 2
	<-done
	runtime.GC()
	elapsed := time.Since(before)
	trace.Stop()

	sink, c := newRecordSink()
	if err := c.Run(&buf); err != nil {
		t.Fatal(err)
	}
	if sink.syncs == 0 || sink.mono[0] <= 0 {
		t.Errorf("Sync calls %d, monotonic times %v: want some, with the clock snapshot's time", sink.syncs, sink.mono)
	}
	if c.Stats.Holds != 1 || c.Stats.BadLogs != 0 {
		t.Errorf("stats %+v: want 1 hold, no bad log", c.Stats)
	}
	tracks := nest(t, sink.recs)
	for tr := range tracks {
		if tr != 7 && tr != GCTrack {
			t.Errorf("intervals on track %d, want only lane 7 and the GC track", tr)
		}
	}
	var waits []interval
	for _, iv := range tracks[7] {
		if iv.name == WaitPrefix+"chan receive" {
			waits = append(waits, iv)
		}
	}
	if len(waits) != 1 {
		t.Fatalf("lane 7: %d chan receive waits, want 1 (the held one): %v", len(waits), tracks[7])
	}
	if d := waits[0].to - waits[0].from; d < 0 || d > elapsed.Nanoseconds() {
		t.Errorf("the wait lasted %d ns, want within [0, %d]", d, elapsed.Nanoseconds())
	}
	var gcs, stws int
	for _, iv := range tracks[GCTrack] {
		switch {
		case iv.name == NameGC:
			gcs++
			if iv.depth != 0 {
				t.Errorf("GC cycle at depth %d", iv.depth)
			}
		case strings.HasPrefix(iv.name, STWPrefix+"GC"):
			stws++
			if iv.parentName != NameGC {
				t.Errorf("%s nested in %q, want in the GC cycle", iv.name, iv.parentName)
			}
		}
	}
	if gcs < 1 || stws < 2 {
		t.Errorf("GC track: %d cycles and %d GC pauses, want >= 1 and >= 2: %v", gcs, stws, tracks[GCTrack])
	}
}

// TestConvertLaneTakeover checks that a lane taken by a second goroutine
// without a release closes the first one's intervals there.
func TestConvertLaneTakeover(t *testing.T) {
	sink, c := newRecordSink()
	c.laneLog(1, HoldMessage(3), 10)
	h := c.holders[1]
	c.push(h, kindWait, c.name(WaitPrefix, "select"), 20)
	c.laneLog(2, HoldMessage(3), 30)
	c.laneLog(2, "+x", 31)
	c.laneLog(2, "", 31)
	c.Finish()
	got := fmt.Sprint(sink.recs)
	want := fmt.Sprint([]record{{true, 3, WaitPrefix + "select", 20}, {false, 3, WaitPrefix + "select", 30}})
	if got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	if c.Stats.BadLogs != 2 || len(c.holders) != 0 {
		t.Errorf("stats %+v, holders %d: want 2 bad logs and none left", c.Stats, len(c.holders))
	}
}

// A lane holder's syscall that loses its P, a preemption, a mark assist
// with a wait inside, and its exit without a release, from events made by
// hand: each becomes its region, nested, and the exit closes the lane.
func TestConvertSyntheticHolder(t *testing.T) {
	sink, c := newRecordSink()
	const g = xt.GoID(5)
	feed := func(ev xt.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		c.Event(&ev)
	}
	state := func(at xt.Time, from, to xt.GoState, reason string) {
		t.Helper()
		st := xt.MakeGoStateTransition(g, from, to)
		st.Reason = reason
		feed(xt.MakeEvent(xt.EventConfig[xt.StateTransition]{Time: at, Kind: xt.EventStateTransition, Goroutine: g, Details: st}))
	}
	rng := func(at xt.Time, k xt.EventKind, name string) {
		t.Helper()
		feed(xt.MakeEvent(xt.EventConfig[xt.Range]{Time: at, Kind: k, Goroutine: g, Details: xt.Range{Name: name, Scope: xt.MakeResourceID(g)}}))
	}
	feed(xt.MakeEvent(xt.EventConfig[xt.Log]{Time: 10, Kind: xt.EventLog, Goroutine: g, Details: xt.Log{Category: LaneCategory, Message: HoldMessage(2)}}))
	state(20, xt.GoRunning, xt.GoSyscall, "")
	state(30, xt.GoSyscall, xt.GoRunnable, "") // lost its P
	state(40, xt.GoRunnable, xt.GoRunning, "")
	state(50, xt.GoRunning, xt.GoRunnable, "preempted")
	state(60, xt.GoRunnable, xt.GoRunning, "")
	rng(70, xt.EventRangeBegin, "GC mark assist")
	state(80, xt.GoRunning, xt.GoWaiting, "GC mark assist wait for work")
	state(90, xt.GoWaiting, xt.GoRunnable, "")
	state(100, xt.GoRunnable, xt.GoRunning, "")
	rng(110, xt.EventRangeEnd, "GC mark assist")
	state(120, xt.GoRunning, xt.GoWaiting, "select")
	state(130, xt.GoWaiting, xt.GoRunnable, "")
	state(140, xt.GoRunnable, xt.GoRunning, "")
	rng(145, xt.EventRangeBegin, "GC mark assist")
	state(150, xt.GoRunning, xt.GoNotExist, "") // exits inside an assist, without a release
	state(160, xt.GoNotExist, xt.GoRunnable, "")
	state(170, xt.GoRunnable, xt.GoRunning, "")
	state(180, xt.GoRunning, xt.GoWaiting, "chan receive") // no one's: g holds nothing now
	c.Finish()

	type iv struct {
		name     string
		from, to int64
		parent   string
	}
	var got []iv
	for _, x := range nest(t, sink.recs)[2] {
		got = append(got, iv{x.name, x.from, x.to, x.parentName})
	}
	want := []iv{
		{NameSyscall, 20, 30, ""},
		{NameRunnable, 30, 40, ""},
		{NameRunnable, 50, 60, ""},
		{WaitPrefix + "GC mark assist wait for work", 80, 90, NameAssist},
		{NameRunnable, 90, 100, NameAssist},
		{NameAssist, 70, 110, ""},
		{WaitPrefix + "select", 120, 130, ""},
		{NameRunnable, 130, 140, ""},
		{NameAssist, 145, 150, ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lane 2:\n got %v\nwant %v", got, want)
	}
	if len(c.holders) != 0 {
		t.Errorf("%d holders after the goroutine's exit", len(c.holders))
	}
}
