package variation

import (
	"fmt"
	"sort"

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
	// Starts counts, when the iterations are cut between consecutive
	// calls of a collective (Plan.Between), the calls that began them:
	// the first, and each after a gap in which the location returned
	// above its loop's depth (the iterations ended there: a later phase),
	// which ends no segment.
	Starts int `json:",omitempty"`
	// Resolution is the ns per timestamp unit of the location's file
	// (tracefile.Trace.Resolution): its SOS-times differ by multiples of
	// it, so the scores' spread is never below it (Score).
	Resolution float64 `json:",omitempty"`
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
	Sync     int64 // ns spent in synchronization regions nested in it, less the OpenMP tasks run in them; on a thread cut at its master's calls (ByRank), also its time in no region
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
	// Between says the segments run from one call of Region (a
	// collective) to the next, the fallback of Dominance.Between; ByRank
	// that the locations that do not call it are cut at the calls of
	// their rank's master thread (Dominance.ByRank).
	Between, ByRank bool

	Sync        filter.Patterns // the extra synchronization patterns
	SyncRegions []string        // regions of the trace taken as synchronization, with visits
	Rows        []Row
	Segments    []Segment // by row, then index

	// Median and MAD of all SOS-times, in ns; Spread is the unit of the
	// scores (1.4826 × MAD, or 1.2533 × the mean absolute deviation when
	// the MAD is 0; 0 when all SOS-times are equal), never below the
	// coarsest timestamp unit of the rows' files.
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
	p, err := NewPlanner(files, procs).Plan(opt.Region, opt.Sync)
	if err != nil {
		return nil, err
	}
	v := p.Variation()

	// Each location is scanned on its own; its row and segments are put
	// in location order, as a sequential scan makes them.
	refs := Locations(files)
	rows := make([]Row, len(refs))
	segs := make([][]Segment, len(refs))
	ahead := procs > len(refs)
	err = parallel.Do(procs, len(refs), func(n int) error {
		f := files[refs[n].File]
		s := p.NewScanner(f, refs[n], n, func(seg Segment) { segs[n] = append(segs[n], seg) })
		var e tracefile.Event
		it := f.EventsWith(refs[n].Location.ID, ahead)
		defer it.Close()
		for it.Next(&e) {
			s.Event(&e)
		}
		if err := it.Err(); err != nil {
			return err
		}
		var shift int
		rows[n], shift = s.Finish()
		for i := range segs[n] {
			segs[n][i].Index += shift
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.Rows = rows
	for _, s := range segs {
		v.Segments = append(v.Segments, s...)
	}
	if len(v.Segments) == 0 {
		return nil, p.NoInvocation(files)
	}
	v.Score()
	v.Notes = p.Notes(v.Rows, files)
	return v, nil
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
