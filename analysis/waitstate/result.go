package waitstate

import (
	"cmp"
	"slices"
)

// Location is a location of the run: a thread or goroutine of a rank's
// file.
type Location struct {
	File int    `json:"file"` // index into the files analysed
	Loc  int    `json:"loc"`  // index into the file's Locations
	ID   uint32 `json:"id"`   // the location's id in its file
	Rank int    `json:"rank"`
	Name string `json:"name"` // "rank 3", "rank 3: thread 1", as the other tools label it
}

// Value is a pattern's time in one call path on one location.
type Value struct {
	Pattern Pattern
	Region  string // the region that waited (MPI_Recv, MPI_Waitall, ...)
	Path    int    // its call path, an index of Result.Paths (-1 in Delays: by region only)
	Loc     int    // index into Result.Locations
	Time    int64  // ns
	Count   int    // instances
}

// Delay is the root cause of one wait, as far as the trace tells: what the
// late party did while the other waited for it (the window of the wait),
// and what it computed since its previous synchronisation point before the
// operation it was late for.
type Delay struct {
	Loc      int    `json:"location"`    // the late location
	Region   string `json:"region"`      // the region the late party spent most of the window in (its own time)
	Time     int64  `json:"time_ns"`     // that region's time in the window, ns
	Interval int64  `json:"interval_ns"` // the window: the wait, ns
	// Since is when the late party left its previous synchronisation
	// point before the operation it was late for (ns on the run's axis,
	// -1: none, its work counts from its first event); Work is its time
	// in computation (no synchronisation call) from then to that
	// operation, WorkRegion the region with the most of it. Work is nil
	// when there was none.
	Since      int64  `json:"since_ns"`
	Work       *int64 `json:"work_ns,omitempty"`
	WorkRegion string `json:"work_region,omitempty"`
}

// CallPath is a node of the run's call tree: Region called from Parent
// (an index of Result.Paths, -1 at the top). Parents come before their
// children. The trees of the locations are merged by region name.
type CallPath struct {
	Parent int    `json:"parent"`
	Region string `json:"region"`
}

// Instance is one wait.
type Instance struct {
	Pattern Pattern
	Region  string
	Path    int // an index of Result.Paths
	Loc     int
	Start   int64 // when the waiting call was entered, ns on the run's axis
	Time    int64 // the wait, ns
	Peer    int   // the late location (sender, root, last to enter), -1 if none
	Delay   *Delay
}

// Result is the wait states of a run.
type Result struct {
	Locations []Location
	// Paths is the call tree of the synchronisation calls that waited,
	// of the regions on the critical path, and of their callers.
	Paths []CallPath
	// Total is the time of the run summed over its locations (each from
	// its first event to its last), ns: the base of Share.
	Total int64
	// Synced tells whether the files' clocks were aligned by clock-sync
	// points; without them, waits between ranks are only as good as the
	// wall-clock starts.
	Synced bool

	Totals [NumPatterns]int64
	Counts [NumPatterns]int
	// Values holds every non-zero (pattern, call path, location) time,
	// sorted by pattern, region, call path, location.
	Values []Value
	// Delays holds the waits charged to what the late party did during
	// them (the window of each wait, a first look at the delay; the delay
	// costs proper, on the synchronisation intervals, are DelayCosts): per
	// pattern, the late location's regions, each with its own time during
	// the waits it caused. A synchronisation call among them means the
	// late party was itself waiting: the delay came from further back.
	// Sorted as Values.
	Delays []Value
	// Worst are the longest waits, longest first (at most Options.Worst).
	Worst []Instance
	// DelayCosts are the delay costs of Böhme et al. (delaycost.go): per
	// pattern of the direct waits, the call paths on the late locations
	// that caused them, short-term (the direct waits) and long-term (the
	// waits those propagated into), sorted by pattern, long-term after
	// short-term, call path, location. DelayUnexplained is the waiting
	// time (with what it carried) whose late party showed neither excess
	// time nor a wait of its own in the interval, ns.
	DelayCosts       []DelayCost
	DelayUnexplained int64
	// CriticalPath is the run's critical path and the regions' part in it
	// (nil for a run without events).
	CriticalPath *CriticalPath
	// DelayIncomplete counts, in-situ, the waits whose cost never reached
	// their late party (a rank failed in the replay's rounds): the delay
	// costs lack them.
	DelayIncomplete uint64

	// Unmatched counts receives without their send among the files, and
	// collectives some member of which is missing (not in the files, or
	// shed by the buffer): they are not replayed.
	UnmatchedRecvs, UnmatchedSends, UnmatchedCollectives uint64
	// Unresolved counts messages whose peer is no location of the files.
	Unresolved uint64
	// ClockViolations counts messages received before their send was
	// entered on the axis: the waits are clipped there.
	ClockViolations uint64
}

