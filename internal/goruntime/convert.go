// Package goruntime owns the bridge from Go's execution tracer to hmbtrace
// regions: it reads the stream runtime/trace writes (parsed by
// golang.org/x/exp/trace) and turns the garbage collector's cycles and
// stop-the-world pauses, and the blocking, scheduling and syscall intervals
// of the goroutines that hold a lane, into well-nested enter/leave pairs on
// tracks: one for the GC, one per lane. Times are CLOCK_MONOTONIC
// nanoseconds, as the runtime's nanotime reads them; the caller maps them
// onto its own clock.
//
// Which goroutine holds which lane is told through the trace itself: the
// holder logs trace.Log(ctx, LaneCategory, "+<lane>") when it takes a lane
// and "-<lane>" when it gives it back (HoldMessage, ReleaseMessage). The log
// carries the goroutine id and the time, so the tracer needs no other hook
// into the scheduler, and goroutines that hold no lane cost nothing here.
package goruntime

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	xt "golang.org/x/exp/trace"
)

// LaneCategory is the trace.Log category of lane holds and releases.
const LaneCategory = "hmbtrace.lane"

// HoldMessage is the log message by which a goroutine says it holds lane.
func HoldMessage(lane uint32) string { return "+" + strconv.FormatUint(uint64(lane), 10) }

// ReleaseMessage is the log message by which a goroutine gives lane back.
func ReleaseMessage(lane uint32) string { return "-" + strconv.FormatUint(uint64(lane), 10) }

// GCTrack is the track of the garbage collector's cycles and of every
// stop-the-world pause; lane tracks are the lanes' ids.
const GCTrack = -1

// The region names. Waits are named after the runtime's reason, as the
// execution tracer gives it ("chan receive", "select", "sync", "sleep", ...).
const (
	NameGC       = "Go GC"
	NameRunnable = "Go runnable"
	NameSyscall  = "Go syscall"
	NameAssist   = "Go GC mark assist"
	WaitPrefix   = "Go wait: "
	STWPrefix    = "Go stop-the-world: "
)

// Sink receives the intervals as enters and leaves in time order per track,
// well nested on each track. Track is GCTrack or a lane; name is the
// region's name, as an index for Converter.Name, so that the sink maps
// each name to a region of its own once, not per event.
type Sink interface {
	Enter(track int64, name Name, ns int64)
	Leave(track int64, name Name, ns int64)
	// Sync is called at each generation of the trace (about once a second
	// and at the end), before the generation's events, with the monotonic
	// time of its start (0 if the trace does not say): a good time for the
	// caller to read its own clock against the monotonic one, and to see
	// how far behind the run the conversion is.
	Sync(mono int64)
}

// Name is the index of a region name in a Converter.
type Name int32

// Stats counts what the conversion did.
type Stats struct {
	Events    uint64 // trace events read
	Intervals uint64 // intervals given to the sink
	Holds     uint64 // lane holds seen
	BadLogs   uint64 // lane logs whose message could not be read
}

// kind is the kind of an open interval on a lane.
type kind uint8

const (
	kindWait kind = iota
	kindRunnable
	kindSyscall
	kindAssist
)

type open struct {
	kind kind
	name Name
}

// holder is a goroutine that holds a lane, and what it has open on it.
type holder struct {
	lane  int64
	stack []open
}

// Converter turns one trace stream into intervals. It is not safe for
// concurrent use.
type Converter struct {
	sink    Sink
	offset  int64 // monotonic minus trace time, from the last clock snapshot
	last    int64 // the latest time seen
	holders map[xt.GoID]*holder
	byLane  map[int64]xt.GoID

	// The GC track: a cycle runs from the first of its sweep-termination
	// pause and its mark phase to the last of its mark phase and its
	// mark-termination pause, with every pause inside it nested.
	cycle  bool
	marked bool // the cycle's mark phase has ended
	stw    Name // the open pause's region name, noName if none

	names    []string
	byName   map[nameKey]Name // range and wait reasons to names, made once
	gc       Name
	runnable Name
	syscall  Name
	assist   Name

	Stats Stats
}

