package variation

import (
	"fmt"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Plan is what Analyze decides before it reads a segment: the region the
// run is cut at and the regions taken as synchronization. A tool that
// reads the events itself (the report reads them once for all its views)
// makes a Plan, feeds every location's events to a Scanner of it, and
// finishes with Score and Notes, as Analyze does.
type Plan struct {
	// Dominance is how the time-dominant region was chosen; HasDominance
	// is false when no region qualifies (then Region was given).
	Dominance    Dominance
	HasDominance bool
	Region       string // the segment region
	Picked       bool   // Region was given, not chosen
	// Between cuts the segments from one call of Region (a collective,
	// the fallback of Dominance.Between) to the next.
	Between bool
	// ByRank cuts the locations that do not call Region at the calls of
	// the location of their rank that does (Dominance.ByRank).
	ByRank bool
	cuts   *rankCuts // the master's calls, per file, read once

	Sync        filter.Patterns // the extra synchronization patterns
	SyncRegions []string        // regions of the trace taken as synchronization, with visits
}

// Planner makes the Plans of one set of files. It sums their flat profiles
// once and chooses the time-dominant region once per set of extra
// synchronization patterns, as that may read every event. It is not safe
// for concurrent use.
type Planner struct {
	files  []*tracefile.File
	totals []RegionTotal
	procs  int
	byKey  map[string]dominance
}

type dominance struct {
	d   Dominance
	err error
}

// NewPlanner returns a Planner of files that reads their events, when it
// must, on procs workers (1 or less: sequentially).
func NewPlanner(files []*tracefile.File, procs int) *Planner {
	return &Planner{files: files, totals: Totals(files), procs: procs, byKey: map[string]dominance{}}
}

// Plan decides how to cut the files at region ("" for the time-dominant
// one), sync adding synchronization regions to DefaultSync. Its error is
// Analyze's when region names no visited region or, with region "", when
// no region is time-dominant.
func (pl *Planner) Plan(region string, sync filter.Patterns) (*Plan, error) {
	k := sync.String()
	dom, ok := pl.byKey[k]
	if !ok {
		dom.d, dom.err = timeDominant(pl.files, pl.totals, analysis.SyncMatcher{Extra: sync}, pl.procs)
		pl.byKey[k] = dom
	}
	return makePlan(pl.totals, dom.d, dom.err, region, sync)
}

// makePlan is Plan of a run whose totals are totals and whose choice of
// the time-dominant region is dom, or failed with domErr.
func makePlan(totals []RegionTotal, dom Dominance, domErr error, region string, sync filter.Patterns) (*Plan, error) {
	p := &Plan{Sync: sync, Dominance: dom, HasDominance: domErr == nil}
	switch {
	case region != "":
		p.Region, p.Picked = region, true
		known := false
		for _, t := range totals {
			known = known || t.Name == region
		}
		if !known {
			return nil, fmt.Errorf("analysis: no location visits a region named %q", region)
		}
	case domErr != nil:
		return nil, domErr
	default:
		p.Region, p.Between, p.ByRank = dom.Region.Name, dom.Between, dom.ByRank
		if p.ByRank {
			p.cuts = newRankCuts()
		}
	}
	m := p.matcher()
	for _, t := range totals {
		if m.Match(t.Name) && (t.Name != p.Region || p.Between) {
			p.SyncRegions = append(p.SyncRegions, t.Name)
		}
	}
	sort.Strings(p.SyncRegions)
	return p, nil
}

func (p *Plan) matcher() analysis.SyncMatcher { return analysis.SyncMatcher{Extra: p.Sync} }

// Variation returns the analysis of the plan before its segments are
// found: the choice of the region and the synchronization regions.
func (p *Plan) Variation() *Variation {
	return &Variation{Dominance: p.Dominance, HasDominance: p.HasDominance, Region: p.Region, Picked: p.Picked,
		Between: p.Between, ByRank: p.ByRank, Sync: p.Sync, SyncRegions: p.SyncRegions}
}

// NoInvocation returns Analyze's error for files in which no location
// holds a complete invocation of the segment region.
func (p *Plan) NoInvocation(files []*tracefile.File) error {
	return &NoInvocationError{Region: p.Region, Losses: Losses(files)}
}

// Notes returns what limits the analysis of files by the plan, from the
// rows of its locations as their Scanners finished them (Segments counting
// invocations, however a tool groups them).
func (p *Plan) Notes(rows []Row, files []*tracefile.File) []Note {
	return p.notes(rows, func() []Loss { return Losses(files) })
}

// notes is Notes of the run whose buffers lost events as losses says.
func (p *Plan) notes(rows []Row, losses func() []Loss) []Note {
	var notes []Note
	if d := &p.Dominance; !p.Picked && p.HasDominance && d.Weak != WeakNone {
		n := Note{Kind: NoteWeakChoice, Weak: d.Weak, Region: d.Region.Name, Share: d.Share, Locations: d.Locations,
			Missing: d.Region.Visits}
		switch {
		case d.HasLoop:
			n.Loop, n.Of = d.Loop.Name, d.Loop.Visits
		case d.HasRankLoop:
			n.Loop, n.Of = d.RankLoop.Name, d.RankLoop.Visits
		}
		notes = append(notes, n)
	}
	if len(p.SyncRegions) == 0 && !p.Between {
		notes = append(notes, Note{Kind: NoteNoSync, Sync: p.Sync})
	}
	var missingSeg, invocations, shedSync, syncCalls, restarts uint64
	var shedSyncRows, truncated, restartRows int
	for _, r := range rows {
		invocations += r.Invocations
		kept := r.kept(p.Between)
		if p.Between && r.Starts > 1 {
			restarts += uint64(r.Starts - 1)
			restartRows++
		}
		if r.Invocations > kept {
			missingSeg += r.Invocations - kept
		}
		syncCalls += r.SyncCalls
		if r.SyncCalls > r.SyncKept {
			shedSync += r.SyncCalls - r.SyncKept
			shedSyncRows++
		}
		truncated += r.Truncated
	}
	if restarts > 0 {
		notes = append(notes, Note{Kind: NoteRestarted, Missing: restarts, Of: invocations, Locations: restartRows, Region: p.Region})
	}
	if missingSeg == 0 && shedSync == 0 && truncated == 0 {
		return notes
	}
	lost := losses()
	if missingSeg > 0 {
		notes = append(notes, Note{Kind: NoteShedInvocations, Missing: missingSeg, Of: invocations, Region: p.Region, Losses: lost})
	}
	if shedSync > 0 {
		notes = append(notes, Note{Kind: NoteShedSync, Missing: shedSync, Of: syncCalls, Locations: shedSyncRows, Losses: lost})
	}
	if truncated > 0 {
		notes = append(notes, Note{Kind: NoteTruncated, Missing: uint64(truncated)})
	}
	return notes
}

// Losses returns the ways the buffers of files lost events, each once, in
// the order the files record them; nil when nothing was removed.
func Losses(files []*tracefile.File) []Loss {
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

// kept returns how many of the row's invocations its segments account
// for. Between calls of a collective, each call that began the
// iterations ends no segment (Starts; a row of an archive written before
// Starts was counted has 0, taken as the first call alone).
func (r *Row) kept(between bool) uint64 {
	kept := uint64(r.Segments + r.Truncated + r.Recursive)
	if between && r.Invocations > 0 {
		kept += uint64(max(r.Starts, 1))
	}
	return kept
}
