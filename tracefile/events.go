package tracefile

import (
	"errors"
	"fmt"

	"github.com/hmbtrace/hmbtrace/encode"
)

// Event is one event of a location, as the reader rebuilds it.
type Event struct {
	Kind  encode.Kind
	Time  uint64 // reduced ticks; Trace.Nanos converts
	Seq   uint32 // position among the location's events at the same Time
	Depth int    // calling depth: 1 for a top-level region
	Class Class
	// Region is the region entered or left; for messages and collectives,
	// the region open at their depth (0 at depth 0); for metrics, the
	// region of the enter or leave they follow; for KindCollComplete, the
	// region of the call that started the operation (MPI_Iallreduce, ...).
	Region uint32

	Peer     uint64 // messages: location id, or world rank if PeerRank
	PeerRank bool
	Tag      uint32
	Bytes    uint64 // messages and collectives (a collective's bytes sent)
	Root     int64  // collectives: the root rank, -1 if none
	Comm     uint32 // messages and collectives: Trace.Comms id, 0 if none given
	Request  uint64 // non-blocking operations
	Received uint64 // collectives: bytes received
	Task     uint64 // task records: the task (0 in a switch: the implicit task)

	// One-sided communication (the encode.KindRma* kinds): as in
	// encode.Record. Win is an id of Trace.Wins, Group of Trace.RmaGroups.
	Win    uint32
	Remote int64
	Aux    uint32
	Level  uint32
	Group  uint32

	// Annotations (encode.KindMark, KindParamInt, KindParamString,
	// KindChanSend, KindChanRecv): as in encode.Record. Key is an id of
	// Trace.Annotations' marks, parameters or channels; a string
	// parameter's Value an id of its Strings; a channel receive's Peer the
	// sending location.
	Key   uint32
	Value int64
	Token uint64

	Values []uint64 // metrics; valid until the next call of Next

	// Truncated marks an enter at the start of the window the keep-last
	// policy kept: the region was entered before, and Time is the window's
	// start. It is not a recorded event but the context of those after it.
	Truncated bool
}

// Events iterates over one location's events in recorded order: the k-way
// merge of its level streams by (Time, Seq). It checks that the merged
// sequence nests properly and fails with an error naming the offending
// event otherwise.
type Events struct {
	f      *File
	loc    *Location
	heap   []*stream
	stack  []openCall // the open regions known, outermost first
	left   uint32     // the region left last, which a metric record may follow
	values []uint64
	queue  []Event // truncated enters at a window start, emitted first
	err    error
	ahead  *ahead // set by EventsAhead: the events come from its reader
}

// openCall is a region open at a depth. The depths between two of them
// (and above the first) are ancestors whose levels were removed: they are
// not stored, so that an event at calling depth 10^9 below removed
// ancestors costs what one at depth 1 does.
type openCall struct {
	depth  int
	region uint32
}

type stream struct {
	lv   *levelRef
	next int // index of the next bin to load
	buf  []byte
	dec  *encode.Decoder
	off  int64 // file offset of the loaded bin's data
	seen uint32
	want uint32
	head encode.Record
	// The least key (time, seq) the level's next record may have: a
	// level's records are in recorded order, so the keys grow. It is
	// (0, 0) at first and then the previous record's, seq plus one.
	minTime, minSeq uint64
}

// Events returns an iterator over the events of location id.
func (f *File) Events(id uint32) *Events {
	it := &Events{f: f, loc: f.Location(id)}
	if it.loc == nil {
		it.err = fmt.Errorf("tracefile: no location %d", id)
		return it
	}
	for _, lv := range f.levels[id] {
		s := &stream{lv: lv, dec: encode.NewDecoder(f.Header.Techniques)}
		ok, err := s.advance(f)
		if err != nil {
			it.err = err
			return it
		}
		if ok {
			it.push(s)
		}
	}
	if it.loc.Windowed {
		it.queue, it.err = it.startWindow()
	}
	return it
}

