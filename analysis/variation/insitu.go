package variation

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The analysis in-situ: at the collective end of an MPI run each rank
// reads its own events while they are still in memory, and only small
// results travel up and down a reduction tree (cshim's run results):
//
//  1. every rank makes its Choice (LocalChoice: its regions' totals and
//     waits, one pass over its events), the Choices are merged up the
//     tree, and the root makes the Cut (Choice.Cut): the time-dominant
//     region chosen by chooseDominance, the one rule Analyze applies;
//  2. the Cut goes down the tree, every rank cuts its own segments
//     (Cut.Local) and the Segments are gathered up the tree, in rank
//     order: the bytes are about 110 per segment and 200 per location;
//  3. the root scores them and writes the notes (Cut.Finish), as Analyze
//     does on the files: the same Variation, but for the clock rate,
//     calibrated to the collective end rather than to the end of the run.
//
// The extra synchronization patterns of Options.Sync are not applied
// in-situ: the default synchronization regions are.

// Choice is what one rank, or a subtree of ranks, contributes to the choice
// of the run's time-dominant region.
type Choice struct {
	Locations    int
	Ranks        int   // ranks with locations
	Run, Startup int64 // ns, runTimes summed
	Traced       int64 // ns, from each location's first event to its last, summed
	Totals       []RegionTotal
	// Paradigms are the runtimes' regions by name (MPI, OpenMP, ...),
	// which are not the program's computation.
	Paradigms map[string]tracefile.Paradigm
	Waits     waitSums
	Axis      axisPart
	Losses    []Loss // each once, in rank order
}

// axisPart places the ranks on one time axis as tracefile.Axis does: by
// their clock-sync points to one reference, else by their wall clocks.
type axisPart struct {
	Synced    bool
	Reference uint64 // the reference's start (tracefile.Header.ReferenceStart)
	Origin    int64  // ns: the earliest start on the reference's clock, 0 or less
	Wall      int64  // ns since 1970: the earliest wall-clock start
}

// LocalChoice returns the Choice of the rank whose trace f is, reading its
// events once.
func LocalChoice(f *tracefile.File) (*Choice, error) {
	return localChoice(f, fileEvents)
}

// fileEvents reads the events of f's location index loc from f.
func fileEvents(f *tracefile.File, loc int, ahead bool) eventSource {
	return f.EventsWith(f.Locations[loc].ID, ahead)
}

// localChoice is LocalChoice, the events of f's location index loc read
// from open(f, loc, ahead).
func localChoice(f *tracefile.File, open func(f *tracefile.File, loc int, ahead bool) eventSource) (*Choice, error) {
	files := []*tracefile.File{f}
	cl := newClassifier(files, analysis.SyncMatcher{})
	sums, traced, err := waitSumsFrom(files, cl, 1, open)
	if err != nil {
		return nil, fmt.Errorf("variation: rank %d: %w", f.Header.Rank, err)
	}
	run, startup := runTimes(f)
	c := &Choice{Locations: len(f.Locations), Ranks: min(len(f.Locations), 1), Run: run, Startup: startup, Traced: traced, Totals: Totals(files),
		Paradigms: cl.paradigm, Waits: sums, Losses: Losses(files)}
	h := &f.Header
	c.Axis = axisPart{Synced: len(h.ClockSync) > 0, Reference: h.ReferenceStart,
		Origin: min(f.GlobalNanos(h.StartTicks>>h.TimerShift), 0), Wall: h.StartWall.UnixNano()}
	return c, nil
}

