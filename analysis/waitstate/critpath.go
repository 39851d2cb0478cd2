package waitstate

import (
	"cmp"
	"slices"
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
	// wait) is the call's; time in a removed region is its caller's; time
	// a location spent in no region at all is in none, so Values may add
	// up to less than Length.
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

// sortReleases sorts l by end, then peer: by a radix sort of the ends,
// with only the releases ending together compared (equal ones are the
// same), through keys, a scratch list.
func sortReleases(l []releaseAt, keys *[]keyed) {
	if len(l) < 256 {
		slices.SortFunc(l, compareRelease)
		return
	}
	k := (*keys)[:0]
	for i, r := range l {
		k = append(k, keyed{r.end, int32(i)})
	}
	sortKeyed(k)
	sorted := make([]releaseAt, len(l))
	for i, x := range k {
		sorted[i] = l[x.i]
	}
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && sorted[hi].end == sorted[lo].end {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(sorted[lo:hi], compareRelease)
		}
		lo = hi
	}
	copy(l, sorted)
	*keys = k
}

func compareRelease(x, y releaseAt) int {
	if x.end != y.end {
		return cmp.Compare(x.end, y.end)
	}
	return cmp.Compare(x.peer, y.peer)
}

// walkCriticalPath walks the waits back from the end of the run: the
// path, and the spans it crossed on each location (latest first), for the
// second pass to charge to call paths.
func (a *analysis) walkCriticalPath(waits []wait) (*CriticalPath, [][]span) {
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
	var keys []keyed
	for _, l := range byLoc {
		sortReleases(l, &keys)
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
	return cp, spans
}

// finishCriticalPath puts the second pass's path times into cp, by
// run-wide call path, and the imbalance.
func (a *analysis) finishCriticalPath(cp *CriticalPath, outs []delayOut, res *Result) {
	for n, o := range outs {
		for p, ns := range o.path {
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
	return imbalanceOf(onPath, total, res.Values, len(a.locs))
}

// imbalanceOf is the critical-path profile by region: onPath is the
// path's time per region, total the regions' exclusive time summed over
// the run's locations (those on the path at least), waits the wait
// states' values, locs the number of locations.
func imbalanceOf(onPath, total map[string]int64, waits []Value, locs int) []RegionImbalance {
	for _, v := range waits {
		if v.Pattern == LateSenderWrongOrder {
			continue
		}
		if _, ok := onPath[v.Region]; ok {
			total[v.Region] -= v.Time
		}
	}
	out := make([]RegionImbalance, 0, len(onPath))
	for name, ns := range onPath {
		mean := max(total[name], 0) / int64(max(locs, 1))
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