// advance moves s to its next record, loading bins as needed.
func (s *stream) advance(f *File) (bool, error) {
	for {
		if s.dec.Next(&s.head) {
			if !s.took() {
				return false, s.disorder(f)
			}
			return true, nil
		}
		if err := s.dec.Err(); err != nil {
			var de *encode.Error
			if errors.As(err, &de) {
				return false, &FormatError{Path: f.Path, Offset: s.off + int64(de.Offset), Reason: "bin: " + de.Reason}
			}
			return false, err
		}
		if s.next > 0 && s.seen != s.want {
			return false, &FormatError{Path: f.Path, Offset: s.off, Reason: fmt.Sprintf("bin holds %d records, its header says %d", s.seen, s.want)}
		}
		if s.next >= len(s.lv.bins) {
			return false, nil
		}
		b := s.lv.bins[s.next]
		s.next++
		if cap(s.buf) < b.n {
			s.buf = make([]byte, b.n)
		}
		s.buf = s.buf[:b.n]
		if _, err := f.r.ReadAt(s.buf, b.off); err != nil {
			return false, fmt.Errorf("%s: reading bin at offset %d: %w", f.Path, b.off, err)
		}
		s.off, s.seen, s.want = b.off, 0, b.records
		if err := s.dec.Reset(s.buf); err != nil {
			var de *encode.Error
			if errors.As(err, &de) {
				return false, &FormatError{Path: f.Path, Offset: b.off + int64(de.Offset), Reason: "bin: " + de.Reason}
			}
			return false, err
		}
	}
}

// took counts the record just decoded into s.head and reports whether it
// comes after the level's previous one. It is on every record's path, so
// it is small enough to be inlined and disorder makes the error.
func (s *stream) took() bool {
	s.seen++
	t, seq := s.head.Time, uint64(s.head.Seq)
	if t < s.minTime || t == s.minTime && seq < s.minSeq {
		return false
	}
	s.minTime, s.minSeq = t, seq+1
	return true
}

// disorder is the error of a record that does not come after the level's
// previous one.
func (s *stream) disorder(f *File) error {
	return &FormatError{Path: f.Path, Offset: s.off, Reason: fmt.Sprintf(
		"bin: record %d at time %d seq %d does not come after the level's previous one at time %d seq %d (a duplicated or overlapping bin)",
		s.seen, s.head.Time, s.head.Seq, s.minTime, s.minSeq-1)}
}

func less(a, b *stream) bool {
	if a.head.Time != b.head.Time {
		return a.head.Time < b.head.Time
	}
	return a.head.Seq < b.head.Seq
}

func (it *Events) push(s *stream) {
	it.heap = append(it.heap, s)
	i := len(it.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(it.heap[i], it.heap[p]) {
			break
		}
		it.heap[i], it.heap[p] = it.heap[p], it.heap[i]
		i = p
	}
}

