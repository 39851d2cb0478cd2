package measure

import (
	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// UsageErrors counts misuse of the probes: mismatched or missing leaves,
// unknown regions, probes after Close. None of it corrupts the trace.
type UsageErrors = tracefile.UsageErrors

// Stats is what the measurement recorded and what the buffer did with it.
// Recorded = Kept + FilteredName + FilteredDuration + the sum of Removed,
// for every location and in total.
type Stats struct {
	Recorded         uint64                    // events the probes accepted
	Kept             uint64                    // events in the buffer (in the trace)
	FilteredName     uint64                    // events of regions the filter file excludes
	FilteredDuration uint64                    // events of calls shorter than MinDuration
	Removed          [buffer.NumReasons]uint64 // events removed, by reason
	Depths           []DepthStats              // by calling depth
	Reductions       []buffer.Reduction
	Usage            UsageErrors
	// SharedLane counts the probes that found another goroutine inside a
	// probe of the same location, and were not recorded: a usage error,
	// the sharing of one Location by two goroutines at once (lane.go).
	SharedLane uint64
	BytesUsed  int64 // bytes of encoded events kept
	Bins       int   // bins in the buffer
	BinsPeak   int   // most bins in use at once
	Locations  []LocationStats
}

// Dropped returns the events removed for any reason.
func (s *Stats) Dropped() uint64 {
	var n uint64
	for _, v := range s.Removed {
		n += v
	}
	return n
}

// DepthStats is what happened at one calling depth, all locations and
// classes together.
type DepthStats struct {
	Depth   int
	Kept    uint64
	Removed [buffer.NumReasons]uint64
	Closed  bool // closed by the depth policy
}

// LocationStats is one location's share.
type LocationStats struct {
	Name             string
	Recorded         uint64
	Kept             uint64
	FilteredName     uint64
	FilteredDuration uint64
	Removed          [buffer.NumReasons]uint64
	Usage            UsageErrors
	SharedLane       uint64 // as Stats.SharedLane
}

// Stats reports the measurement's statistics. They are exact after Close.
// Before, they cover the probes' counters and the filled bins, and must not
// be read while probes run.
func (m *Measurement) Stats() Stats {
	var s Stats
	if !m.Enabled() {
		return s
	}
	t := m.snapshot()
	s.Reductions = m.pool.Reductions()
	s.Bins = m.pool.Bins()
	_, s.BinsPeak = m.pool.Usage()
	tot := t.Totals()
	s.Recorded, s.Kept = tot.Recorded, tot.Kept
	s.FilteredName, s.FilteredDuration = tot.FilteredName, tot.FilteredDuration
	s.Removed, s.Usage = tot.Removed, tot.Usage
	s.Usage.AfterClose += m.late.Load() // StartRegions that found no lane (lane.go)
	for _, d := range tot.Depths {      // dense here: index = depth
		for d.Depth >= len(s.Depths) {
			s.Depths = append(s.Depths, DepthStats{Depth: len(s.Depths)})
		}
		s.Depths[d.Depth] = DepthStats{Depth: d.Depth, Kept: d.Kept, Removed: d.Removed, Closed: d.Closed}
	}
	for _, l := range t.Locations {
		s.Locations = append(s.Locations, LocationStats{Name: l.Name, Recorded: l.Recorded, Kept: l.Kept(), Usage: l.Usage,
			FilteredName: l.FilteredName, FilteredDuration: l.FilteredDuration, Removed: l.Removed()})
	}
	m.mu.Lock()
	locs := append([]*Location(nil), m.locations...)
	m.mu.Unlock()
	for i, l := range locs {
		if n := l.lane.shared.Load(); n > 0 {
			s.SharedLane += n
			if i < len(s.Locations) {
				s.Locations[i].SharedLane = n
			}
		}
		l.h.Levels(func(lv *buffer.Level) {
			lv.Bins(func(data []byte, _ uint32) { s.BytesUsed += int64(len(data)) })
		})
	}
	return s
}
