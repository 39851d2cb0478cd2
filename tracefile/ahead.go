package tracefile

// Reading ahead: the tools give a location a second core when there are
// more workers than locations (an MPI trace of a few ranks), by decoding
// and merging its level streams on one goroutine while the tool works on
// the events already merged on another. The events are handed over in
// batches, through a fixed number of them, so memory stays bounded.

// aheadBatch is the number of events handed over at once; aheadBatches
// how many batches exist: one being filled, one being read, one waiting.
const (
	aheadBatch   = 4096
	aheadBatches = 3
)

// batch is a run of events with the metric values they point into.
type batch struct {
	events []Event
	values []uint64
}

// ahead is the state of an Events that reads ahead.
type ahead struct {
	full  chan *batch   // merged, in order; closed at the end
	free  chan *batch   // read, to be filled again
	quit  chan struct{} // closed by Close: the reader stops
	cur   *batch
	pos   int
	err   error // the reader's error, set before full is closed
	close bool  // quit is closed
}

// EventsAhead is Events, but the location's level streams are decoded and
// merged on a goroutine of their own, ahead of the caller, in batches of
// events (at most about 2 MB of them). The events and the error are
// those of Events. Close must be called when the caller stops before the
// end, so that the goroutine ends; calling it after the end does no harm.
func (f *File) EventsAhead(id uint32) *Events {
	inner := f.Events(id)
	if inner.err != nil {
		return inner
	}
	a := &ahead{full: make(chan *batch, aheadBatches), free: make(chan *batch, aheadBatches), quit: make(chan struct{})}
	for i := 0; i < aheadBatches; i++ {
		a.free <- &batch{events: make([]Event, 0, aheadBatch)}
	}
	go a.read(inner)
	return &Events{f: f, loc: inner.loc, ahead: a}
}

// read merges the events into batches until the end, an error or quit.
func (a *ahead) read(it *Events) {
	defer close(a.full)
	for {
		var b *batch
		select {
		case <-a.quit:
			return
		default:
		}
		select {
		case b = <-a.free:
		case <-a.quit:
			return
		}
		b.events, b.values = b.events[:0], b.values[:0]
		var e Event
		for len(b.events) < aheadBatch && it.Next(&e) {
			if e.Values != nil {
				// The values stay valid while the batch is read: they
				// are copied into the batch (fixValues points to them).
				start := len(b.values)
				b.values = append(b.values, e.Values...)
				e.Values = b.values[start:]
			}
			b.events = append(b.events, e)
		}
		fixValues(b)
		end := len(b.events) < aheadBatch
		if end {
			a.err = it.Err()
		}
		if len(b.events) > 0 || end {
			select {
			case a.full <- b:
			case <-a.quit:
				return
			}
		}
		if end {
			return
		}
	}
}

// fixValues points the events' values into the batch's final array: an
// append that grew it left the earlier events pointing into an old one.
func fixValues(b *batch) {
	at := 0
	for i := range b.events {
		if n := len(b.events[i].Values); n > 0 {
			b.events[i].Values = b.values[at : at+n : at+n]
			at += n
		}
	}
}

// next stores the next event in e.
func (a *ahead) next(it *Events, e *Event) bool {
	for a.cur == nil || a.pos == len(a.cur.events) {
		if a.cur != nil {
			a.free <- a.cur
			a.cur = nil
		}
		b, ok := <-a.full
		if !ok {
			// The reader set err before it closed full.
			it.err = a.err
			return false
		}
		a.cur, a.pos = b, 0
	}
	*e = a.cur.events[a.pos]
	a.pos++
	return true
}

// Close ends the reading ahead of an Events from EventsAhead; for one from
// Events it does nothing.
func (it *Events) Close() {
	if a := it.ahead; a != nil && !a.close {
		a.close = true
		close(a.quit)
		// Wait for the reader to stop, so that it reads no more of the
		// file after Close.
		for range a.full {
		}
	}
}

// EventsWith is EventsAhead if ahead is set, else Events.
func (f *File) EventsWith(id uint32, ahead bool) *Events {
	if ahead {
		return f.EventsAhead(id)
	}
	return f.Events(id)
}