func (it *Events) fix() {
	h := it.heap
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && less(h[l], h[m]) {
			m = l
		}
		if r < len(h) && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Err returns the error that stopped the iteration, if any.
func (it *Events) Err() error { return it.err }

// Depth returns the number of regions open after the last event (not for
// an iterator of EventsAhead, whose stack is its reader's).
func (it *Events) Depth() int {
	if n := len(it.stack); n > 0 {
		return it.stack[n-1].depth
	}
	return 0
}

// Next stores the next event in e and reports whether there was one.
func (it *Events) Next(e *Event) bool {
	if it.err != nil {
		return false
	}
	if it.ahead != nil {
		return it.ahead.next(it, e)
	}
	if len(it.queue) > 0 {
		*e = it.queue[0]
		it.queue = it.queue[1:]
		it.stack = append(it.stack, openCall{e.Depth, e.Region})
		return true
	}
	if len(it.heap) == 0 {
		return false
	}
	s := it.heap[0]
	r := &s.head
	// Field by field, not as one composite literal: Event holds a
	// pointer (Values), so storing a whole one is a typed copy, with write
	// barriers while the collector runs, a third of the reader's time.
	e.Kind, e.Time, e.Seq, e.Depth, e.Class, e.Region = r.Kind, r.Time, r.Seq, s.lv.depth, s.lv.class, 0
	if r.Kind == encode.KindEnter || r.Kind == encode.KindLeave {
		// Nearly every event: the decoder leaves the other fields zero,
		// so storing zeros spares loading them.
		e.Peer, e.PeerRank, e.Tag, e.Bytes, e.Root = 0, false, 0, 0, 0
		e.Comm, e.Request, e.Received, e.Task = 0, 0, 0, 0
		e.Win, e.Remote, e.Aux, e.Level, e.Group = 0, 0, 0, 0, 0
		e.Key, e.Value, e.Token, e.Truncated = 0, 0, 0, false
	} else {
		e.Peer, e.PeerRank, e.Tag, e.Bytes, e.Root = r.Peer, r.PeerRank, r.Tag, r.Bytes, r.Root
		e.Comm, e.Request, e.Received, e.Task = r.Comm, r.Request, r.Received, r.Task
		e.Win, e.Remote, e.Aux, e.Level, e.Group = r.Win, r.Remote, r.Aux, r.Level, r.Group
		e.Key, e.Value, e.Token, e.Truncated = r.Key, r.Value, r.Token, false
	}
	if r.Kind == encode.KindMetric {
		it.values = append(it.values[:0], r.Values...)
		e.Values = it.values
	} else if e.Values != nil {
		e.Values = nil
	}
	// An enter below the top and a leave of the top with a known region
	// above it are nearly every event: nest's checks for them, here
	// without the call; nest takes the rest and makes the errors.
	n, open := len(it.stack), 0
	if n > 0 {
		open = it.stack[n-1].depth
	}
	switch {
	case r.Kind == encode.KindEnter && e.Depth > open:
		e.Region = r.Region
		it.stack = append(it.stack, openCall{e.Depth, r.Region})
	case r.Kind == encode.KindLeave && n > 1 && e.Depth == open && it.stack[n-2].region != 0:
		e.Region = it.stack[n-1].region
		it.left = e.Region
		it.stack = it.stack[:n-1]
	default:
		if err := it.nest(e, r); err != nil {
			it.err = err
			return false
		}
	}
	// The stream's next record, here while it comes from the loaded bin
	// and keeps the level's order; advance loads bins and reports errors.
	ok := true
	if s.dec.Next(r) {
		if !s.took() {
			it.err = s.disorder(it.f)
			return false
		}
	} else {
		// Next reports the end again, so advance starts where it stopped.
		var err error
		if ok, err = s.advance(it.f); err != nil {
			it.err = err
			return false
		}
	}
	if ok {
		it.fix()
	} else {
		last := len(it.heap) - 1
		it.heap[0] = it.heap[last]
		it.heap = it.heap[:last]
		it.fix()
	}
	return true
}

// nest checks e against the open regions and fills in the regions that the
// records leave implicit. The buffer removes whole levels, and the depth
// policy keeps communication (paradigm regions, messages, collectives)
// longer than the calls around it, so an event may sit below ancestors
// that were removed: an enter deeper than one below the top opens the
// depths between as unknown (region 0), and they close with the event's
// own region. What cannot happen still fails: an enter above the top, a
// leave of anything but the top, a message above it. The work per event is
// constant whatever the depth: the removed depths are a gap in the stack.
func (it *Events) nest(e *Event, r *encode.Record) error {
	open := it.Depth()
	var top uint32
	if n := len(it.stack); n > 0 {
		top = it.stack[n-1].region
	}
	switch e.Kind {
	case encode.KindEnter:
		if e.Depth <= open {
			return it.inconsistent(e, open)
		}
		e.Region = r.Region
		it.stack = append(it.stack, openCall{e.Depth, r.Region})
	case encode.KindLeave:
		if e.Depth != open || open == 0 {
			return it.inconsistent(e, open)
		}
		e.Region = top
		it.left = e.Region
		it.pop()
	case encode.KindMetric:
		// Counters read at an enter follow it at its depth; those read at
		// a leave follow it one deeper than what is then open.
		switch {
		case e.Depth == open && open > 0:
			e.Region = top
		case e.Depth > open && it.left != 0:
			e.Region = it.left
		default:
			return it.inconsistent(e, open)
		}
	case encode.KindCollComplete:
		// Its region is the call that started the operation, recorded
		// because the completion happens inside another (MPI_Wait, ...).
		// Like the other records, it may outlive the enters around it.
		if e.Depth < open {
			return it.inconsistent(e, open)
		}
		e.Region = r.Region
	default:
		if e.Depth < open {
			return it.inconsistent(e, open)
		}
		if e.Depth == open && open > 0 {
			e.Region = top
		}
	}
	return nil
}

// pop closes the top region and the removed ancestors right above it: the
// gap up to the next known call, and calls of unknown region (0).
func (it *Events) pop() {
	n := len(it.stack) - 1
	for n > 0 && it.stack[n-1].region == 0 {
		n--
	}
	it.stack = it.stack[:n]
}

func (it *Events) inconsistent(e *Event, open int) error {
	return fmt.Errorf("%s: location %q: %v at depth %d (time %d, seq %d) while %d regions are open: the level streams do not nest",
		it.f.Path, it.loc.Name, e.Kind, e.Depth, e.Time, e.Seq, open)
}
