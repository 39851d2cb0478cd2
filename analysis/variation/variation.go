package variation

import (
	"fmt"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// DefaultMinScore is the robust z-score from which a segment stands out:
// Iglewicz and Hoaglin's bound for outliers.
const DefaultMinScore = 3.5

// Options say how Analyze cuts the run into segments.
type Options struct {
	// Region segments the run by the invocations of this region; "" picks
	// the time-dominant region. A smaller region gives finer segments
	// (Weber et al., figure 5c).
	Region string
	// Sync adds synchronization regions to DefaultSync, e.g. a program's
	// own waits.
	Sync filter.Patterns
	// Procs is the number of workers reading the locations; 0 means
	// HMB_TOOL_PROCS, else GOMAXPROCS. The result is the same for any.
	Procs int
}

// Row is one location of the analysis: a row of the hot/cold view.
type Row struct {
	Label    string // location name, prefixed with the rank when there are several files
	File     int    // index into the files given to Analyze
	Location uint32 // tracefile.Location.ID
	Segments int    // segments found on it
	// Invocations of the segment region in the exact flat profile; more
	// than Segments when the buffer shed some of them.
	Invocations uint64
	// Synchronization calls in the flat profile and in the trace: fewer
	// kept than made means the buffer shed some, and the segments that
	// held them count that wait as their own time.
	SyncCalls, SyncKept uint64
	// Truncated counts segments left out because they began before the
	// window the keep-last policy kept.
	Truncated int
	// Recursive counts invocations of the segment region inside one of its
	// own: they belong to the enclosing segment.
	Recursive int
	// Median is the median SOS-time of its segments, in ns (0 without
	// any): a location slow in every segment (a load imbalance) stands
	// out by it, not by single segments.
	Median float64
}

// Segment is one invocation of the segment region on one location.
type Segment struct {
	Row int // index into Variation.Rows
	// Index is the invocation number on its location, from 0, in time
	// order; after the keep-last policy revoked the oldest events, the kept
	// invocations are numbered as the last ones made.
	Index    int
	Start    int64 // ns on the common time axis (see Variation.Rows)
	Duration int64 // ns: the invocation's inclusive time
	Sync     int64 // ns spent in synchronization regions nested in it, less the OpenMP tasks run in them
	SOS      int64 // ns: Duration - Sync, the synchronization-oblivious segment time
	// Score is the robust z-score of SOS among all segments: its distance
	// from their median in units of 1.4826 × MAD.
	Score float64
}

// End returns the end of the segment on the common time axis.
func (s Segment) End() int64 { return s.Start + s.Duration }

// Variation is the performance-variation analysis of Weber et al.: the run cut
// into segments at the invocations of one region, each measured by its
// synchronization-oblivious segment time (SOS-time).
//
// Times of several files are put on one axis by their wall-clock start
// times; with one file, Start is the time since the start of the
// measurement.
type Variation struct {
	// Dominance is how the time-dominant region was chosen; HasDominance
	// is false when no region qualifies (then Options.Region named one).
	Dominance    Dominance
	HasDominance bool
	Region       string // the segment region
	Picked       bool   // Region was given in Options, not chosen

	Sync        filter.Patterns // the extra synchronization patterns
	SyncRegions []string        // regions of the trace taken as synchronization, with visits
	Rows        []Row
	Segments    []Segment // by row, then index

	// Median and MAD of all SOS-times, in ns; Spread is the unit of the
	// scores (1.4826 × MAD, or 1.2533 × the mean absolute deviation when
	// the MAD is 0; 0 when all SOS-times are equal).
	Median, MAD, Spread float64

	// Notes say what limits the result: missing synchronization regions,
	// invocations and waits the buffer shed.
	Notes []Note
}

// Analyze cuts the locations of files into segments and scores their
// SOS-times. It reads every event of every location once, the locations
// on Options.Procs workers.
func Analyze(files []*tracefile.File, opt Options) (*Variation, error) {
	procs, err := parallel.Procs(opt.Procs)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	v := &Variation{Sync: opt.Sync}
	dom, domErr := timeDominant(files, analysis.SyncMatcher{Extra: opt.Sync}, procs)
	v.Dominance, v.HasDominance = dom, domErr == nil
	totals := Totals(files)
	switch {
	case opt.Region != "":
		v.Region, v.Picked = opt.Region, true
		known := false
		for _, t := range totals {
			known = known || t.Name == opt.Region
		}
		if !known {
			return nil, fmt.Errorf("analysis: no location visits a region named %q", opt.Region)
		}
	case domErr != nil:
		return nil, domErr
	default:
		v.Region = dom.Region.Name
	}
	sync := analysis.SyncMatcher{Extra: opt.Sync}
	for _, t := range totals {
		if sync.Match(t.Name) && t.Name != v.Region {
			v.SyncRegions = append(v.SyncRegions, t.Name)
		}
	}
	sort.Strings(v.SyncRegions)

	// Each location is scanned on its own; its row and segments are put
	// in location order, as a sequential scan makes them.
	refs := locations(files)
	rows := make([]Row, len(refs))
	segs := make([][]Segment, len(refs))
	err = parallel.Do(procs, len(refs), func(n int) error {
		var err error
		rows[n], segs[n], err = v.scan(files[refs[n].file], refs[n], n, sync, procs > len(refs))
		return err
	})
	if err != nil {
		return nil, err
	}
	v.Rows = rows
	for _, s := range segs {
		v.Segments = append(v.Segments, s...)
	}
	if len(v.Segments) == 0 {
		return nil, &NoInvocationError{Region: v.Region, Losses: lossesOf(files)}
	}
	sos := make([]float64, len(v.Segments))
	for i, s := range v.Segments {
		sos[i] = float64(s.SOS)
	}
	v.Median, v.MAD, v.Spread = robustScale(sos)
	for i := range v.Segments {
		v.Segments[i].Score = robustZ(sos[i], v.Median, v.Spread)
	}
	// Segments are by row: each row's SOS-times are one run of sos.
	for i, at := 0, 0; i < len(v.Rows); i++ {
		n := v.Rows[i].Segments
		if n > 0 {
			v.Rows[i].Median, _, _ = robustScale(sos[at : at+n])
		}
		at += n
	}
	v.notes(files)
	return v, nil
}

// scan finds the segments of one location, row rowIndex. It only reads v.
// With ahead, the events are read on a goroutine of their own.
func (v *Variation) scan(f *tracefile.File, ref locationRef, rowIndex int, sync analysis.SyncMatcher, ahead bool) (Row, []Segment, error) {
	isSeg := make([]bool, len(f.Regions)+1)
	isSync := make([]bool, len(f.Regions)+1)
	isTask := make([]bool, len(f.Regions)+1)
	for _, r := range f.Regions {
		if int(r.ID) < len(isSeg) {
			isSeg[r.ID] = r.Name == v.Region
			isSync[r.ID] = !isSeg[r.ID] && sync.Match(r.Name)
			isTask[r.ID] = !isSeg[r.ID] && !isSync[r.ID] && analysis.IsTaskRun(r.Name)
		}
	}
	flag := func(set []bool, id uint32) bool { return int(id) < len(set) && set[id] }

	row := Row{Label: ref.label, File: ref.file, Location: ref.loc.ID}
	for _, p := range ref.loc.Profile {
		switch {
		case flag(isSeg, p.Region):
			row.Invocations += p.Visits
		case flag(isSync, p.Region):
			row.SyncCalls += p.Visits
		}
	}
	var segments []Segment

	// open holds the sync and task regions open in the segment: time is
	// synchronization while the innermost of them is a sync region, so
	// that a task run inside a barrier or taskwait counts as work.
	type mark struct {
		depth int
		sync  bool
	}
	var (
		e                tracefile.Event
		inSeg, truncated bool
		segDepth         int // depth of the open segment
		open             []mark
		segStart, syncAt int64
		syncNs           int64
		index            int
	)
	waiting := func() bool { return len(open) > 0 && open[len(open)-1].sync }
	it := f.EventsWith(ref.loc.ID, ahead)
	defer it.Close()
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindEnter:
			if flag(isSync, e.Region) && !e.Truncated {
				row.SyncKept++
			}
			switch {
			case inSeg && flag(isSeg, e.Region):
				row.Recursive++
			case !inSeg && flag(isSeg, e.Region):
				inSeg, truncated, segDepth = true, e.Truncated, e.Depth
				segStart, syncNs, open = f.Nanos(e.Time), 0, open[:0]
			case inSeg && (flag(isSync, e.Region) || flag(isTask, e.Region)):
				now := f.Nanos(e.Time)
				if waiting() {
					syncNs += now - syncAt
				}
				open = append(open, mark{depth: e.Depth, sync: flag(isSync, e.Region)})
				syncAt = now
			}
		case encode.KindLeave:
			if !inSeg {
				continue
			}
			now := f.Nanos(e.Time)
			// A leave the buffer shed inside would leave a mark open: a
			// leave at or above a mark's depth closes it.
			for n := len(open); n > 0 && e.Depth <= open[n-1].depth; n-- {
				if waiting() {
					syncNs += now - syncAt
				}
				open = open[:n-1]
				syncAt = now
			}
			if e.Depth == segDepth {
				inSeg = false
				if truncated {
					row.Truncated++
					index++
					continue
				}
				dur := now - segStart
				segments = append(segments, Segment{Row: rowIndex, Index: index,
					Start: ref.offset + segStart, Duration: dur, Sync: syncNs, SOS: dur - syncNs})
				row.Segments++
				index++
			}
		}
	}
	if err := it.Err(); err != nil {
		return Row{}, nil, err
	}
	// The keep-last policy lost the oldest invocations: number the kept
	// ones as the last of all that were made.
	if kept := uint64(row.Segments + row.Truncated + row.Recursive); ref.loc.Windowed && row.Invocations > kept {
		lost := int(row.Invocations - kept)
		for i := range segments {
			segments[i].Index += lost
		}
	}
	return row, segments, nil
}