// NewConverter returns a converter that gives its intervals to sink.
func NewConverter(sink Sink) *Converter {
	c := &Converter{sink: sink, holders: map[xt.GoID]*holder{}, byLane: map[int64]xt.GoID{}, byName: map[nameKey]Name{}, stw: noName}
	c.gc, c.runnable = c.name(NameGC, ""), c.name(NameRunnable, "")
	c.syscall, c.assist = c.name(NameSyscall, ""), c.name(NameAssist, "")
	return c
}

// noName is no name: no pause is open.
const noName Name = -1

// Name returns the region name of index n.
func (c *Converter) Name(n Name) string { return c.names[n] }

// Run reads the trace from r until its end, then closes what is still
// open at the last time seen. A read or parse error ends it too, after the
// same closing; it is returned.
func (c *Converter) Run(r io.Reader) error {
	err := c.run(r)
	c.Finish()
	return err
}

func (c *Converter) run(r io.Reader) error {
	tr, err := xt.NewReader(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("goruntime: reading the execution trace: %v", err)
	}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("goruntime: reading the execution trace: %v", err)
		}
		c.Event(&ev)
	}
}

// Event converts one event.
func (c *Converter) Event(ev *xt.Event) {
	c.Stats.Events++
	if ev.Kind() == xt.EventSync {
		mono := int64(0)
		if s := ev.Sync(); s.ClockSnapshot != nil {
			c.offset = int64(s.ClockSnapshot.Mono) - int64(s.ClockSnapshot.Trace)
			mono = int64(s.ClockSnapshot.Mono)
		}
		c.sink.Sync(mono)
		return
	}
	t := int64(ev.Time()) + c.offset
	if t < c.last {
		t = c.last // the parser may order events of different threads a little out of time
	}
	c.last = t
	switch ev.Kind() {
	case xt.EventLog:
		if l := ev.Log(); l.Category == LaneCategory {
			c.laneLog(ev.Goroutine(), l.Message, t)
		}
	case xt.EventRangeBegin, xt.EventRangeEnd:
		c.rangeEvent(ev, t)
	case xt.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != xt.ResourceGoroutine {
			return
		}
		if h := c.holders[st.Resource.Goroutine()]; h != nil {
			from, to := st.Goroutine()
			c.transition(st.Resource.Goroutine(), h, from, to, st.Reason, t)
		}
	}
}

// Finish closes every interval still open, at the last time seen.
func (c *Converter) Finish() {
	for g, h := range c.holders {
		c.popAll(h, c.last)
		delete(c.holders, g)
	}
	clear(c.byLane)
	if c.stw != noName {
		c.sink.Leave(GCTrack, c.stw, c.last)
		c.stw = noName
	}
	if c.cycle {
		c.sink.Leave(GCTrack, c.gc, c.last)
		c.cycle, c.marked = false, false
	}
}

func (c *Converter) laneLog(g xt.GoID, msg string, t int64) {
	if len(msg) < 2 || msg[0] != '+' && msg[0] != '-' {
		c.Stats.BadLogs++
		return
	}
	lane, err := strconv.ParseUint(msg[1:], 10, 32)
	if err != nil || g == xt.NoGoroutine {
		c.Stats.BadLogs++
		return
	}
	h := c.holders[g]
	if msg[0] == '-' {
		if h != nil && h.lane == int64(lane) {
			c.release(g, h, t)
		}
		return
	}
	c.Stats.Holds++
	if h != nil {
		c.release(g, h, t) // a goroutine holds one lane at a time here
	}
	// A lane has one holder: one that was never given back (its holder
	// exited, or the release was lost) ends here, so that its track stays
	// nested.
	if old, ok := c.byLane[int64(lane)]; ok {
		c.release(old, c.holders[old], t)
	}
	c.holders[g] = &holder{lane: int64(lane)}
	c.byLane[int64(lane)] = g
}

func (c *Converter) release(g xt.GoID, h *holder, t int64) {
	if h == nil {
		return
	}
	c.popAll(h, t)
	delete(c.holders, g)
	if c.byLane[h.lane] == g {
		delete(c.byLane, h.lane)
	}
}