// Merge adds o, the Choice of ranks after c's, to c.
func (c *Choice) Merge(o *Choice) {
	c.Locations += o.Locations
	c.Ranks += o.Ranks
	c.Run += o.Run
	c.Startup += o.Startup
	c.Traced += o.Traced
	byName := make(map[string]int, len(c.Totals))
	for i, t := range c.Totals {
		byName[t.Name] = i
	}
	for _, t := range o.Totals {
		i, ok := byName[t.Name]
		if !ok {
			byName[t.Name] = len(c.Totals)
			c.Totals = append(c.Totals, t)
			continue
		}
		c.Totals[i].Visits += t.Visits
		c.Totals[i].Inclusive += t.Inclusive
		c.Totals[i].Exclusive += t.Exclusive
		c.Totals[i].Locations += t.Locations
	}
	sortTotals(c.Totals)
	if c.Paradigms == nil {
		c.Paradigms = map[string]tracefile.Paradigm{}
	}
	for name, p := range o.Paradigms {
		c.Paradigms[name] = p
	}
	if c.Waits == nil {
		c.Waits = waitSums{}
	}
	c.Waits.merge(o.Waits)
	for _, l := range o.Losses {
		known := false
		for _, k := range c.Losses {
			known = known || k == l
		}
		if !known {
			c.Losses = append(c.Losses, l)
		}
	}
	c.Axis.Synced = c.Axis.Synced && o.Axis.Synced && c.Axis.Reference == o.Axis.Reference
	c.Axis.Origin = min(c.Axis.Origin, o.Axis.Origin)
	c.Axis.Wall = min(c.Axis.Wall, o.Axis.Wall)
}

// Cut is how every rank cuts its segments: the plan chosen from the run's
// Choice, and the run's time axis.
type Cut struct {
	Plan   Plan
	Axis   axisPart
	Losses []Loss
}

// Cut chooses the time-dominant region of the run whose Choice c is, by
// the rule Analyze applies (DominanceRule), and returns how to cut it; the
// error is Analyze's when no region is time-dominant.
func (c *Choice) Cut() (*Cut, error) {
	in := dominanceInput{totals: c.Totals, locations: c.Locations, ranks: c.Ranks, run: c.Run, startup: c.Startup,
		cl: classifier{paradigm: c.Paradigms}}
	if in.cl.paradigm == nil {
		in.cl.paradigm = map[string]tracefile.Paradigm{}
	}
	d, err := chooseDominance(in, func() (map[string]waitShare, int64, error) { return c.Waits.shares(), c.Traced, nil })
	p, err := makePlan(c.Totals, d, err, "", filter.Patterns{})
	if err != nil {
		return nil, err
	}
	return &Cut{Plan: *p, Axis: c.Axis, Losses: c.Losses}, nil
}

// Segments are the rows and segments of one rank, or of a subtree of
// ranks in rank order; Segment.Row indexes Rows.
type Segments struct {
	Rows     []Row
	Segments []Segment
}

// Local cuts the segments of the rank whose trace f is, its locations in
// order, as Analyze cuts them among the files of its run. A row's File is
// the rank: its index among the run's files in rank order.
func (c *Cut) Local(f *tracefile.File) (*Segments, error) {
	return c.local(f, fileEvents)
}

// local is Local, the events of f's location index loc read from
// open(f, loc, false).
func (c *Cut) local(f *tracefile.File, open func(f *tracefile.File, loc int, ahead bool) eventSource) (*Segments, error) {
	h := &f.Header
	offset := h.StartWall.UnixNano() - c.Axis.Wall
	if c.Axis.Synced {
		offset = max(f.GlobalNanos(h.StartTicks>>h.TimerShift)-c.Axis.Origin, 0)
	}
	if c.Plan.ByRank && c.Plan.cuts == nil {
		// The master's calls are read once for the rank's threads.
		c.Plan.cuts = newRankCuts()
	}
	out := &Segments{}
	for j := range f.Locations {
		l := &f.Locations[j]
		ref := LocationRef{File: h.Rank, Index: j, Location: l, Label: rankLabel(h.Rank, l.Name), Offset: offset}
		var segs []Segment
		s := c.Plan.NewScanner(f, ref, j, func(seg Segment) { segs = append(segs, seg) })
		var e tracefile.Event
		it := open(f, j, false)
		for it.Next(&e) {
			s.Event(&e)
		}
		it.Close()
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("variation: rank %d: %w", h.Rank, err)
		}
		row, shift := s.Finish()
		for i := range segs {
			segs[i].Index += shift
		}
		out.Rows = append(out.Rows, row)
		out.Segments = append(out.Segments, segs...)
	}
	return out, nil
}

