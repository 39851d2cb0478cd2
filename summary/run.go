package summary

import (
	"cmp"
	"math/bits"
	"slices"
	"sort"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// RunProfile is what the summary says of a run as a whole, computed from
// the ranks' statistics (flat profiles, level statistics, reductions,
// throttled regions), never from their events: so it can be computed from
// a live measurement's snapshot as well as from a file. Local makes one
// rank's, Merge puts two together; Merge is associative and commutative,
// so the ranks of a run can reduce theirs in any tree and get the profile
// of the whole run, the same bytes (MarshalBinary) as one pass over the
// files. Times are exact integers in ns, each rank's ticks converted with
// its own clock rate as the flat profile does.
//
// The profiles merged must be of distinct ranks: a rank merged twice is
// counted once in Ranks and twice in every sum.
type RunProfile struct {
	Ranks RankSet // the ranks merged in
	Facts RunFacts
	// Regions are the regions of any rank, unified as the run's
	// definitions are (tracefile.RunDefinitions: name, source file, line
	// and paradigm), sorted by name, paradigm, file, then line.
	Regions []RegionStats
	Buffer  BufferStats
	// Throttled are the regions switched off by HMB_THROTTLE on any rank,
	// sorted by name, then paradigm.
	Throttled []ThrottledStats
}

// RankRange is the ranks First to Last, both included.
type RankRange struct{ First, Last int }

// RankSet is a set of ranks as sorted, disjoint, non-adjacent ranges: the
// ranks of a run take one range whatever their number.
type RankSet []RankRange

// Len returns the number of ranks in the set.
func (s RankSet) Len() int {
	n := 0
	for _, r := range s {
		n += r.Last - r.First + 1
	}
	return n
}

// Contains reports whether rank is in the set.
func (s RankSet) Contains(rank int) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].Last >= rank })
	return i < len(s) && s[i].First <= rank
}

