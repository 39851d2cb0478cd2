package pprof

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// node is a call path: the path of its parent plus one function. It sums
// what happened in the innermost frame of the path over every location.
type node struct {
	fn       int // index into builder.funcs (the walker's functions until numbered)
	parent   *node
	children map[int]*node
	calls    uint64
	ns       int64    // exclusive time over the finished locations
	counts   []uint64 // exclusive counts, by profile counter; nil if none

	// ticks is the exclusive time of the current location in clock ticks,
	// converted to nanoseconds once per location as the flat profile is,
	// so that rounding does not add up over calls.
	ticks uint64
	gen   int // set when ticks was first added to, for the walker's touched list
}

func (n *node) child(fn int) *node {
	c := n.children[fn]
	if c == nil {
		if n.children == nil {
			n.children = map[int]*node{}
		}
		c = &node{fn: fn, parent: n}
		n.children[fn] = c
	}
	return c
}

// frame is an open call of the location being walked.
type frame struct {
	node  *node
	enter uint64 // reduced ticks
	child uint64 // reduced ticks spent in the calls it made

	// Counters: counted is set when a metric record followed the enter;
	// start holds its values, childCounts what the counted calls inside
	// it counted (the measurement's own rule for exclusive counts).
	counted     bool
	start       []uint64
	childCounts []uint64
}

// walker holds the state of one location's walk.
type walker struct {
	f        *tracefile.File
	u        *tracefile.Unified // the run's regions; f is its fi-th file
	fi       int
	cmap     []int // the file's counter index -> profile counter index
	counters int   // the profile's counters
	frames   []frame
	depth    int
	shift    uint8
	fnOf     map[uint32]int // the file's region id -> the walk's function index
	funcs    []localFunc    // the walk's functions, in the order of their first call
	funcIdx  map[funcKey]int
	touched  []*node // nodes with ticks
	gen      int
	root     *root // the call tree of the location
	ahead    bool  // read the events on a goroutine of their own
}

// root is the call tree of one location, whose samples carry its labels:
// pprof merges equal call paths of several locations when it shows them,
// and `-tagfocus rank=2` or `-tagfocus location=thread 1` picks them apart.
type root struct {
	node
	rank     int
	location string // the location's name: "main", "thread 1", "rank 3"
	host     string
}

// location adds the call paths of location l to the tree. Regions still
// open at the end are left at the location's last event.
func (w *walker) location(l *tracefile.Location) error {
	w.depth = 0
	var e tracefile.Event
	var last uint64
	// pending is set after a leave: its frame, frames[depth], waits for the
	// metric record that may follow it. entered is set after an enter.
	pending, entered := false, false
	it := w.f.EventsWith(l.ID, w.ahead)
	defer it.Close()
	for it.Next(&e) {
		last = e.Time
		if pending && (e.Kind != encode.KindMetric || e.Depth != w.depth+1) {
			w.finish(nil)
			pending = false
		}
		switch e.Kind {
		case encode.KindEnter:
			w.enter(&e)
		case encode.KindLeave:
			if w.depth == 0 {
				return fmt.Errorf("%s: location %q: leave at time %d with no region open", w.f.Path, l.Name, e.Time)
			}
			w.leave(e.Time)
			pending = true
		case encode.KindMetric:
			if n := len(w.cmap); len(e.Values) != n {
				return fmt.Errorf("%s: location %q: metric record at time %d with %d values, the header names %d counters",
					w.f.Path, l.Name, e.Time, len(e.Values), n)
			}
			switch {
			case pending:
				w.finish(e.Values)
				pending = false
			case entered && e.Depth == w.depth:
				fr := &w.frames[w.depth-1]
				fr.counted = true
				fr.start = append(fr.start[:0], e.Values...)
			}
		}
		entered = e.Kind == encode.KindEnter
	}
	if err := it.Err(); err != nil {
		return err
	}
	if pending {
		w.finish(nil)
	}
	for w.depth > 0 {
		w.leave(last)
		w.finish(nil)
	}
	return nil
}

func (w *walker) enter(e *tracefile.Event) {
	parent := &w.root.node
	if w.depth > 0 {
		parent = w.frames[w.depth-1].node
	}
	n := parent.child(w.function(e.Region))
	// A truncated enter opens a call that began before the keep-last
	// window: its time counts from the window start, its call does not.
	if !e.Truncated {
		n.calls++
	}
	if w.depth == len(w.frames) {
		w.frames = append(w.frames, frame{})
	}
	fr := &w.frames[w.depth]
	fr.node, fr.enter, fr.child, fr.counted = n, e.Time, 0, false
	if cap(fr.childCounts) < len(w.cmap) {
		fr.childCounts = make([]uint64, len(w.cmap))
	}
	fr.childCounts = fr.childCounts[:len(w.cmap)]
	clear(fr.childCounts)
	w.depth++
}

// leave closes the innermost frame at time t and books its exclusive time;
// its counters wait for finish.
func (w *walker) leave(t uint64) {
	w.depth--
	fr := &w.frames[w.depth]
	dur := t - min(t, fr.enter)
	if w.depth > 0 {
		w.frames[w.depth-1].child += dur
	}
	excl := dur - min(dur, fr.child)
	n := fr.node
	if n.gen != w.gen {
		n.gen = w.gen
		w.touched = append(w.touched, n)
	}
	n.ticks += excl << w.shift
}

// finish books the counters of the frame just left, frames[depth], given
// the values read at its leave (nil if none were).
func (w *walker) finish(end []uint64) {
	fr := &w.frames[w.depth]
	if !fr.counted {
		return
	}
	var up []uint64 // the enclosing counted frame's child counts
	for d := w.depth - 1; d >= 0; d-- {
		if w.frames[d].counted {
			up = w.frames[d].childCounts
			break
		}
	}
	if end == nil {
		// Counted at the enter only (the leave's record was removed):
		// what the calls inside counted goes to the enclosing count.
		for k, v := range fr.childCounts {
			if up != nil {
				up[k] += v
			}
		}
		return
	}
	n := fr.node
	if n.counts == nil {
		n.counts = make([]uint64, w.counters)
	}
	for k, v := range end {
		delta := v - min(v, fr.start[k])
		n.counts[w.cmap[k]] += delta - min(delta, fr.childCounts[k])
		if up != nil {
			up[k] += delta
		}
	}
}

// flush converts the location's exclusive ticks to nanoseconds.
func (w *walker) flush() {
	for _, n := range w.touched {
		n.ns += w.f.TicksToNanos(n.ticks)
		n.ticks = 0
	}
	w.touched = w.touched[:0]
	w.gen++
}