// Merge appends o, the segments of ranks after s's.
func (s *Segments) Merge(o *Segments) {
	// Grown once: at the root of the tree s holds half the run's segments
	// when the last half arrives.
	s.Segments = slices.Grow(s.Segments, len(o.Segments))
	s.Rows = slices.Grow(s.Rows, len(o.Rows))
	for _, seg := range o.Segments {
		seg.Row += len(s.Rows)
		s.Segments = append(s.Segments, seg)
	}
	s.Rows = append(s.Rows, o.Rows...)
}

// Finish scores the segments of the whole run and writes its notes, as
// Analyze finishes the analysis of the files.
func (c *Cut) Finish(s *Segments) (*Variation, error) {
	v := c.Plan.Variation()
	v.Rows, v.Segments = s.Rows, s.Segments
	if len(v.Segments) == 0 {
		return nil, &NoInvocationError{Region: c.Plan.Region, Losses: c.Losses}
	}
	v.Score()
	v.Notes = c.Plan.notes(v.Rows, func() []Loss { return c.Losses })
	return v, nil
}

// InSitu is the variation analysis the ranks ran in-situ, as a run
// archive's results keep it (tracefile.ResultVariation): the analysis, or
// why there is none.
type InSitu struct {
	Variation *Variation `json:",omitempty"`
	Error     string     `json:",omitempty"`
}

// inSituJSON is InSitu as the archive holds it: the segments apart, in
// their wire form (EncodeWire of the rows and segments), about 27 bytes a
// segment in base64 against some 110 as JSON. A run whose time-dominant
// region is called 100,000 times on each of 16 ranks made 157 MB of
// results that way, and rank 0 held several times that while writing
// them. Archives written before hold the segments inside Variation.
type inSituJSON struct {
	Variation *Variation `json:",omitempty"`
	Segments  []byte     `json:",omitempty"`
	Error     string     `json:",omitempty"`
}

// MarshalJSON writes in with its segments in their wire form.
func (in InSitu) MarshalJSON() ([]byte, error) {
	out := inSituJSON{Variation: in.Variation, Error: in.Error}
	if v := in.Variation; v != nil && len(v.Segments) > 0 {
		b, err := EncodeWire(&Segments{Rows: v.Rows, Segments: v.Segments})
		if err != nil {
			return nil, err
		}
		c := *v
		c.Segments = nil
		out.Variation, out.Segments = &c, b
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote, or an InSitu of an archive
// written before, with the segments inside Variation.
func (in *InSitu) UnmarshalJSON(b []byte) error {
	var x inSituJSON
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	in.Variation, in.Error = x.Variation, x.Error
	if len(x.Segments) == 0 {
		if v := in.Variation; v != nil {
			for _, s := range v.Segments {
				if s.Row < 0 || s.Row >= len(v.Rows) {
					return fmt.Errorf("a segment of row %d, the analysis has %d", s.Row, len(v.Rows))
				}
			}
		}
		return nil
	}
	if in.Variation == nil {
		return fmt.Errorf("segments without the analysis they belong to")
	}
	var s Segments
	if err := DecodeWire(x.Segments, &s); err != nil {
		return err
	}
	if len(s.Rows) != len(in.Variation.Rows) {
		return fmt.Errorf("segments of %d rows, the analysis has %d", len(s.Rows), len(in.Variation.Rows))
	}
	in.Variation.Segments = s.Segments
	return nil
}

// MarshalJSON-based codecs of the in-situ messages and results: the
// messages cross a reduction tree of the ranks of one run, built by one
// version of this package.

// Encode returns the JSON form of v (a *Choice, *Cut, *Segments or
// *InSitu): the Cut's down the tree and the InSitu the archive keeps; the
// parts up the tree go in their wire form (EncodeWire).
func Encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("variation: in-situ %T: %v", v, err)
	}
	return b, nil
}

// Decode reads what Encode wrote into v.
func Decode(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("variation: in-situ %T: %v", v, err)
	}
	return nil
}