// notes records what limits the result.
func (v *Variation) notes(files []*tracefile.File) {
	if len(v.SyncRegions) == 0 {
		v.Notes = append(v.Notes, Note{Kind: NoteNoSync, Sync: v.Sync})
	}
	var missingSeg, invocations, shedSync, syncCalls uint64
	var shedSyncRows, truncated int
	for _, r := range v.Rows {
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
		v.Notes = append(v.Notes, Note{Kind: NoteShedInvocations, Missing: missingSeg, Of: invocations, Region: v.Region, Losses: losses})
	}
	if shedSync > 0 {
		v.Notes = append(v.Notes, Note{Kind: NoteShedSync, Missing: shedSync, Of: syncCalls, Locations: shedSyncRows, Losses: losses})
	}
	if truncated > 0 {
		v.Notes = append(v.Notes, Note{Kind: NoteTruncated, Missing: uint64(truncated)})
	}
}

// lossesOf returns the ways the buffers of files lost events, each once,
// in the order the files record them; nil when nothing was removed.
func lossesOf(files []*tracefile.File) []Loss {
	var out []Loss
	add := func(l Loss) {
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
				add(Loss{Kind: LossDepth, Depth: r.Depth})
			case tracefile.ByClass:
				add(Loss{Kind: LossClass, Class: r.Class})
			case tracefile.ByFirst:
				add(Loss{Kind: LossFirst})
			case tracefile.ByLast:
				add(Loss{Kind: LossLast})
			}
		}
		for i := range f.Locations {
			l := &f.Locations[i]
			if l.Removed()[tracefile.NoBin] > 0 {
				add(Loss{Kind: LossNoBin})
			}
			if l.FilteredDuration > 0 {
				add(Loss{Kind: LossDuration})
			}
		}
	}
	return out
}

// SlowestRows returns the indices of the rows that have segments, by the
// median SOS-time of their segments, highest first; ties in row order.
func (v *Variation) SlowestRows() []int {
	var rows []int
	for i, r := range v.Rows {
		if r.Segments > 0 {
			rows = append(rows, i)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return v.Rows[rows[i]].Median > v.Rows[rows[j]].Median })
	return rows
}

// Ranked returns the segments by score, highest first; ties in time order.
func (v *Variation) Ranked() []Segment {
	r := append([]Segment(nil), v.Segments...)
	sort.SliceStable(r, func(i, j int) bool {
		if r[i].Score != r[j].Score {
			return r[i].Score > r[j].Score
		}
		return r[i].Start < r[j].Start
	})
	return r
}
