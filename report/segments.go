package report

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
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
// of package variation and package trend, whose streaming pieces
// (variation.Plan and Scanner, trend.AnalyzeSeries) make them.

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

// segGroup is a group of consecutive segments (invocations) of one
// location: their sums, the first one's index and start, the last one's end.
type segGroup struct {
	index      int   // invocation number of the first
	start, end int64 // ns on the time axis
	dur, sync  int64 // sums over the group, ns
	n          int
}

// segmentScan sums the segments a variation.Scanner finds on one location
// into groups.
type segmentScan struct {
	scan *variation.Scanner
	row  variation.Row // after finish: Segments counts invocations, not groups
	n    int           // segments added

	width, limit int // invocations per group, groups at most
	groups       []segGroup
}

func newSegmentScan(p *variation.Plan, f *tracefile.File, ref variation.LocationRef, row, limit int) *segmentScan {
	s := &segmentScan{width: 1, limit: max(limit, 2)}
	s.scan = p.NewScanner(f, ref, row, s.add)
	return s
}

// event takes the location's next event.
func (s *segmentScan) event(e *tracefile.Event) { s.scan.Event(e) }

// add sums one segment into its group: the k-th segment of the location
// goes to group k/width, so every group but the last holds width segments.
func (s *segmentScan) add(seg variation.Segment) {
	start, dur, sync := seg.Start, seg.Duration, seg.Sync
	k := s.n
	s.n++
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
	s.groups = append(s.groups, segGroup{index: seg.Index, start: start, end: start + dur, dur: dur, sync: sync, n: 1})
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

// finish takes the location's row and numbers the kept invocations as
// the last of all made when the keep-last policy lost the oldest.
func (s *segmentScan) finish() {
	var shift int
	s.row, shift = s.scan.Finish()
	for i := range s.groups {
		s.groups[i].index += shift
	}
}

// segmentSet is the segments of every location, in location order, as
// the heat map and the dynamics take them.
type segmentSet struct {
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
func (ss *segmentSet) variation(p *variation.Plan, files []*tracefile.File) (*variation.Variation, error) {
	if ss.groups() == 0 {
		return nil, p.NoInvocation(files)
	}
	v := p.Variation()
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
	v.Score()
	v.Notes = ss.notes(p, files)
	return v, nil
}

// groups returns the segment groups of all locations.
func (ss *segmentSet) groups() int {
	n := 0
	for _, sc := range ss.scans {
		n += len(sc.groups)
	}
	return n
}

// notes says what limits the result, from the invocations found (not the
// groups).
func (ss *segmentSet) notes(p *variation.Plan, files []*tracefile.File) []variation.Note {
	rows := make([]variation.Row, len(ss.scans))
	for i, sc := range ss.scans {
		rows[i] = sc.row
	}
	return p.Notes(rows, files)
}

// trend returns the dynamics of the segment groups as trend.Analyze makes
// them of all segments: a group of several invocations is a sample of
// width iterations, as a merged phase series' sample is, so that the
// dynamics analyse a bounded series, in time bounded by it.
func (ss *segmentSet) trend(p *variation.Plan, files []*tracefile.File, opt trend.Options) (*trend.Result, error) {
	if ss.groups() == 0 {
		return nil, p.NoInvocation(files)
	}
	var series []*trend.Series
	for _, sc := range ss.scans {
		groups := make([]trend.Invocations, len(sc.groups))
		for i, g := range sc.groups {
			groups[i] = trend.Invocations{N: g.n, Duration: g.dur, SOS: g.dur - g.sync}
		}
		series = append(series, trend.InvocationSeries(p.Region, sc.row.Label, uint64(sc.width), groups)...)
	}
	return trend.AnalyzeSeries(trend.Source{Invocations: true, Region: p.Region, Between: p.Between}, series, ss.notes(p, files), opt)
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
