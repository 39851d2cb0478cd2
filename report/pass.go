package report

import (
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The report reads the trace once: every location's events stream through
// the timeline's encoder and the segment scans of the heat map and the
// dynamics together, the locations on Options.Procs workers. What a location
// leaves behind is bounded by the timeline's tiles and the segment groups,
// not by its events, and the results are merged in location order, so the
// page is the same whatever the number of workers.

// segmentPlan is how one analysis (the heat map, or the dynamics without
// phase series) cuts the run into segments: what variation.Analyze decides
// before it reads any event, and then the segments read.
type segmentPlan struct {
	plan *variation.Plan // dominance, region, synchronization regions
	err  error           // no region to segment by, or a location unreadable
	set  *segmentSet     // after the pass
	// same is an earlier plan that cuts the same segments: its are used.
	same *segmentPlan
}

// planSegments decides the segment region and the synchronization regions
// as variation.Analyze does.
func planSegments(pl *variation.Planner, region string, extra filter.Patterns) *segmentPlan {
	p, err := pl.Plan(region, extra)
	return &segmentPlan{plan: p, err: err}
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
			if q.plan.Region == p.plan.Region && q.plan.Sync.String() == p.plan.Sync.String() {
				p.same = q
			}
		}
		if p.same == nil {
			active = append(active, p)
		}
	}
	refs := variation.Locations(r.files)
	limit := groupsPerRow(len(refs))
	type result struct {
		lt    *locationTimeline
		scans []*segmentScan // per active plan
		tasks int
		tree  *pathTree // nil when the location has its exact call paths
		err   error
	}
	results := make([]result, len(refs))
	// A location that cannot be read fails its own result, not the pass:
	// the timeline and the analyses say so each in their place.
	_ = parallel.Do(r.procs, len(refs), func(i int) error {
		ref := refs[i]
		f := r.files[ref.File]
		loc := ref.Location
		res := &results[i]
		if !tp.beyond[ref.File][ref.Index] {
			res.lt = tp.newLocation(r, ref.File, ref.Index, r.lookup)
		}
		for _, p := range active {
			res.scans = append(res.scans, newSegmentScan(p.plan, f, ref, i, limit))
		}
		// A location not drawn still has its tasks counted, for the table
		// of locations.
		tasks := &taskTrack{countOnly: true}
		if res.lt != nil {
			tasks = &res.lt.tasks
		}
		if len(loc.CallPaths) == 0 {
			res.tree = newPathTree()
		}
		regionOf := func(id uint32) (int, bool) { return r.lookup(ref.File, id) }
		var e tracefile.Event
		it := f.Events(loc.ID)
		for it.Next(&e) {
			if res.tree != nil && (e.Kind == encode.KindEnter || e.Kind == encode.KindLeave) {
				res.tree.event(&e, f.Nanos(e.Time), regionOf)
			}
			if res.lt != nil {
				res.lt.event(&e)
			} else if e.Kind >= encode.KindTaskSwitch && e.Kind <= encode.KindTaskSuspend {
				tasks.event(&e, 0)
			}
			for _, s := range res.scans {
				s.event(&e)
			}
		}
		res.err = it.Err()
		if res.lt != nil {
			res.lt.err = res.err
			res.lt.done()
		} else {
			tasks.finish(0)
		}
		res.tasks = tasks.total()
		if res.tree != nil {
			res.tree.finish()
		}
		for _, s := range res.scans {
			s.finish()
		}
		return nil
	})
	for k, p := range active {
		p.set = &segmentSet{width: 1}
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
	r.tasks = make([][]int, len(r.files))
	for i, f := range r.files {
		r.tasks[i] = make([]int, len(f.Locations))
	}
	r.trees = make([][]*pathTree, len(r.files))
	for i, f := range r.files {
		r.trees[i] = make([]*pathTree, len(f.Locations))
	}
	for i, ref := range refs {
		byLoc[ref.File][ref.Index] = results[i].lt
		r.tasks[ref.File][ref.Index] = results[i].tasks
		r.trees[ref.File][ref.Index] = results[i].tree
		if results[i].tree == nil {
			// The exact call paths: their regions may define placeholders,
			// which only one goroutine may do.
			r.trees[ref.File][ref.Index] = exactTree(r, ref.File, &r.files[ref.File].Locations[ref.Index])
		}
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
