package variation

import (
	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Scanner finds the segments of one location as its events stream by, in
// the order the location recorded them: give it every event with Event,
// then call Finish.
type Scanner struct {
	f      *tracefile.File
	loc    *tracefile.Location
	offset int64
	emit   func(Segment)
	row    Row
	rowAt  int // index of the row among the analysis' rows
	isSeg  []bool
	isSync []bool
	isTask []bool
	// between cuts the segments from one call of the segment region (a
	// collective) to the next, the call's time as synchronization.
	between bool

	inSeg, truncated bool
	segDepth         int // depth of the open segment
	open             []scanMark
	segStart, syncAt int64
	syncNs           int64
	index            int
}

// scanMark is a sync or task region open in the segment: time is
// synchronization while the innermost of them is a sync region, so that a
// task run inside a barrier or taskwait counts as work.
type scanMark struct {
	depth int
	sync  bool
}

// NewScanner returns a Scanner of the location ref of file f, row row of
// the analysis, that passes each segment to emit as it ends. The row's
// invocations and synchronization calls are those of the location's exact
// flat profile.
func (p *Plan) NewScanner(f *tracefile.File, ref LocationRef, row int, emit func(Segment)) *Scanner {
	n := len(f.Regions) + 1
	s := &Scanner{f: f, loc: ref.Location, offset: ref.Offset, emit: emit, rowAt: row,
		isSeg: make([]bool, n), isSync: make([]bool, n), isTask: make([]bool, n), between: p.Between}
	sync := p.matcher()
	for _, r := range f.Regions {
		if int(r.ID) < n {
			s.isSeg[r.ID] = r.Name == p.Region
			s.isSync[r.ID] = (!s.isSeg[r.ID] || p.Between) && sync.Match(r.Name)
			s.isTask[r.ID] = !s.isSeg[r.ID] && !s.isSync[r.ID] && analysis.IsTaskRun(r.Name)
		}
	}
	s.row = Row{Label: ref.Label, File: ref.File, Location: ref.Location.ID}
	for _, pr := range ref.Location.Profile {
		switch {
		case flagged(s.isSeg, pr.Region):
			s.row.Invocations += pr.Visits
		case flagged(s.isSync, pr.Region):
			s.row.SyncCalls += pr.Visits
		}
	}
	return s
}

func flagged(set []bool, id uint32) bool { return int(id) < len(set) && set[id] }

func (s *Scanner) waiting() bool { return len(s.open) > 0 && s.open[len(s.open)-1].sync }

// Event takes the location's next event.
func (s *Scanner) Event(e *tracefile.Event) {
	switch e.Kind {
	case encode.KindEnter:
		if flagged(s.isSync, e.Region) && !e.Truncated {
			s.row.SyncKept++
		}
		switch {
		case s.between && flagged(s.isSeg, e.Region):
			now := s.f.Nanos(e.Time)
			if s.inSeg {
				if s.waiting() {
					s.syncNs += now - s.syncAt
				}
				s.end(now)
			}
			s.inSeg, s.truncated, s.segDepth = true, e.Truncated, e.Depth
			s.segStart, s.syncNs, s.open = now, 0, s.open[:0]
			s.open = append(s.open, scanMark{depth: e.Depth, sync: true})
			s.syncAt = now
		case s.inSeg && flagged(s.isSeg, e.Region):
			s.row.Recursive++
		case !s.inSeg && flagged(s.isSeg, e.Region):
			s.inSeg, s.truncated, s.segDepth = true, e.Truncated, e.Depth
			s.segStart, s.syncNs, s.open = s.f.Nanos(e.Time), 0, s.open[:0]
		case s.inSeg && (flagged(s.isSync, e.Region) || flagged(s.isTask, e.Region)):
			now := s.f.Nanos(e.Time)
			if s.waiting() {
				s.syncNs += now - s.syncAt
			}
			s.open = append(s.open, scanMark{depth: e.Depth, sync: flagged(s.isSync, e.Region)})
			s.syncAt = now
		}
	case encode.KindLeave:
		if !s.inSeg {
			return
		}
		now := s.f.Nanos(e.Time)
		// A leave the buffer shed inside would leave a mark open: a
		// leave at or above a mark's depth closes it.
		for n := len(s.open); n > 0 && e.Depth <= s.open[n-1].depth; n-- {
			if s.waiting() {
				s.syncNs += now - s.syncAt
			}
			s.open = s.open[:n-1]
			s.syncAt = now
		}
		if s.between {
			// Leaving the code that calls the collective ends the
			// iterations: what follows the last call is no segment.
			if e.Depth < s.segDepth {
				s.inSeg = false
			}
			return
		}
		if e.Depth != s.segDepth {
			return
		}
		s.end(now)
	}
}

// end ends the open segment at now and emits it.
func (s *Scanner) end(now int64) {
	s.inSeg = false
	if s.truncated {
		s.row.Truncated++
		s.index++
		return
	}
	dur := now - s.segStart
	s.row.Segments++
	s.emit(Segment{Row: s.rowAt, Index: s.index, Start: s.offset + s.segStart, Duration: dur, Sync: s.syncNs, SOS: dur - s.syncNs})
	s.index++
}

// Finish returns the location's row, its Median not yet set (see Score),
// and the number to add to the Index of every segment emitted: when the
// keep-last policy lost the oldest invocations, the kept ones are numbered
// as the last of all that were made.
func (s *Scanner) Finish() (row Row, shift int) {
	kept := uint64(s.row.Segments + s.row.Truncated + s.row.Recursive)
	if s.between && s.row.Invocations > 0 {
		kept++ // the last call opens no segment
	}
	if s.loc.Windowed && s.row.Invocations > kept {
		shift = int(s.row.Invocations - kept)
	}
	return s.row, shift
}
