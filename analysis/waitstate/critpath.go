package waitstate

import (
	"cmp"
	"slices"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The critical path follows Böhme et al. ("Scalable critical-path based
// performance analysis"): the run's longest chain of activities without a
// wait in it. It is found backwards from the end of the location that
// finished last: walking back in time on a location, the first wait met
// (the latest one that ended before the point reached) hands the path over
// to the late party, at the moment it entered the operation the wait was
// for, which is when the wait ended. What the path crossed on each
// location is then charged to the call paths the location was in.

// CriticalPath is the run's critical path: how long it is, where it ran,
// and how much of it each call path on each location holds.
type CriticalPath struct {
	// Start and End bound the path on the run's axis, ns; Length is
	// End − Start (the path has no gap).
	Start  int64 `json:"start_ns"`
	End    int64 `json:"end_ns"`
	Length int64 `json:"length_ns"`
	// Last is the location whose end is the path's end (the latest to
	// finish); Hops counts the times the path moved to a late party.
	Last int `json:"last_location"`
	Hops int `json:"hops"`
	// Values holds the path's time per (call path, location), sorted by
	// call path, then location. Time in a synchronisation call (past its
	// wait) is the call's; time in a removed region is its caller's.
	Values []PathTime `json:"values"`
	// Regions is the critical-path profile by region and its imbalance,
	// largest share of the path first.
	Regions []RegionImbalance `json:"regions"`
}

// PathTime is a time in one call path on one location.
type PathTime struct {
	Region string `json:"region"`
	Path   int    `json:"call_path"` // an index of Result.Paths
	Loc    int    `json:"location"`
	Time   int64  `json:"time_ns"`
}

// RegionImbalance is a region's part in the critical path and the
// critical-path imbalance of Böhme et al.: the path's time in the region
// less the region's mean time per location (its exclusive time, as the
// flat profile counts it, less the waits found in it), when positive. A
// region with a large imbalance is where shortening the slowest location
// shortens the run; a balanced region's time on the path is the same on
// every location and only a faster region helps.
type RegionImbalance struct {
	Region    string `json:"region"`
	Path      int64  `json:"path_ns"`      // time on the critical path
	Mean      int64  `json:"mean_ns"`      // mean time per location, waits excluded
	Imbalance int64  `json:"imbalance_ns"` // max(0, Path − Mean)
}

// span is a stretch of one location's time the path crosses.
type span struct{ start, end int64 }

// releaseAt is a wait as the backward walk sees it: when it ended and who
// it waited for.
type releaseAt struct {
	end  int64
	peer int
}

// criticalPath walks the waits back from the end of the run and charges
// the path to the call paths it crossed.
func (a *analysis) criticalPath(procs int, res *Result, waits []wait) (*CriticalPath, error) {
	if len(a.data) == 0 {
		return nil, nil
	}
	byLoc := make([][]releaseAt, len(a.data))
	for _, w := range waits {
		// A wrong-order wait repeats its Late Sender wait.
		if w.Pattern == LateSenderWrongOrder || w.Peer < 0 || w.Peer == w.Loc || w.Time <= 0 {
			continue
		}
		byLoc[w.Loc] = append(byLoc[w.Loc], releaseAt{w.Start + w.Time, w.Peer})
	}
	for _, l := range byLoc {
		slices.SortFunc(l, func(x, y releaseAt) int {
			if x.end != y.end {
				return cmp.Compare(x.end, y.end)
			}
			return cmp.Compare(x.peer, y.peer)
		})
	}
	last := 0
	for n, d := range a.data {
		if d.last > a.data[last].last {
			last = n
		}
	}
	cp := &CriticalPath{End: a.data[last].last, Last: last}
	spans := make([][]span, len(a.data))
	// Each hop moves strictly back in time (only waits that ended before
	// the point reached count), so the walk ends.
	loc, t := last, cp.End
	for {
		l := byLoc[loc]
		i, _ := slices.BinarySearchFunc(l, t, func(r releaseAt, t int64) int { return cmp.Compare(r.end, t) })
		first := a.data[loc].first
		if i == 0 || l[i-1].end <= first {
			spans[loc] = append(spans[loc], span{min(first, t), t})
			cp.Start = min(first, t)
			break
		}
		r := l[i-1]
		spans[loc] = append(spans[loc], span{r.end, t})
		loc, t = r.peer, r.end
		cp.Hops++
	}
	cp.Length = cp.End - cp.Start

	// Charge the spans to call paths, location by location.
	times := make([]map[int32]int64, len(a.data))
	if err := parallel.Do(procs, len(a.data), func(n int) error {
		if len(spans[n]) == 0 {
			return nil
		}
		slices.Reverse(spans[n]) // the walk went backwards
		times[n] = map[int32]int64{}
		return a.pathSweep(n, spans[n], times[n])
	}); err != nil {
		return nil, err
	}
	a.unifyPaths()
	for n, m := range times {
		for p, ns := range m {
			g := a.paths[n][p]
			cp.Values = append(cp.Values, PathTime{Region: a.tree[g].Region, Path: g, Loc: n, Time: ns})
		}
	}
	slices.SortFunc(cp.Values, func(x, y PathTime) int {
		if x.Path != y.Path {
			return cmp.Compare(x.Path, y.Path)
		}
		return cmp.Compare(x.Loc, y.Loc)
	})
	cp.Regions = a.imbalance(res, cp.Values)
	return cp, nil
}

// imbalance is the critical-path profile by region against the regions'
// mean time per location.
func (a *analysis) imbalance(res *Result, vals []PathTime) []RegionImbalance {
	onPath := map[string]int64{}
	for _, v := range vals {
		onPath[v.Region] += v.Time
	}
	// The flat profile's exclusive time is exact even where the buffer
	// shed events; the waits are the replay's.
	total := map[string]int64{}
	for _, lo := range a.locs {
		f := a.files[lo.File]
		for _, p := range f.Locations[lo.Loc].Profile {
			name := f.RegionName(p.Region)
			if _, ok := onPath[name]; ok {
				total[name] += f.TicksToNanos(p.Exclusive)
			}
		}
	}
	for _, v := range res.Values {
		if v.Pattern == LateSenderWrongOrder {
			continue
		}
		if _, ok := onPath[v.Region]; ok {
			total[v.Region] -= v.Time
		}
	}
	out := make([]RegionImbalance, 0, len(onPath))
	for name, ns := range onPath {
		mean := max(total[name], 0) / int64(max(len(a.locs), 1))
		out = append(out, RegionImbalance{Region: name, Path: ns, Mean: mean, Imbalance: max(ns-mean, 0)})
	}
	slices.SortFunc(out, func(x, y RegionImbalance) int {
		if x.Path != y.Path {
			return cmp.Compare(y.Path, x.Path)
		}
		return cmp.Compare(x.Region, y.Region)
	})
	return out
}

// pathSweep reads location n's events and adds to times, per local call
// path, the part of spans (sorted, disjoint) the location spent in it: in
// the region on top of its stack, or in the open synchronisation call
// whatever that calls. It stops reading after the last span.
func (a *analysis) pathSweep(n int, spans []span, times map[int32]int64) error {
	lo := a.locs[n]
	f := a.files[lo.File]
	d := a.data[n]
	var (
		e       tracefile.Event
		stack   []frame
		sync    = -1 // the outermost open synchronisation call's place in stack
		prev    int64
		started bool
		next    int
	)
	charge := func(s, t int64) {
		for next < len(spans) && spans[next].end <= s {
			next++
		}
		for i := next; i < len(spans) && spans[i].start < t; i++ {
			ov := min(t, spans[i].end) - max(s, spans[i].start)
			if ov <= 0 {
				continue
			}
			at := len(stack) - 1
			if sync >= 0 {
				at = sync
			}
			for at >= 0 && stack[at].region == 0 {
				at--
			}
			if at >= 0 {
				times[d.pathOf(stack, at)] += ov
			}
		}
	}
	it := f.Events(lo.ID)
	for next < len(spans) && it.Next(&e) {
		if e.Kind != encode.KindEnter && e.Kind != encode.KindLeave {
			continue
		}
		t := a.axis.Nanos(lo.File, f, e.Time)
		if started && t > prev && len(stack) > 0 {
			charge(prev, t)
		}
		prev, started = max(prev, t), true
		switch e.Kind {
		case encode.KindEnter:
			for len(stack) < e.Depth-1 {
				stack = append(stack, frame{call: -1, path: -1})
			}
			if k := a.kind(lo.File, e.Region); sync < 0 && (k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier) {
				sync = len(stack)
			}
			stack = append(stack, frame{region: e.Region, call: -1, path: -2})
		case encode.KindLeave:
			if len(stack) == 0 {
				break
			}
			m := len(stack) - 1
			for m > 0 && stack[m-1].region == 0 {
				m--
			}
			stack = stack[:m]
			if sync >= len(stack) {
				sync = -1
			}
		}
	}
	return it.Err()
}