// transition follows a lane holder's scheduling state: a wait from
// Running to Waiting until it is woken, the time Runnable until it runs
// again (after a wake, a preemption or a syscall that lost its P), and a
// syscall.
func (c *Converter) transition(g xt.GoID, h *holder, from, to xt.GoState, reason string, t int64) {
	if from == xt.GoUndetermined {
		return // a restatement at a generation's start; the state is known
	}
	switch from {
	case xt.GoWaiting:
		c.popTo(h, kindWait, t)
	case xt.GoRunnable:
		c.popTo(h, kindRunnable, t)
	case xt.GoSyscall:
		c.popTo(h, kindSyscall, t)
	}
	switch to {
	case xt.GoWaiting:
		if reason == "" {
			reason = "unknown"
		}
		c.push(h, kindWait, c.name(WaitPrefix, reason), t)
	case xt.GoRunnable:
		c.push(h, kindRunnable, c.runnable, t)
	case xt.GoSyscall:
		c.push(h, kindSyscall, c.syscall, t)
	case xt.GoNotExist:
		c.release(g, h, t)
	}
}

func (c *Converter) rangeEvent(ev *xt.Event, t int64) {
	rg := ev.Range()
	begin := ev.Kind() == xt.EventRangeBegin
	switch {
	case rg.Name == "GC concurrent mark phase":
		if begin {
			c.beginCycle(t)
			c.marked = false
			return
		}
		c.marked = true
		if c.stw == noName {
			c.endCycle(t)
		}
	case strings.HasPrefix(rg.Name, "stop-the-world ("):
		if begin {
			if c.stw != noName {
				return // pauses do not nest; keep the open one
			}
			if strings.HasPrefix(rg.Name, "stop-the-world (GC sweep termination") {
				c.beginCycle(t)
			}
			c.stw = c.name(STWPrefix, strings.TrimSuffix(strings.TrimPrefix(rg.Name, "stop-the-world ("), ")"))
			c.Stats.Intervals++
			c.sink.Enter(GCTrack, c.stw, t)
			return
		}
		if c.stw == noName {
			return // begun before the trace
		}
		c.sink.Leave(GCTrack, c.stw, t)
		c.stw = noName
		if c.cycle && c.marked {
			c.endCycle(t)
		}
	case rg.Name == "GC mark assist":
		if rg.Scope.Kind != xt.ResourceGoroutine {
			return
		}
		h := c.holders[rg.Scope.Goroutine()]
		if h == nil {
			return
		}
		if begin {
			c.push(h, kindAssist, c.assist, t)
		} else {
			c.popTo(h, kindAssist, t)
		}
	}
}

func (c *Converter) beginCycle(t int64) {
	if c.cycle {
		return
	}
	if c.stw != noName {
		// The pause began before the cycle was known: the cycle begins
		// with it, so close it and open both again in order.
		c.sink.Leave(GCTrack, c.stw, t)
		c.cycle = true
		c.Stats.Intervals++
		c.sink.Enter(GCTrack, c.gc, t)
		c.sink.Enter(GCTrack, c.stw, t)
		return
	}
	c.cycle = true
	c.Stats.Intervals++
	c.sink.Enter(GCTrack, c.gc, t)
}

func (c *Converter) endCycle(t int64) {
	if !c.cycle {
		return
	}
	c.sink.Leave(GCTrack, c.gc, t)
	c.cycle, c.marked = false, false
}

// name returns the name prefix+reason, made once per reason so that the
// common case allocates nothing.
func (c *Converter) name(prefix, reason string) Name {
	key := nameKey{prefix, reason}
	if n, ok := c.byName[key]; ok {
		return n
	}
	n := Name(len(c.names))
	c.names = append(c.names, prefix+reason)
	c.byName[key] = n
	return n
}

type nameKey struct{ prefix, reason string }

func (c *Converter) push(h *holder, k kind, name Name, t int64) {
	h.stack = append(h.stack, open{k, name})
	c.Stats.Intervals++
	c.sink.Enter(h.lane, name, t)
}

// popTo leaves the innermost open interval of kind k and everything
// opened inside it; if none is open, nothing.
func (c *Converter) popTo(h *holder, k kind, t int64) {
	for i := len(h.stack) - 1; i >= 0; i-- {
		if h.stack[i].kind != k {
			continue
		}
		for j := len(h.stack) - 1; j >= i; j-- {
			c.sink.Leave(h.lane, h.stack[j].name, t)
		}
		h.stack = h.stack[:i]
		return
	}
}

func (c *Converter) popAll(h *holder, t int64) {
	for j := len(h.stack) - 1; j >= 0; j-- {
		c.sink.Leave(h.lane, h.stack[j].name, t)
	}
	h.stack = h.stack[:0]
}
