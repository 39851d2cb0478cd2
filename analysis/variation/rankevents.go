package variation

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// RankEvents are the enter and leave events of one rank's locations,
// decoded once at the collective end of an MPI run for both passes that
// read them: the Choice (RankEvents.Choice) and, after the root chose, the
// Segments (Cut.Segments). Merging a location's level streams costs more
// per event than either pass's own work on it, so the second pass reads
// the events from memory. Only what the passes read is kept:
// RankEventBytes per event.
type RankEvents struct {
	f    *tracefile.File
	locs [][]rankEvent // by location index
}

// rankEvent is an enter or leave, as the passes read it.
type rankEvent struct {
	time      uint64
	region    uint32
	depth     int32
	kind      encode.Kind
	truncated bool
}

// RankEventBytes is the memory one event of RankEvents takes.
const RankEventBytes = 24

// ReadRankEvents decodes the enter and leave events of the locations of f,
// a rank's trace, when they fit in limit bytes; nil, and no error, when
// they do not: then the passes read f themselves (LocalChoice, Cut.Local).
func ReadRankEvents(f *tracefile.File, limit int64) (*RankEvents, error) {
	max := limit / RankEventBytes
	var kept uint64
	for i := range f.Locations {
		kept += f.Locations[i].Kept()
	}
	if max <= 0 || kept > uint64(max) {
		return nil, nil
	}
	r := &RankEvents{f: f, locs: make([][]rankEvent, len(f.Locations))}
	var n int64
	for i := range f.Locations {
		l := &f.Locations[i]
		evs := make([]rankEvent, 0, l.Kept())
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			if e.Kind != encode.KindEnter && e.Kind != encode.KindLeave {
				continue
			}
			// The statistics bound the events; a trace without them
			// is bounded as it is read.
			if n++; n > max {
				return nil, nil
			}
			evs = append(evs, rankEvent{time: e.Time, region: e.Region, depth: int32(e.Depth), kind: e.Kind, truncated: e.Truncated})
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("variation: rank %d: %w", f.Header.Rank, err)
		}
		r.locs[i] = evs
	}
	return r, nil
}

// File returns the trace the events were read from.
func (r *RankEvents) File() *tracefile.File { return r.f }

// Choice returns LocalChoice of the rank, from its events in memory.
func (r *RankEvents) Choice() (*Choice, error) {
	return localChoice(r.f, r.open)
}

// Segments returns Cut.Local of the rank whose events r holds, from them.
func (c *Cut) Segments(r *RankEvents) (*Segments, error) {
	return c.local(r.f, r.open)
}

func (r *RankEvents) open(_ *tracefile.File, loc int, _ bool) eventSource {
	return &memoryEvents{evs: r.locs[loc]}
}

// memoryEvents reads a location's events from RankEvents. It sets only
// the fields the passes read: Kind, Time, Region, Depth and Truncated.
type memoryEvents struct {
	evs []rankEvent
	i   int
}

func (m *memoryEvents) Next(e *tracefile.Event) bool {
	if m.i >= len(m.evs) {
		return false
	}
	r := &m.evs[m.i]
	m.i++
	e.Kind, e.Time, e.Region, e.Depth, e.Truncated = r.kind, r.time, r.region, int(r.depth), r.truncated
	return true
}

func (m *memoryEvents) Err() error { return nil }

func (m *memoryEvents) Close() {}
