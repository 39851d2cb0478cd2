package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The variation heat map and the dynamics findings cut every location into
// segments at the invocations of one region (Weber et al.). A run of 10⁸
// events has millions of them, more than a heat map of a thousand pixel
// columns can show or the dynamics need, and package variation holds them
// all (64 bytes each, then copies). The report streams them instead: each
// location's segments are summed into at most a bounded number of groups
// of consecutive invocations, doubling the group's width when the groups
// fill up, so that memory is bounded by locations, not by events. Up to
// that bound a group is one invocation and the analyses are exactly those
// of package variation and package trend.
//
// This file and dominance.go, trenddata.go follow variation.Analyze and
// trend.Analyze step by step; those packages offer no streaming API yet.

// segmentBudget bounds the segment groups over all locations; each
// location gets an equal share, at least minGroupsPerRow.
const (
	segmentBudget   = 1 << 16
	minGroupsPerRow = 256
)

// groupsPerRow is how many segment groups each of n locations keeps.
func groupsPerRow(n int) int {
	return max(segmentBudget/max(n, 1), minGroupsPerRow)
}

// segmentConfig says how one analysis cuts a location into segments.
type segmentConfig struct {
	region string
	sync   analysis.SyncMatcher
}

// segGroup is a group of consecutive segments (invocations) of one
// location: their sums, the first one's index and start, the last one's end.
type segGroup struct {
	index      int   // invocation number of the first, before the window shift
	start, end int64 // ns on the time axis
	dur, sync  int64 // sums over the group, ns
	n          int
}

// segmentScan finds the segments of one location as its events stream by,
// as variation's scan does, and sums them into groups.
type segmentScan struct {
	f      *tracefile.File
	offset int64
	row    variation.Row
	isSeg  []bool
	isSync []bool
	isTask []bool

	inSeg, truncated bool
	segDepth         int
	open             []segMark
	segStart, syncAt int64
	syncNs           int64
	index            int

	width, limit int // invocations per group, groups at most
	groups       []segGroup
}

// segMark is a sync or task region open in the segment: time is
// synchronization while the innermost of them is a sync region, so that a
// task run inside a barrier or taskwait counts as work.
type segMark struct {
	depth int
	sync  bool
}

func newSegmentScan(cfg segmentConfig, f *tracefile.File, fi int, loc *tracefile.Location, label string, offset int64, limit int) *segmentScan {
	s := &segmentScan{f: f, offset: offset, width: 1, limit: max(limit, 2),
		isSeg: make([]bool, len(f.Regions)+1), isSync: make([]bool, len(f.Regions)+1), isTask: make([]bool, len(f.Regions)+1)}
	for _, r := range f.Regions {
		if int(r.ID) < len(s.isSeg) {
			s.isSeg[r.ID] = r.Name == cfg.region
			s.isSync[r.ID] = !s.isSeg[r.ID] && cfg.sync.Match(r.Name)
			s.isTask[r.ID] = !s.isSeg[r.ID] && !s.isSync[r.ID] && analysis.IsTaskRun(r.Name)
		}
	}
	s.row = variation.Row{Label: label, File: fi, Location: loc.ID}
	for _, p := range loc.Profile {
		switch {
		case flagged(s.isSeg, p.Region):
			s.row.Invocations += p.Visits
		case flagged(s.isSync, p.Region):
			s.row.SyncCalls += p.Visits
		}
	}
	return s
}

func flagged(set []bool, id uint32) bool { return int(id) < len(set) && set[id] }

func (s *segmentScan) waiting() bool { return len(s.open) > 0 && s.open[len(s.open)-1].sync }

