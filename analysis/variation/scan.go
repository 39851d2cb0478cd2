package variation

import (
	"math"

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
	// follow, when not nil, cuts this location at the calls of its rank's
	// master thread (Plan.ByRank): the segments start at their enters,
	// and the time this location is in no region is synchronization (see
	// idle).
	follow *rankCut
	next   int   // follow's next call to cut at
	cur    int   // follow's call that opened the segment
	depth  int   // regions open on this location
	idleAt int64 // when it last had none open

	inSeg, truncated bool
	segDepth         int // depth of the open segment
	// Between calls of the collective, each gap from one call to the
	// next is a candidate (gaps), the shallowest depth the location
	// returned to in it (low) with it; Finish keeps those of the loop.
	low              int
	gaps             []gap
	open             []scanMark
	segStart, syncAt int64
	syncNs           int64
	index            int
}

// gap is a candidate segment between two calls of the collective: the
// segment, whether the call that opened it was truncated, and the
// shallowest depth the location returned to between the calls.
type gap struct {
	seg       Segment
	truncated bool
	low       int
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
	s.row = Row{Label: ref.Label, File: ref.File, Location: ref.Location.ID, Resolution: f.Resolution()}
	for _, pr := range ref.Location.Profile {
		switch {
		case flagged(s.isSeg, pr.Region):
			s.row.Invocations += pr.Visits
		case flagged(s.isSync, pr.Region):
			s.row.SyncCalls += pr.Visits
		}
	}
	if p.ByRank && s.row.Invocations == 0 {
		// A thread other than the master: cut at the master's calls,
		// read from the same file. Without them (the master's events
		// unreadable, which its own scan reports) it has no segment.
		if c := p.cuts.of(f, p.Region); c != nil {
			s.follow, s.row.Invocations = c, c.visits
		}
	}
	return s
}

func flagged(set []bool, id uint32) bool { return int(id) < len(set) && set[id] }

func (s *Scanner) waiting() bool { return len(s.open) > 0 && s.open[len(s.open)-1].sync }

// Event takes the location's next event.
func (s *Scanner) Event(e *tracefile.Event) {
	if s.follow != nil {
		s.followEvent(e)
		return
	}
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
				s.gaps = append(s.gaps, gap{seg: s.segment(now), truncated: s.truncated, low: s.low})
			} else {
				s.row.Starts++
			}
			s.inSeg, s.truncated, s.segDepth, s.low = true, e.Truncated, e.Depth, e.Depth-1
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
			s.low = min(s.low, e.Depth-1)
			return
		}
		if e.Depth != s.segDepth {
			return
		}
		s.end(now)
	}
}

// followEvent takes the next event of a location cut at its master's
// calls: the cuts up to its time first, then the synchronization regions
// it enters and leaves.
func (s *Scanner) followEvent(e *tracefile.Event) {
	if e.Kind != encode.KindEnter && e.Kind != encode.KindLeave {
		return
	}
	now := s.f.Nanos(e.Time)
	s.cutTo(now)
	s.idle(now)
	switch e.Kind {
	case encode.KindEnter:
		if flagged(s.isSync, e.Region) && !e.Truncated {
			s.row.SyncKept++
		}
		s.depth = e.Depth
		// Marks are kept outside the segments too: a barrier a cut
		// falls in is synchronization on both sides of it.
		if flagged(s.isSync, e.Region) || flagged(s.isTask, e.Region) {
			if s.waiting() && s.inSeg {
				s.syncNs += now - s.syncAt
			}
			s.open = append(s.open, scanMark{depth: e.Depth, sync: flagged(s.isSync, e.Region)})
			s.syncAt = now
		}
	case encode.KindLeave:
		s.depth = e.Depth - 1
		for n := len(s.open); n > 0 && e.Depth <= s.open[n-1].depth; n-- {
			if s.waiting() && s.inSeg {
				s.syncNs += now - s.syncAt
			}
			s.open = s.open[:n-1]
			s.syncAt = now
		}
	}
}