// union returns the ranks of s and o, in a new slice.
func (s RankSet) union(o RankSet) RankSet {
	if len(s)+len(o) == 0 {
		return nil
	}
	all := make(RankSet, 0, len(s)+len(o))
	all = append(append(all, s...), o...)
	slices.SortFunc(all, func(a, b RankRange) int { return cmp.Compare(a.First, b.First) })
	out := all[:0]
	for _, r := range all {
		if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Stat is a quantity of the ranks: its sum over all of them, and its
// minimum and maximum over the ranks that have it (the ranks that entered
// a region, for a region's). A rank that does not have it counts 0, which
// RunProfile.Spread puts in.
type Stat struct{ Sum, Min, Max int64 }

func (s Stat) merge(o Stat) Stat {
	return Stat{s.Sum + o.Sum, min(s.Min, o.Min), max(s.Max, o.Max)}
}

func one(v int64) Stat { return Stat{v, v, v} }

// RunFacts are the run's facts from the ranks' headers.
type RunFacts struct {
	Names []string // the ranks' run names, sorted: one for the ranks of one run
	Hosts []string // the hosts the ranks ran on, sorted
	Start int64    // the earliest rank's start, Unix ns
	// Duration is the length of the ranks' measurements, ns.
	Duration Stat
	// Locations counts the ranks' locations; LocationTime is the run's
	// location-time, each location counting its rank's whole measurement:
	// the 100 % of the profile's shares.
	Locations    int64
	LocationTime int64
	Clocks       []string // clock sources, sorted
	// The ranks' clock rates (ticks per second), timer shifts and probe
	// costs (ns per event), least and greatest.
	MinRate, MaxRate           float64
	MinShift, MaxShift         uint8
	MinProbeCost, MaxProbeCost float64
}

// RegionStats is one region's line of the run's profile.
type RegionStats struct {
	Name     string
	Paradigm tracefile.Paradigm
	// File and Line are where it is defined, "" and 0 if nowhere: two
	// regions of one name in different sources are two regions.
	File  string
	Line  int
	Ranks int // the ranks whose profile has the region
	// Per rank, summed over its locations: the visits counted (timed or,
	// after the probes switched the region off, not), the inclusive and
	// exclusive time in ns.
	Visits, Inclusive, Exclusive Stat
	// Slowest is the rank with the most inclusive time, the lowest of
	// equals among the ranks that have the region (RunProfile.SlowestRank
	// counts the others too).
	Slowest int
	// VisitsAfter are the visits counted but not timed once the probes
	// had switched the region off (HMB_THROTTLE), summed; Throttled is set
	// when any rank did. The times then cover only Visits.Sum - VisitsAfter.
	VisitsAfter uint64
	Throttled   bool
	// Counters are the region's counter sums by metric name, sorted, for a
	// region that read counters.
	Counters []CounterSums
}

// CounterSums are a region's inclusive and exclusive sums of one counter.
type CounterSums struct {
	Metric               string
	Inclusive, Exclusive uint64
}

// BufferStats is the story of the run's buffers: what they kept, filtered
// and removed, summed over the ranks, and which ranks lost most.
type BufferStats struct {
	Recorded, Kept, FilteredName, FilteredDuration uint64
	KeptByClass                                    [tracefile.NumClasses]uint64
	Removed                                        tracefile.ByReason
	Usage                                          tracefile.UsageErrors
	// Depths is what happened at each calling depth, sorted by depth.
	Depths []DepthStats
	// Bins and Bytes are the bins the ranks' files hold and the bytes of
	// their records (LocalFile; 0 for a profile made by Local).
	Bins, Bytes uint64
	// BufferSize and BinSize are the ranks' settings, in bytes.
	BufferSize, BinSize Stat
	Policies            []string // reduction policies, sorted
	// Worst is the rank that kept the smallest share of its events, the
	// lowest of equals (a rank that recorded none kept all).
	Worst RankShare
	// Reduced are the ranks whose buffer reduced at least once, Steps
	// their reduction steps by reason (a keep-last entry counts each of
	// its steps).
	Reduced RankSet
	Steps   [tracefile.NumReasons]uint64
	// Unbalanced are the ranks whose recorded events are not kept +
	// filtered + removed.
	Unbalanced RankSet
	// Interrupted and Windowed count the locations a signal ended while
	// they recorded, and those whose oldest bins keep-last revoked.
	Interrupted, Windowed uint64
	// Recovered are the ranks whose trace hmbtrace recover made from the
	// mapping the process left: their counts of events recorded,
	// filtered and dropped are lower bounds, at least Unaccounted more
	// were published as recorded; Died are those of them that ended
	// without a handler seeing a signal (SIGKILL, the OOM killer, a
	// crash, _exit), whose interrupted locations no signal ended.
	Recovered, Died RankSet
	Unaccounted     uint64
	Messages        MessageSums
}

// DepthStats is what happened at one calling depth, over the ranks.
type DepthStats struct {
	Depth       int
	Kept        uint64
	Removed     tracefile.ByReason
	ClosedRanks int // ranks whose depth policy closed the depth
}

// RankShare is a rank's events kept of those recorded.
type RankShare struct {
	Rank           int
	Kept, Recorded uint64
}

// MessageSums are the messages of the exact matrices, counted at the
// probe, and the message events the buffers shed.
type MessageSums struct {
	Locations                                uint64 // locations with an exact matrix
	Sent, SentBytes, Received, ReceivedBytes uint64
	Shed                                     uint64
}

// ThrottledStats is a region switched off by HMB_THROTTLE, over the ranks.
type ThrottledStats struct {
	Name      string
	Paradigm  tracefile.Paradigm
	Ranks     int    // ranks that switched it off
	Locations uint64 // locations that did
	// FirstAt is the earliest time it was switched off, in ns since the
	// start of its rank's measurement.
	FirstAt             int64
	Visits, VisitsAfter uint64 // timed before, counted after, summed
}

// LocalFile is Local of an opened file's trace and rank, with the bins and
// bytes the file holds.
func LocalFile(f *tracefile.File) RunProfile {
	p := Local(&f.Trace, f.Header.Rank)
	n, b := f.Bins()
	p.Buffer.Bins, p.Buffer.Bytes = uint64(n), uint64(b)
	return p
}

// Local computes the run profile of one rank from its trace's statistics:
// a file's, or a live measurement's snapshot.
func Local(t *tracefile.Trace, rank int) RunProfile {
	t = t.Collected()
	h := &t.Header
	dur := t.Duration()
	p := RunProfile{
		Ranks: RankSet{{rank, rank}},
		Facts: RunFacts{
			Names:        []string{h.Name},
			Hosts:        []string{h.Host},
			Start:        h.StartWall.UnixNano(),
			Duration:     one(dur),
			Locations:    int64(len(t.Locations)),
			LocationTime: dur * int64(len(t.Locations)),
			Clocks:       []string{h.Clock},
			MinRate:      h.TicksPerSecond, MaxRate: h.TicksPerSecond,
			MinShift: h.TimerShift, MaxShift: h.TimerShift,
			MinProbeCost: h.ProbeCost, MaxProbeCost: h.ProbeCost,
		},
	}
	if h.StartWall.IsZero() {
		p.Facts.Start = 0
	}
	p.Regions = localRegions(t, rank)
	p.Buffer = localBuffer(t, rank)
	p.Throttled = localThrottled(t)
	return p
}

// regionKey is how the run unifies regions, as its definitions do
// (tracefile.RunDefinitions): by name, paradigm and source.
type regionKey struct {
	name     string
	paradigm tracefile.Paradigm
	file     string
	line     int
}

func (a regionKey) compare(b regionKey) int {
	if c := keyCompare(a.name, a.paradigm, b.name, b.paradigm); c != 0 {
		return c
	}
	if c := cmp.Compare(a.file, b.file); c != 0 {
		return c
	}
	return cmp.Compare(a.line, b.line)
}

func keyCompare(an string, ap tracefile.Paradigm, bn string, bp tracefile.Paradigm) int {
	if c := cmp.Compare(an, bn); c != 0 {
		return c
	}
	return cmp.Compare(ap, bp)
}

// regionKeyOf returns the key of region id of t.
func regionKeyOf(t *tracefile.Trace, id uint32) regionKey {
	k := regionKey{name: t.RegionName(id), paradigm: tracefile.ParadigmUser}
	if r := t.RegionByID(id); r != nil {
		k.paradigm, k.file, k.line = r.Paradigm, r.File, r.Line
	}
	return k
}

// paradigmOf returns the paradigm of region id, the user's if unknown.
func paradigmOf(t *tracefile.Trace, id uint32) tracefile.Paradigm {
	if id >= 1 && int(id) <= len(t.Regions) && t.Regions[id-1].ID == id {
		return t.Regions[id-1].Paradigm
	}
	for _, r := range t.Regions {
		if r.ID == id {
			return r.Paradigm
		}
	}
	return tracefile.ParadigmUser
}

// localRegions sums the flat profiles of t's locations per region, the
// rank's line for each: as profile does, each location's ticks converted
// to ns before they are summed.
func localRegions(t *tracefile.Trace, rank int) []RegionStats {
	type sums struct {
		visits, incl, excl int64
		after              uint64
		throttled          bool
		cincl, cexcl       map[string]uint64
	}
	rows := map[regionKey]*sums{}
	for i := range t.Locations {
		for _, e := range t.Locations[i].Profile {
			k := regionKeyOf(t, e.Region)
			s := rows[k]
			if s == nil {
				s = &sums{}
				rows[k] = s
			}
			s.visits += int64(e.Visits)
			s.incl += t.TicksToNanos(e.Inclusive)
			s.excl += t.TicksToNanos(e.Exclusive)
			if e.Throttled {
				s.throttled = true
				s.after += e.VisitsAfter
				s.visits += int64(e.VisitsAfter)
			}
			for m, v := range e.CounterInclusive {
				if m >= len(t.Header.Metrics) {
					break
				}
				if s.cincl == nil {
					s.cincl, s.cexcl = map[string]uint64{}, map[string]uint64{}
				}
				name := t.Header.Metrics[m]
				s.cincl[name] += v
				if m < len(e.CounterExclusive) {
					s.cexcl[name] += e.CounterExclusive[m]
				}
			}
		}
	}
	var out []RegionStats
	for k, s := range rows {
		r := RegionStats{Name: k.name, Paradigm: k.paradigm, File: k.file, Line: k.line, Ranks: 1, Visits: one(s.visits), Inclusive: one(s.incl), Exclusive: one(s.excl),
			Slowest: rank, VisitsAfter: s.after, Throttled: s.throttled}
		for m, v := range s.cincl {
			r.Counters = append(r.Counters, CounterSums{m, v, s.cexcl[m]})
		}
		slices.SortFunc(r.Counters, func(a, b CounterSums) int { return cmp.Compare(a.Metric, b.Metric) })
		out = append(out, r)
	}
	slices.SortFunc(out, compareRegions)
	return out
}

// localBuffer is the rank's buffer story from its statistics.
func localBuffer(t *tracefile.Trace, rank int) BufferStats {
	tot := t.Totals()
	h := &t.Header
	b := BufferStats{
		Recorded: tot.Recorded, Kept: tot.Kept, FilteredName: tot.FilteredName, FilteredDuration: tot.FilteredDuration,
		KeptByClass: tot.KeptByClass, Removed: tot.Removed, Usage: tot.Usage,
		BufferSize: one(int64(h.BufferSize)), BinSize: one(int64(h.BinSize)),
		Policies: []string{h.Policy},
		Worst:    RankShare{rank, tot.Kept, tot.Recorded},
	}
	for _, d := range tot.Depths {
		ds := DepthStats{Depth: d.Depth, Kept: d.Kept, Removed: d.Removed}
		if d.Closed {
			ds.ClosedRanks = 1
		}
		b.Depths = append(b.Depths, ds)
	}
	if len(t.Reductions) > 0 {
		b.Reduced = RankSet{{rank, rank}}
	}
	for _, r := range t.Reductions {
		if r.Reason >= tracefile.NumReasons {
			continue
		}
		n := uint64(1)
		if r.Reason == tracefile.ByLast && r.Steps > 0 {
			n = uint64(r.Steps)
		}
		b.Steps[r.Reason] += n
	}
	if tot.Recorded != tot.Kept+tot.FilteredName+tot.FilteredDuration+tot.Removed.Total() {
		b.Unbalanced = RankSet{{rank, rank}}
	}
	if r := t.Recovered; r != nil {
		b.Recovered, b.Unaccounted = RankSet{{rank, rank}}, r.Unaccounted
		if r.End == tracefile.EndUnknown {
			b.Died = RankSet{{rank, rank}}
		}
	}
	for i := range t.Locations {
		l := &t.Locations[i]
		if l.Interrupted {
			b.Interrupted++
		}
		if l.Windowed {
			b.Windowed++
		}
		for _, lv := range l.Levels {
			if lv.Class == tracefile.ClassMessage {
				b.Messages.Shed += lv.Removed().Total()
			}
		}
		if l.Comm != nil {
			m := &b.Messages
			m.Locations++
			for _, c := range l.Comm {
				m.Sent += c.Sent
				m.SentBytes += c.SentBytes
				m.Received += c.Received
				m.ReceivedBytes += c.ReceivedBytes
			}
		}
	}
	return b
}

// localThrottled is the rank's throttled regions, unified by name and
// paradigm.
func localThrottled(t *tracefile.Trace) []ThrottledStats {
	var out []ThrottledStats
	for _, r := range t.Throttled() {
		s := ThrottledStats{Name: r.Name, Paradigm: paradigmOf(t, r.Region), Ranks: 1, Locations: uint64(r.Locations), FirstAt: r.FirstAt,
			Visits: r.Visits, VisitsAfter: r.VisitsAfter}
		i, found := slices.BinarySearchFunc(out, s, compareThrottled)
		if found {
			out[i] = mergeThrottled(out[i], s)
			out[i].Ranks = 1
			continue
		}
		out = slices.Insert(out, i, s)
	}
	return out
}

func compareThrottled(a, b ThrottledStats) int {
	return keyCompare(a.Name, a.Paradigm, b.Name, b.Paradigm)
}

func mergeThrottled(a, b ThrottledStats) ThrottledStats {
	a.Ranks += b.Ranks
	a.Locations += b.Locations
	a.FirstAt = min(a.FirstAt, b.FirstAt)
	a.Visits += b.Visits
	a.VisitsAfter += b.VisitsAfter
	return a
}

// Merge adds o's ranks to p: p becomes the profile of both. o is not
// changed, and p shares no memory with it that a later Merge changes.
func (p *RunProfile) Merge(o *RunProfile) {
	if len(o.Ranks) == 0 {
		return
	}
	if len(p.Ranks) == 0 {
		// The zero profile has no minimums to keep.
		*p = RunProfile{}
		p.Ranks = o.Ranks.union(nil)
		p.Facts = o.Facts
		p.Facts.Names, p.Facts.Hosts, p.Facts.Clocks = slices.Clone(o.Facts.Names), slices.Clone(o.Facts.Hosts), slices.Clone(o.Facts.Clocks)
		p.Regions = mergeSorted(nil, o.Regions, compareRegions, mergeRegion)
		p.Buffer = o.Buffer
		p.Buffer.Depths = slices.Clone(o.Buffer.Depths)
		p.Buffer.Policies = slices.Clone(o.Buffer.Policies)
		p.Buffer.Reduced = o.Buffer.Reduced.union(nil)
		p.Buffer.Unbalanced = o.Buffer.Unbalanced.union(nil)
		p.Buffer.Recovered = o.Buffer.Recovered.union(nil)
		p.Buffer.Died = o.Buffer.Died.union(nil)
		p.Throttled = slices.Clone(o.Throttled)
		return
	}
	p.Ranks = p.Ranks.union(o.Ranks)
	p.Facts.merge(&o.Facts)
	p.Regions = mergeSorted(p.Regions, o.Regions, compareRegions, mergeRegion)
	p.Buffer.merge(&o.Buffer)
	p.Throttled = mergeSorted(p.Throttled, o.Throttled, compareThrottled, mergeThrottled)
}

func (f *RunFacts) merge(o *RunFacts) {
	f.Names = unionStrings(f.Names, o.Names)
	f.Hosts = unionStrings(f.Hosts, o.Hosts)
	f.Clocks = unionStrings(f.Clocks, o.Clocks)
	switch {
	case f.Start == 0:
		f.Start = o.Start
	case o.Start != 0:
		f.Start = min(f.Start, o.Start)
	}
	f.Duration = f.Duration.merge(o.Duration)
	f.Locations += o.Locations
	f.LocationTime += o.LocationTime
	f.MinRate, f.MaxRate = min(f.MinRate, o.MinRate), max(f.MaxRate, o.MaxRate)
	f.MinShift, f.MaxShift = min(f.MinShift, o.MinShift), max(f.MaxShift, o.MaxShift)
	f.MinProbeCost, f.MaxProbeCost = min(f.MinProbeCost, o.MinProbeCost), max(f.MaxProbeCost, o.MaxProbeCost)
}

func (b *BufferStats) merge(o *BufferStats) {
	b.Recorded += o.Recorded
	b.Kept += o.Kept
	b.FilteredName += o.FilteredName
	b.FilteredDuration += o.FilteredDuration
	for i := range b.KeptByClass {
		b.KeptByClass[i] += o.KeptByClass[i]
	}
	for i := range b.Removed {
		b.Removed[i] += o.Removed[i]
	}
	b.Usage.Add(o.Usage)
	b.Depths = mergeSorted(b.Depths, o.Depths, func(a, b DepthStats) int { return cmp.Compare(a.Depth, b.Depth) },
		func(a, b DepthStats) DepthStats {
			a.Kept += b.Kept
			for i := range a.Removed {
				a.Removed[i] += b.Removed[i]
			}
			a.ClosedRanks += b.ClosedRanks
			return a
		})
	b.Bins += o.Bins
	b.Bytes += o.Bytes
	b.BufferSize = b.BufferSize.merge(o.BufferSize)
	b.BinSize = b.BinSize.merge(o.BinSize)
	b.Policies = unionStrings(b.Policies, o.Policies)
	if worse(o.Worst, b.Worst) {
		b.Worst = o.Worst
	}
	b.Reduced = b.Reduced.union(o.Reduced)
	for i := range b.Steps {
		b.Steps[i] += o.Steps[i]
	}
	b.Unbalanced = b.Unbalanced.union(o.Unbalanced)
	b.Interrupted += o.Interrupted
	b.Windowed += o.Windowed
	b.Recovered = b.Recovered.union(o.Recovered)
	b.Died = b.Died.union(o.Died)
	b.Unaccounted += o.Unaccounted
	m, om := &b.Messages, &o.Messages
	m.Locations += om.Locations
	m.Sent += om.Sent
	m.SentBytes += om.SentBytes
	m.Received += om.Received
	m.ReceivedBytes += om.ReceivedBytes
	m.Shed += om.Shed
}

// worse reports whether a kept a smaller share of its events than b, or
// the same share and a is the lower rank. The shares are compared exactly,
// as 128-bit cross products.
func worse(a, b RankShare) bool {
	ak, ar := a.Kept, a.Recorded
	bk, br := b.Kept, b.Recorded
	if ar == 0 {
		ak, ar = 1, 1
	}
	if br == 0 {
		bk, br = 1, 1
	}
	// ak/ar < bk/br  <=>  ak*br < bk*ar
	h1, l1 := bits.Mul64(ak, br)
	h2, l2 := bits.Mul64(bk, ar)
	if h1 != h2 {
		return h1 < h2
	}
	if l1 != l2 {
		return l1 < l2
	}
	return a.Rank < b.Rank
}

func compareRegions(a, b RegionStats) int { return a.key().compare(b.key()) }

func (r *RegionStats) key() regionKey { return regionKey{r.Name, r.Paradigm, r.File, r.Line} }

func mergeRegion(a, b RegionStats) RegionStats {
	if b.Inclusive.Max > a.Inclusive.Max || b.Inclusive.Max == a.Inclusive.Max && b.Slowest < a.Slowest {
		a.Slowest = b.Slowest
	}
	a.Ranks += b.Ranks
	a.Visits = a.Visits.merge(b.Visits)
	a.Inclusive = a.Inclusive.merge(b.Inclusive)
	a.Exclusive = a.Exclusive.merge(b.Exclusive)
	a.VisitsAfter += b.VisitsAfter
	a.Throttled = a.Throttled || b.Throttled
	a.Counters = mergeSorted(a.Counters, b.Counters, func(a, b CounterSums) int { return cmp.Compare(a.Metric, b.Metric) },
		func(a, b CounterSums) CounterSums {
			a.Inclusive += b.Inclusive
			a.Exclusive += b.Exclusive
			return a
		})
	return a
}

// mergeSorted merges two slices sorted by compare into a new one, combining
// the elements that compare equal.
func mergeSorted[T any](a, b []T, compare func(a, b T) int, combine func(a, b T) T) []T {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]T, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := compare(a[i], b[j]); {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, combine(a[i], b[j]))
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

func unionStrings(a, b []string) []string {
	return mergeSorted(a, b, cmp.Compare[string], func(a, _ string) string { return a })
}

// Spread returns a quantity's minimum, mean and maximum over all the ranks
// of the profile, have of which hold it: the others count 0.
func (p *RunProfile) Spread(s Stat, have int) (lo int64, mean float64, hi int64) {
	n := p.Ranks.Len()
	lo, hi = s.Min, s.Max
	if have < n {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if n > 0 {
		mean = float64(s.Sum) / float64(n)
	}
	return lo, mean, hi
}

// SlowestRank returns the rank with the most inclusive time in r over all
// the ranks of the profile, the lowest of equals: when no rank spent any,
// the lowest rank of the run.
func (p *RunProfile) SlowestRank(r *RegionStats) int {
	if r.Inclusive.Max <= 0 && r.Ranks < p.Ranks.Len() && len(p.Ranks) > 0 {
		return min(p.Ranks[0].First, r.Slowest)
	}
	return r.Slowest
}
