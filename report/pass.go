package report

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The report reads the trace once: every location's events stream through
// the timeline's encoder and the segment scans of the heat map and the
// dynamics together, the locations on GOMAXPROCS workers. What a location
// leaves behind is bounded by the timeline's tiles and the segment groups,
// not by its events, and the results are merged in location order, so the
// page is the same whatever the number of workers.

// segmentPlan is how one analysis (the heat map, or the dynamics without
// phase series) cuts the run into segments: what variation.Analyze decides
// before it reads any event, and then the segments read.
type segmentPlan struct {
	v   *variation.Variation // dominance, region, synchronization regions
	cfg segmentConfig
	err error       // no region to segment by, or a location unreadable
	set *segmentSet // after the pass
	// same is an earlier plan that cuts the same segments: its are used.
	same *segmentPlan
}

// dominanceCache computes the time-dominant region once per set of extra
// synchronization patterns.
type dominanceCache struct {
	files  []*tracefile.File
	totals []variation.RegionTotal
	byKey  map[string]dominanceResult
}

type dominanceResult struct {
	d   variation.Dominance
	err error
}

func (c *dominanceCache) get(extra filter.Patterns) (variation.Dominance, error) {
	k := extra.String()
	if r, ok := c.byKey[k]; ok {
		return r.d, r.err
	}
	d, err := timeDominant(c.files, c.totals, analysis.SyncMatcher{Extra: extra})
	c.byKey[k] = dominanceResult{d, err}
	return d, err
}

// planSegments decides the segment region and the synchronization regions
// as variation.Analyze does.
func planSegments(dc *dominanceCache, region string, extra filter.Patterns) *segmentPlan {
	v := &variation.Variation{Sync: extra}
	p := &segmentPlan{v: v}
	dom, domErr := dc.get(extra)
	v.Dominance, v.HasDominance = dom, domErr == nil
	switch {
	case region != "":
		v.Region, v.Picked = region, true
		known := false
		for _, t := range dc.totals {
			known = known || t.Name == region
		}
		if !known {
			p.err = fmt.Errorf("analysis: no location visits a region named %q", region)
			return p
		}
	case domErr != nil:
		p.err = domErr
		return p
	default:
		v.Region = dom.Region.Name
	}
	sync := analysis.SyncMatcher{Extra: extra}
	for _, t := range dc.totals {
		if sync.Match(t.Name) && t.Name != v.Region {
			v.SyncRegions = append(v.SyncRegions, t.Name)
		}
	}
	sort.Strings(v.SyncRegions)
	p.cfg = segmentConfig{region: v.Region, sync: sync}
	return p
}

// segmentRef is a location as the analyses label it and place it in time.
type segmentRef struct {
	file, loc int
	label     string
	offset    int64 // ns, the file's start on tracefile.Axis
}

// segmentRefs lists the locations of files in file order with the labels
// and offsets of package variation.
func segmentRefs(files []*tracefile.File) []segmentRef {
	byFile := tracefile.SharedRank(files)
	axis := tracefile.NewAxis(files)
	var refs []segmentRef
	for i, f := range files {
		offset := axis.Nanos(i, f, f.Header.StartTicks>>f.Header.TimerShift)
		for j := range f.Locations {
			label := f.Locations[j].Name
			switch {
			case len(files) == 1:
			case byFile:
				label = fmt.Sprintf("%s:%s", filepath.Base(f.Path), label)
			default:
				label = fmt.Sprintf("%d:%s", f.Header.Rank, label)
			}
			refs = append(refs, segmentRef{file: i, loc: j, label: label, offset: offset})
		}
	}
	return refs
}

// readAll reads every location's events once, in parallel, into the
// timeline's encoders and the plans' segment scans, and returns the
// timeline.
func readAll(r *run, tp *timelinePlan, plans []*segmentPlan) (*timeline, error) {
	var active []*segmentPlan // plans that read segments, each once
	for _, p := range plans {
		if p.err != nil {
			continue
		}
		for _, q := range active {
			if q.cfg.region == p.cfg.region && q.v.Sync.String() == p.v.Sync.String() {
				p.same = q
			}
		}
		if p.same == nil {
			active = append(active, p)
		}
	}
	refs := segmentRefs(r.files)
	limit := groupsPerRow(len(refs))
	type result struct {
		lt    *locationTimeline
		scans []*segmentScan // per active plan
		err   error
	}
	results := make([]result, len(refs))
	parallel(len(refs), func(i int) {
		ref := refs[i]
		f := r.files[ref.file]
		loc := &f.Locations[ref.loc]
		res := &results[i]
		if !tp.beyond[ref.file][ref.loc] {
			res.lt = tp.newLocation(r, ref.file, loc, r.lookup)
		}
		for _, p := range active {
			res.scans = append(res.scans, newSegmentScan(p.cfg, f, ref.file, loc, ref.label, ref.offset, limit))
		}
		var e tracefile.Event
		it := f.Events(loc.ID)
		for it.Next(&e) {
			if res.lt != nil {
				res.lt.event(&e)
			}
			for _, s := range res.scans {
				s.event(&e)
			}
		}
		res.err = it.Err()
		if res.lt != nil {
			res.lt.err = res.err
		}
		for _, s := range res.scans {
			s.finish(loc)
		}
	})
	for k, p := range active {
		p.set = &segmentSet{cfg: p.cfg, width: 1}
		for i := range results {
			if err := results[i].err; err != nil {
				p.err, p.set = err, nil
				break
			}
			sc := results[i].scans[k]
			p.set.scans = append(p.set.scans, sc)
			p.set.width = max(p.set.width, sc.width)
		}
	}
	for _, p := range plans {
		if p.same != nil {
			p.set, p.err = p.same.set, p.same.err
		}
	}
	byLoc := make([][]*locationTimeline, len(r.files))
	for i, f := range r.files {
		byLoc[i] = make([]*locationTimeline, len(f.Locations))
	}
	for i, ref := range refs {
		byLoc[ref.file][ref.loc] = results[i].lt
	}
	tl, ok, err := tp.assemble(r, func(fi, k int) (*locationTimeline, bool) {
		lt := byLoc[fi][k]
		return lt, lt != nil && !lt.missed
	})
	if !ok {
		// An event used a region id its file does not define: the
		// placeholders are defined in the order of a sequential read.
		return tp.sequential(r)
	}
	return tl, err
}