// event takes the location's next event.
func (s *segmentScan) event(e *tracefile.Event) {
	switch e.Kind {
	case encode.KindEnter:
		if flagged(s.isSync, e.Region) && !e.Truncated {
			s.row.SyncKept++
		}
		switch {
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
			s.open = append(s.open, segMark{depth: e.Depth, sync: flagged(s.isSync, e.Region)})
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
		if e.Depth == s.segDepth {
			s.inSeg = false
			if s.truncated {
				s.row.Truncated++
				s.index++
				return
			}
			s.add(s.offset+s.segStart, now-s.segStart, s.syncNs)
			s.index++
		}
	}
}

// add sums one segment into its group: the k-th segment of the location
// goes to group k/width, so every group but the last holds width segments.
func (s *segmentScan) add(start, dur, sync int64) {
	k := s.row.Segments
	s.row.Segments++
	if k > 0 && (k-1)/s.width != k/s.width && len(s.groups) == s.limit {
		// With an odd limit the last group is not full after this.
		s.coarsen()
	}
	if k > 0 && (k-1)/s.width == k/s.width {
		g := &s.groups[len(s.groups)-1]
		g.end = max(g.end, start+dur)
		g.dur += dur
		g.sync += sync
		g.n++
		return
	}
	s.groups = append(s.groups, segGroup{index: s.index, start: start, end: start + dur, dur: dur, sync: sync, n: 1})
}

// coarsen doubles the width: groups 2i and 2i+1 become group i.
func (s *segmentScan) coarsen() {
	s.width *= 2
	out := s.groups[:0]
	for i := 0; i < len(s.groups); i += 2 {
		g := s.groups[i]
		if i+1 < len(s.groups) {
			h := s.groups[i+1]
			g.end = max(g.end, h.end)
			g.dur += h.dur
			g.sync += h.sync
			g.n += h.n
		}
		out = append(out, g)
	}
	s.groups = out
}

// finish numbers the kept invocations as the last of all made when the
// keep-last policy lost the oldest (as variation does) and returns the
// segments: one per group, the group's mean invocation when it holds
// several (see segments).
func (s *segmentScan) finish(loc *tracefile.Location) {
	lost := 0
	if kept := uint64(s.row.Segments + s.row.Truncated + s.row.Recursive); loc.Windowed && s.row.Invocations > kept {
		lost = int(s.row.Invocations - kept)
	}
	for i := range s.groups {
		s.groups[i].index += lost
	}
}

// segmentSet is the segments of every location, in location order, as
// the heat map and the dynamics take them.
type segmentSet struct {
	cfg   segmentConfig
	scans []*segmentScan
	// Width is the most invocations a segment group of any location holds:
	// 1 when every segment is one invocation.
	width int
}

// variation assembles the analysis as variation.Analyze does, the
// segments being the groups: a group of several invocations is drawn over
// their whole span, and its SOS-time is theirs on average, so that a
// group's score compares like with like, and the last, smaller group of a
// location does not stand out for its size.
func (ss *segmentSet) variation(v *variation.Variation, files []*tracefile.File) error {
	if err := ss.found(v, files); err != nil {
		return err
	}
	v.Segments = make([]variation.Segment, 0, ss.groups())
	for ri, sc := range ss.scans {
		row := sc.row
		row.Segments = len(sc.groups)
		v.Rows = append(v.Rows, row)
		for _, g := range sc.groups {
			seg := variation.Segment{Row: ri, Index: g.index, Start: g.start, Duration: g.dur, Sync: g.sync, SOS: g.dur - g.sync}
			if g.n > 1 {
				sos := (g.dur - g.sync) / int64(g.n)
				seg.Duration = g.end - g.start
				seg.SOS = sos
				seg.Sync = seg.Duration - sos
			}
			v.Segments = append(v.Segments, seg)
		}
	}
	sos := make([]float64, len(v.Segments))
	for i, s := range v.Segments {
		sos[i] = float64(s.SOS)
	}
	v.Median, v.MAD, v.Spread = robustScale(sos)
	for i := range v.Segments {
		v.Segments[i].Score = robustZ(sos[i], v.Median, v.Spread)
	}
	for i, at := 0, 0; i < len(v.Rows); i++ {
		n := v.Rows[i].Segments
		if n > 0 {
			v.Rows[i].Median, _, _ = robustScale(sos[at : at+n])
		}
		at += n
	}
	ss.notes(v, files)
	return nil
}

// groups returns the segment groups of all locations.
func (ss *segmentSet) groups() int {
	n := 0
	for _, sc := range ss.scans {
		n += len(sc.groups)
	}
	return n
}

// found returns variation's error when no location has a segment.
func (ss *segmentSet) found(v *variation.Variation, files []*tracefile.File) error {
	if ss.groups() == 0 {
		return &variation.NoInvocationError{Region: v.Region, Losses: lossesOf(files)}
	}
	return nil
}

// notes records what limits the result, as variation does, from the
// invocations found (not the groups).
func (ss *segmentSet) notes(v *variation.Variation, files []*tracefile.File) {
	if len(v.SyncRegions) == 0 {
		v.Notes = append(v.Notes, variation.Note{Kind: variation.NoteNoSync, Sync: v.Sync})
	}
	var missingSeg, invocations, shedSync, syncCalls uint64
	var shedSyncRows, truncated int
	for _, sc := range ss.scans {
		r := sc.row
		invocations += r.Invocations
		if kept := uint64(r.Segments + r.Truncated + r.Recursive); r.Invocations > kept {
			missingSeg += r.Invocations - kept
		}
		syncCalls += r.SyncCalls
		if r.SyncCalls > r.SyncKept {
			shedSync += r.SyncCalls - r.SyncKept
			shedSyncRows++
		}
		truncated += r.Truncated
	}
	losses := lossesOf(files)
	if missingSeg > 0 {
		v.Notes = append(v.Notes, variation.Note{Kind: variation.NoteShedInvocations, Missing: missingSeg, Of: invocations, Region: v.Region, Losses: losses})
	}
	if shedSync > 0 {
		v.Notes = append(v.Notes, variation.Note{Kind: variation.NoteShedSync, Missing: shedSync, Of: syncCalls, Locations: shedSyncRows, Losses: losses})
	}
	if truncated > 0 {
		v.Notes = append(v.Notes, variation.Note{Kind: variation.NoteTruncated, Missing: uint64(truncated)})
	}
}

// groupText says how many invocations a heat-map segment holds when the
// report grouped them, "" when each is one.
func (ss *segmentSet) groupText() string {
	if ss.width <= 1 {
		return ""
	}
	total := 0
	for _, sc := range ss.scans {
		total += sc.row.Segments
	}
	return fmt.Sprintf("The %d invocations are grouped into segments of up to %d consecutive ones per location, to bound the report's memory: a segment spans its group, its SOS-time is the group's mean.", total, ss.width)
}

// lossesOf returns the ways the buffers of files lost events, each once,
// in the order the files record them; nil when nothing was removed.
func lossesOf(files []*tracefile.File) []variation.Loss {
	var out []variation.Loss
	add := func(l variation.Loss) {
		for _, o := range out {
			if o == l {
				return
			}
		}
		out = append(out, l)
	}
	for _, f := range files {
		for _, r := range f.Reductions {
			switch r.Reason {
			case tracefile.ByDepth:
				add(variation.Loss{Kind: variation.LossDepth, Depth: r.Depth})
			case tracefile.ByClass:
				add(variation.Loss{Kind: variation.LossClass, Class: r.Class})
			case tracefile.ByFirst:
				add(variation.Loss{Kind: variation.LossFirst})
			case tracefile.ByLast:
				add(variation.Loss{Kind: variation.LossLast})
			}
		}
		for i := range f.Locations {
			l := &f.Locations[i]
			if l.Removed()[tracefile.NoBin] > 0 {
				add(variation.Loss{Kind: variation.LossNoBin})
			}
			if l.FilteredDuration > 0 {
				add(variation.Loss{Kind: variation.LossDuration})
			}
		}
	}
	return out
}

// robustScale returns the median of xs and the spread robust z-scores are
// measured in: 1.4826 × MAD, or 1.2533 × the mean absolute deviation from
// the median when the MAD is zero (Iglewicz and Hoaglin), as variation
// scores its segments. xs is not modified.
func robustScale(xs []float64) (median, mad, spread float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	median = middle(s)
	var meanAD float64
	for i, x := range s {
		d := math.Abs(x - median)
		s[i] = d
		meanAD += d
	}
	meanAD /= float64(len(s))
	sort.Float64s(s)
	mad = middle(s)
	switch {
	case mad > 0:
		spread = 1.4826 * mad
	case meanAD > 0:
		spread = 1.2533 * meanAD
	}
	return median, mad, spread
}

func middle(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func robustZ(x, median, spread float64) float64 {
	if spread == 0 {
		return 0
	}
	return (x - median) / spread
}