// cutTo takes the master's calls and ends of the iterations up to now:
// each call ends the open segment and opens the next.
func (s *Scanner) cutTo(now int64) {
	calls := s.follow.calls
	for {
		if s.inSeg && calls[s.cur].stop >= 0 && calls[s.cur].stop <= now &&
			(s.next == len(calls) || calls[s.cur].stop < calls[s.next].enter) {
			// The master left the code that calls the collective: what
			// follows is no segment.
			s.idle(calls[s.cur].stop)
			s.inSeg = false
			continue
		}
		if s.next == len(calls) || calls[s.next].enter > now {
			return
		}
		at := calls[s.next].enter
		s.idle(at)
		if s.inSeg {
			if s.waiting() {
				s.syncNs += at - s.syncAt
			}
			s.end(at)
		} else {
			s.row.Starts++
		}
		s.inSeg, s.truncated, s.cur = true, calls[s.next].truncated, s.next
		s.segStart, s.syncNs, s.syncAt = at, 0, at
		s.next++
	}
}

// idle adds to the open segment's synchronization the time up to now
// that the location spent in no region: a thread of a rank whose master
// calls the collective runs the program's code only in the constructs it
// is given (an OpenMP worker's parallel regions); outside them it waits
// in the runtime for its master's serial code and MPI calls.
func (s *Scanner) idle(now int64) {
	if s.depth == 0 && s.inSeg && now > s.idleAt {
		s.syncNs += now - max(s.idleAt, s.segStart)
	}
	s.idleAt = now
}

// end ends the open segment at now and emits it.
func (s *Scanner) end(now int64) {
	s.inSeg = false
	s.record(s.segment(now), s.truncated)
}

// segment returns the open segment as it ends at now, its Index not set.
func (s *Scanner) segment(now int64) Segment {
	dur := now - s.segStart
	return Segment{Row: s.rowAt, Start: s.offset + s.segStart, Duration: dur, Sync: s.syncNs, SOS: dur - s.syncNs}
}

// record counts seg, the next invocation's, and emits it unless the call
// that opened it was truncated.
func (s *Scanner) record(seg Segment, truncated bool) {
	if truncated {
		s.row.Truncated++
	} else {
		seg.Index = s.index
		s.row.Segments++
		s.emit(seg)
	}
	s.index++
}

// Finish returns the location's row, its Median not yet set (see Score),
// and the number to add to the Index of every segment emitted: when the
// keep-last policy lost the oldest invocations, the kept ones are numbered
// as the last of all that were made.
func (s *Scanner) Finish() (row Row, shift int) {
	if s.between && s.follow == nil {
		s.keepLoopGaps()
	}
	if s.follow != nil {
		// The master's calls after this location's last event still
		// end its segments: a worker thread's last event is its last
		// parallel loop's, before the last collective.
		s.cutTo(math.MaxInt64)
	}
	kept := s.row.kept(s.between)
	if s.loc.Windowed && s.row.Invocations > kept {
		shift = int(s.row.Invocations - kept)
	}
	return s.row, shift
}

// keepLoopGaps emits the gaps between calls of the collective that are
// iterations of the loop that calls it. The loop's depth is the one the
// location most often returns to between two calls (the deeper of equal
// counts): a wrapper of the collective (a dot product's sum, a timer's
// barrier two functions down, or several functions each calling it)
// returns above the call every iteration, to the same depth. A gap that
// returns above the loop's depth left the code that runs it (a later
// phase): the iterations end there and begin again at the next call,
// which ends no segment (Row.Starts).
func (s *Scanner) keepLoopGaps() {
	loop := loopDepth(len(s.gaps), func(i int) int { return s.gaps[i].low })
	for _, g := range s.gaps {
		if g.low < loop {
			s.row.Starts++
		} else {
			s.record(g.seg, g.truncated)
		}
	}
	s.gaps = nil
}

// loopDepth returns the most frequent of the n depths low(i), the deeper
// of equal counts; 0 if n is 0.
func loopDepth(n int, low func(int) int) int {
	counts := map[int]int{}
	best, most := 0, 0
	for i := range n {
		d := low(i)
		counts[d]++
		if c := counts[d]; c > most || c == most && d > best {
			best, most = d, c
		}
	}
	return best
}