// Share returns the pattern's share of the run's time (0 to 1).
func (r *Result) Share(p Pattern) float64 {
	if r.Total <= 0 || p >= NumPatterns {
		return 0
	}
	return float64(r.Totals[p]) / float64(r.Total)
}

// Time returns the pattern's time in region (over all its call paths) on
// location loc, ns.
func (r *Result) Time(p Pattern, region string, loc int) int64 {
	var ns int64
	for _, v := range r.Pattern(p) {
		if v.Region == region && v.Loc == loc {
			ns += v.Time
		}
	}
	return ns
}

// PathTime returns the pattern's time in call path path (an index of
// Paths) on location loc, ns: the value of a (call path, location) cell
// of a profile with the pattern as metric.
func (r *Result) PathTime(p Pattern, path, loc int) int64 {
	for _, v := range r.Pattern(p) {
		if v.Path == path && v.Loc == loc {
			return v.Time
		}
	}
	return 0
}

// PathName returns call path i as its regions' names from the top, joined
// by " > ".
func (r *Result) PathName(i int) string {
	if i < 0 || i >= len(r.Paths) {
		return ""
	}
	name := r.Paths[i].Region
	for p := r.Paths[i].Parent; p >= 0; p = r.Paths[p].Parent {
		name = r.Paths[p].Region + " > " + name
	}
	return name
}

// Pattern returns the values of pattern p, sorted by region, call path and
// location.
func (r *Result) Pattern(p Pattern) []Value {
	lo, _ := slices.BinarySearchFunc(r.Values, p, func(v Value, p Pattern) int { return cmp.Compare(v.Pattern, p) })
	hi, _ := slices.BinarySearchFunc(r.Values, p+1, func(v Value, p Pattern) int { return cmp.Compare(v.Pattern, p) })
	return r.Values[lo:hi]
}

// Regions returns the regions with a wait of any pattern, sorted.
func (r *Result) Regions() []string {
	var out []string
	for _, v := range r.Values {
		out = append(out, v.Region)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ByLocation returns the pattern's time per location, ns, indexed as
// Locations.
func (r *Result) ByLocation(p Pattern) []int64 {
	out := make([]int64, len(r.Locations))
	for _, v := range r.Pattern(p) {
		out[v.Loc] += v.Time
	}
	return out
}

func compareValue(a, b Value) int {
	if a.Pattern != b.Pattern {
		return cmp.Compare(a.Pattern, b.Pattern)
	}
	if a.Region != b.Region {
		return cmp.Compare(a.Region, b.Region)
	}
	if a.Path != b.Path {
		return cmp.Compare(a.Path, b.Path)
	}
	return cmp.Compare(a.Loc, b.Loc)
}

// compareInstance orders waits longest first, then by place and time, so
// that the worst are the same whatever the order they were found in.
func compareInstance(a, b Instance) int {
	if a.Time != b.Time {
		return cmp.Compare(b.Time, a.Time)
	}
	if a.Pattern != b.Pattern {
		return cmp.Compare(a.Pattern, b.Pattern)
	}
	if a.Loc != b.Loc {
		return cmp.Compare(a.Loc, b.Loc)
	}
	if a.Start != b.Start {
		return cmp.Compare(a.Start, b.Start)
	}
	return cmp.Compare(a.Region, b.Region)
}

// sortByTime orders values by time, largest first, then as Values.
func sortByTime(vs []Value) {
	slices.SortFunc(vs, func(a, b Value) int {
		if a.Time != b.Time {
			return cmp.Compare(b.Time, a.Time)
		}
		return compareValue(a, b)
	})
}
