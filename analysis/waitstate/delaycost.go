package waitstate

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// The delay costs follow Böhme et al. ("Identifying the root causes of
// wait states in large-scale parallel applications"). A wait's
// synchronisation interval is, on each of the two parties, the time from
// the previous call in which they synchronised with each other (a message
// between the two either way, the previous collective on the same
// communicator, the team's previous barrier), or from the location's
// first event, to the operation the wait was for. The delay is the late
// party's excess in that interval: per call path, its time less the
// waiting party's time there, when positive, with the waits of either
// party taken out. The waits the late party itself suffered in the
// interval (propagating waits) made it late too.
//
// The wait's cost is spread over its delays and propagating waits in
// proportion to their amounts. The delays' part of the wait itself is
// their short-term cost; a propagating wait's part, together with its
// share of the costs the wait carries, becomes that earlier wait's
// long-term cost, which it hands on in turn: the waits are visited from
// the last to end back to the first (Böhme's backward replay), so every
// wait has collected what it caused before it is spread. At a delay, that
// carried part is its long-term cost: the indirect waits it caused.
//
// Deviations, said plainly: a collective's interval starts at the
// previous collective on its communicator whatever the members did in
// between; the proportional spread stands in for Böhme's scaling of the
// delays when their sum differs from the wait; waits whose late party
// shows no excess nor wait in its interval (clock effects, or a waiting
// party slower in the interval than the late one) are left unexplained and
// counted.

// DelayCost is a delay cost: the waiting time a call path on a location
// caused, by the pattern of the waits it caused directly.
type DelayCost struct {
	Pattern Pattern `json:"-"`
	// LongTerm tells the long-term cost (the waits the direct waits
	// propagated into) from the short-term one (the direct waits).
	LongTerm bool   `json:"long_term"`
	Region   string `json:"region"`
	Path     int    `json:"call_path"` // an index of Result.Paths
	Loc      int    `json:"location"`  // the late location
	Time     int64  `json:"time_ns"`
}

// plannedInterval is the two synchronisation intervals of one wait.
type plannedInterval struct {
	late, waiter span
	planned      bool // false: the wait has no delay to look for
}

// delayPlan is what the second pass must measure for the delay costs.
type delayPlan struct {
	intervals []plannedInterval // by wait
	// Per synchronisation interval (interval(wait, side)): its time per
	// local call path, as the sweep of its location measured it. Each
	// location's sweep writes only its own intervals.
	times [][]pathNs
}

// packPartner packs a partner key (a location, or commPartner, or
// teamPartner) and a call into one number that sorts by key, then call.
func packPartner(key int, call int32) uint64 {
	k := uint32(0) // teamPartner sorts first
	if key != teamPartner {
		k = uint32(int64(key) + 1<<31)
	}
	return uint64(k)<<32 | uint64(uint32(call))
}

// interval returns the key of a wait's interval on one side (winLate,
// winWaiter) in delayPlan.times.
func interval(wait int, side winKind) int { return 2*wait + int(side-winLate) }

// packPartners lists, per location, its calls that synchronised with a
// partner, as packed (partner key, call) numbers, sorted: one slice of
// integers a location, which sorts fast. Nothing after needs the messages
// and collectives themselves: packed, they are let go, before the second
// pass makes its windows.
func (a *analysis) packPartners() [][]uint64 {
	partners := make([][]uint64, len(a.data))
	for n, d := range a.data {
		l := make([]uint64, 0, len(d.sends)+len(d.recvs)+len(d.colls)+len(d.omp))
		for _, s := range d.sends {
			l = append(l, packPartner(s.peer, s.call))
		}
		for _, q := range d.recvs {
			l = append(l, packPartner(q.peer, q.call))
		}
		for _, op := range d.colls {
			l = append(l, packPartner(commPartner(op.comm), op.call))
		}
		for _, v := range d.omp {
			l = append(l, packPartner(teamPartner, v.call))
		}
		sortUint64(l)
		partners[n] = l
		d.sends, d.recvs, d.colls, d.omp = nil, nil, nil, nil
	}
	return partners
}

// planIntervals finds every wait's synchronisation intervals, from the
// locations' packed partners. The sweeps make their windows of them
// (windowSource), location by location.
func (a *analysis) planIntervals(waits []wait, partners [][]uint64) *delayPlan {
	plan := &delayPlan{intervals: make([]plannedInterval, len(waits)), times: make([][]pathNs, 2*len(waits))}
	for i, w := range waits {
		if w.Pattern == LateSenderWrongOrder || w.Peer < 0 || w.Peer == w.Loc || w.Time <= 0 || w.lateCall < 0 || w.call < 0 {
			continue
		}
		keyW, keyL := w.partner, w.partner
		if w.partner >= 0 { // a message: the partner is the other party
			keyW, keyL = w.Peer, w.Loc
		}
		pi := plannedInterval{
			late:    span{a.lastSync(partners, w.Peer, keyL, w.lateCall), w.Start + w.Time},
			waiter:  span{a.lastSync(partners, w.Loc, keyW, w.call), w.Start},
			planned: true,
		}
		pi.late.start = min(pi.late.start, pi.late.end)
		pi.waiter.start = min(pi.waiter.start, pi.waiter.end)
		plan.intervals[i] = pi
	}
	return plan
}

// lastSync returns when location n last synchronised with partner (a
// partner key) before its call c: that call's leave, or n's first event.
// partners are packPartners'.
func (a *analysis) lastSync(partners [][]uint64, n, partner int, c int32) int64 {
	l := partners[n]
	at := packPartner(partner, c)
	i, _ := slices.BinarySearch(l, at)
	if i == 0 || l[i-1]>>32 != at>>32 {
		return a.data[n].first
	}
	return a.data[n].calls[int32(uint32(l[i-1]))].leave
}

// delayCosts spreads the waits' costs over their delays, last wait first,
// from the intervals the second pass measured. It returns the costs and
// the waiting time it could not attribute, ns.
func (a *analysis) delayCosts(plan *delayPlan, waits []wait) ([]DelayCost, int64) {
	order := a.backwardOrder(plan, waits)
	visits, flat := gatherVisits(plan, waits, order)
	// A wait's place in the order: what its carried costs are kept by.
	place := make([]int32, len(waits))
	for i := range place {
		place[i] = -1
	}
	for k, i := range order {
		place[i] = int32(k)
	}
	own := a.ownWaits(waits, place)
	// The costs by key, summed in the backward order: a map from key to
	// a place in sums, behind a cache of the keys found last (a late
	// location charges few paths, wait after wait).
	var (
		sums   []float64
		keyOf  []delayKey
		cache  [64]int32
		places = map[delayKey]int32{}
	)
	for i := range cache {
		cache[i] = -1
	}
	add := func(k delayKey, ns float64) {
		h := &cache[(uint(k.path)*0x9e3779b1^uint(k.loc)*0x85ebca6b^uint(k.p)<<1^b2u(k.long))%uint(len(cache))]
		if at := *h; at >= 0 && keyOf[at] == k {
			sums[at] += ns
			return
		}
		at, ok := places[k]
		if !ok {
			at = int32(len(sums))
			places[k] = at
			sums, keyOf = append(sums, 0), append(keyOf, k)
		}
		*h = at
		sums[at] += ns
	}
	carried := make([]float64, len(order)) // long-term costs a wait collected, by place
	// Per late location, what it could not explain: summed per location,
	// then over them in order, as the in-situ replay's ranks sum theirs.
	unexplained := make([]float64, len(a.data))
	// Buffers reused from wait to wait: intervals hold few call paths.
	var (
		tLbuf, tWbuf []pathNs
		props        []propagating
		excess       []pathNs
	)
	var near []ownWait
	// Per location, where the last search of its own waits ended, as the
	// late party and as the waiting one: in the backward order the
	// intervals' ends mostly fall, so the next search starts there.
	lateFrom, waiterFrom := make([]ownCursor, len(a.data)), make([]ownCursor, len(a.data))
	for k := range visits {
		v := &visits[k]
		peer, loc := int(v.peer), int(v.loc)
		tL := a.globalTimes(peer, flat[v.from:v.mid], tLbuf[:0])
		tW := a.globalTimes(loc, flat[v.mid:v.to], tWbuf[:0])
		tLbuf, tWbuf = tL, tW
		props = props[:0]
		near = lateFrom[peer].overlapping(near[:0], own[peer], v.late)
		for _, o := range near {
			ov := o.overlap(v.late)
			tL = subPath(tL, int(o.path), ov)
			props = append(props, propagating{int(o.place), ov})
		}
		near = waiterFrom[loc].overlapping(near[:0], own[loc], v.waiter)
		for _, o := range near {
			tW = subPath(tW, int(o.path), o.overlap(v.waiter))
		}
		var un float64
		excess, un = spreadCost(v.time, carried[k], tL, func(p int32) int64 { return timeOf(tW, p) }, props, excess[:0],
			func(long bool, path int32, ns float64) { add(delayKey{v.p, long, int(path), peer}, ns) },
			func(j int, ns float64) {
				if j >= 0 { // a wait not planned carries nothing on
					carried[j] += ns
				}
			})
		unexplained[peer] += un
	}
	out := make([]DelayCost, 0, len(sums))
	for at, ns := range sums {
		if t := int64(math.Round(ns)); t > 0 {
			k := keyOf[at]
			out = append(out, DelayCost{Pattern: k.p, LongTerm: k.long, Region: a.tree[k.path].Region, Path: k.path, Loc: k.loc, Time: t})
		}
	}
	slices.SortFunc(out, compareDelayCost)
	return out, sumUnexplained(unexplained)
}

// backwardVisit is what the backward replay reads of a planned wait, in
// its order: its intervals, the wait, its parties, and where its
// intervals' times are in the flat copy (late: from:mid, waiter: mid:to).
type backwardVisit struct {
	late, waiter span
	time         int64
	peer, loc    int32
	from, mid    int32
	to           int32
	p            Pattern
}

// gatherVisits copies what the backward replay reads of each wait, in its
// order, into one array, and the intervals' times into one flat list.
// The waits, their intervals and the times the sweeps wrote lie in the
// order of the locations; read in the backward order each is a cache
// miss, which this loop, doing nothing else, overlaps with the next ones.
func gatherVisits(plan *delayPlan, waits []wait, order []int32) ([]backwardVisit, []pathNs) {
	visits := make([]backwardVisit, len(order))
	n := 0
	for _, i := range order {
		n += len(plan.times[interval(int(i), winLate)]) + len(plan.times[interval(int(i), winWaiter)])
	}
	flat := make([]pathNs, 0, n)
	for k, at := range order {
		i := int(at)
		w := &waits[i]
		pi := &plan.intervals[i]
		v := &visits[k]
		v.late, v.waiter, v.time, v.peer, v.loc, v.p = pi.late, pi.waiter, w.Time, int32(w.Peer), int32(w.Loc), w.Pattern
		v.from = int32(len(flat))
		flat = append(flat, plan.times[interval(i, winLate)]...)
		v.mid = int32(len(flat))
		flat = append(flat, plan.times[interval(i, winWaiter)]...)
		v.to = int32(len(flat))
	}
	return visits, flat
}

// ownWait is a wait as its location's intervals see it: what overlapping
// and overlap read of it, in 24 bytes, so that finding the waits in an
// interval reads a location's list in order rather than the waits.
type ownWait struct {
	start, end int64
	path       int32 // the run-wide call path
	place      int32 // the wait's place in the backward order, -1 if not planned
}

// ownWaits lists each location's own waits by start, to take out of its
// intervals; place is each wait's place in the backward order.
func (a *analysis) ownWaits(waits []wait, place []int32) [][]ownWait {
	count := make([]int, len(a.data))
	total := 0
	for _, w := range waits {
		if w.Pattern != LateSenderWrongOrder && w.Time > 0 {
			count[w.Loc]++
			total++
		}
	}
	// One array for all, each location's part with its own capacity.
	own := make([][]ownWait, len(a.data))
	all := make([]ownWait, total)
	for n, c := range count {
		own[n], all = all[:0:c], all[c:]
	}
	for i, w := range waits {
		if w.Pattern != LateSenderWrongOrder && w.Time > 0 {
			own[w.Loc] = append(own[w.Loc], ownWait{w.Start, w.Start + w.Time, int32(w.Path), place[i]})
		}
	}
	// By start, stably. Waits starting together may come in another
	// order than the in-situ replay's sort of its indices gives them; the
	// delay costs do not depend on it: the waits found in an interval are
	// summed as integers, and each carries its own share.
	var keys []keyed
	var moved []ownWait
	for _, l := range own {
		if len(l) < 2 {
			continue
		}
		keys = keys[:0]
		for i := range l {
			keys = append(keys, keyed{l[i].start, int32(i)})
		}
		sortKeyed(keys)
		moved = append(moved[:0], l...)
		for i, k := range keys {
			l[i] = moved[k.i]
		}
	}
	return own
}

// ownCursor is where a search of a location's own waits ended: the
// first wait starting at or after end is at hi.
type ownCursor struct {
	end   int64
	hi    int
	valid bool
}

// overlapping is overlapping on a location's ownWaits list: the waits
// that overlap s, latest first. From the last search's end, if s ends no
// later, it steps back to the first wait starting at or after s.end (the
// waits after the last answer start later still); else it searches.
func (c *ownCursor) overlapping(out, byStart []ownWait, s span) []ownWait {
	var hi int
	if c.valid && s.end <= c.end {
		hi = c.hi
		for hi > 0 && byStart[hi-1].start >= s.end {
			hi--
		}
	} else {
		hi, _ = slices.BinarySearchFunc(byStart, s.end, func(o ownWait, t int64) int { return cmp.Compare(o.start, t) })
	}
	c.end, c.hi, c.valid = s.end, hi, true
	for k := hi - 1; k >= 0; k-- {
		if byStart[k].end <= s.start {
			break
		}
		out = append(out, byStart[k])
	}
	return out
}

// overlap returns how much of the wait lies in s, ns.
func (o ownWait) overlap(s span) int64 {
	return max(min(o.end, s.end)-max(o.start, s.start), 0)
}

// delayKey is a delay cost's place: the pattern of the waits, short or
// long term, the run-wide call path and the late location.
type delayKey struct {
	p         Pattern
	long      bool
	path, loc int
}

func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// backwardOrder returns the planned waits from the last to end back, in
// the one order the in-situ replay follows too (compareBackward, then by
// index, latest first, for files claiming one rank). The ends are sorted
// by their digits (ascending by their complement, stably: latest first);
// only waits ending together are compared whole.
func (a *analysis) backwardOrder(plan *delayPlan, waits []wait) []int32 {
	keys := make([]keyed, 0, len(plan.intervals))
	for i, pi := range plan.intervals {
		if pi.planned {
			w := &waits[i]
			keys = append(keys, keyed{^(w.Start + w.Time), int32(i)})
		}
	}
	sortKeyed(keys)
	order := make([]int32, len(keys))
	for i := range keys {
		order[i] = keys[i].i
	}
	var tie []backwardAt
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi].key == keys[lo].key {
			hi++
		}
		if hi-lo > 1 {
			tie = tie[:0]
			for _, i := range order[lo:hi] {
				tie = append(tie, backwardAt{a.backwardKeyOf(&waits[i]), i})
			}
			slices.SortFunc(tie, func(x, y backwardAt) int {
				if c := compareBackward(x.k, y.k); c != 0 {
					return c
				}
				return cmp.Compare(y.i, x.i)
			})
			for j, t := range tie {
				order[lo+j] = t.i
			}
		}
		lo = hi
	}
	return order
}

// backwardAt is a wait's place in the backward replay, and its index.
type backwardAt struct {
	k backwardKey
	i int32
}

// keyed is an index to sort by an integer key.
type keyed struct {
	key int64
	i   int32
}

// sortKeyed sorts s by key, stably: by the keys' digits (a
// least-significant-digit radix sort), a few moves an element where a
// comparison sort calls its comparison through a func value.
func sortKeyed(s []keyed) {
	if len(s) < 256 {
		slices.SortStableFunc(s, func(x, y keyed) int { return cmp.Compare(x.key, y.key) })
		return
	}
	lo, hi := s[0].key, s[0].key
	for i := range s {
		lo, hi = min(lo, s[i].key), max(hi, s[i].key)
	}
	const digit = 11
	var count [1 << digit]int
	src, dst := s, make([]keyed, len(s))
	for shift := 0; shift < bits.Len64(uint64(hi)-uint64(lo)); shift += digit {
		clear(count[:])
		for i := range src {
			count[(uint64(src[i].key)-uint64(lo))>>shift&(1<<digit-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for i := range src {
			d := (uint64(src[i].key) - uint64(lo)) >> shift & (1<<digit - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// sortUint64 sorts s, by a radix sort of the digits that differ past
// the smallest: a location's packed partners differ in few high bits
// (few partners) and the calls' bits.
func sortUint64(s []uint64) {
	if len(s) < 256 {
		slices.Sort(s)
		return
	}
	lo, hi := s[0], s[0]
	for _, v := range s {
		lo, hi = min(lo, v), max(hi, v)
	}
	const digit = 11
	var count [1 << digit]int
	src, dst := s, make([]uint64, len(s))
	for shift := 0; shift < bits.Len64(hi-lo); shift += digit {
		clear(count[:])
		for _, v := range src {
			count[(v-lo)>>shift&(1<<digit-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, v := range src {
			d := (v - lo) >> shift & (1<<digit - 1)
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// sumUnexplained adds the late locations' unexplained waiting times, in
// location order, and rounds the sum to ns.
func sumUnexplained(perLoc []float64) int64 {
	var sum float64
	for _, u := range perLoc {
		sum += u
	}
	return int64(math.Round(sum))
}

// propagating is a wait of the late party in a wait's synchronisation
// interval, and how much of it lies there, ns.
type propagating struct {
	wait int
	ns   int64
}

// spreadCost is the one definition of how a wait's cost spreads, the
// post-mortem replay's and the in-situ one's: time is the wait, carried
// the long-term costs it collected; tL the late party's time per call
// path in its interval and tW the waiting party's (both without their
// own waits there), props the late party's waits in its interval. The
// excess of tL over tW per call path and the propagating waits share the
// cost in proportion: cost receives each path's short-term (long false)
// and long-term parts, carry each propagating wait's part. It returns
// excess (its buffer) and the cost it could not attribute.
func spreadCost(time int64, carried float64, tL []pathNs, tW func(path int32) int64, props []propagating, excess []pathNs,
	cost func(long bool, path int32, ns float64), carry func(wait int, ns float64)) ([]pathNs, float64) {
	var sum float64
	for _, p := range tL {
		if d := p.ns - tW(p.path); d > 0 {
			sum += float64(d)
			excess = append(excess, pathNs{p.path, d})
		}
	}
	for _, g := range props {
		sum += float64(g.ns)
	}
	total := float64(time) + carried
	if sum <= 0 {
		return excess, total
	}
	// The same sums in the same order every run.
	slices.SortFunc(excess, func(x, y pathNs) int { return cmp.Compare(x.path, y.path) })
	for _, e := range excess {
		share := float64(e.ns) / sum
		cost(false, e.path, float64(time)*share)
		if carried > 0 {
			cost(true, e.path, carried*share)
		}
	}
	for _, g := range props {
		carry(g.wait, total*float64(g.ns)/sum)
	}
	return excess, 0
}

// backwardKey places a wait in the backward replay's order: the last to
// end first, then the last to start, then by its waiting location (rank,
// then index in its file), call and pattern, latest first. Post-mortem
// and in-situ compute it alike, so that each late party sums the costs
// and carried parts in the same order and the two give the same numbers.
type backwardKey struct {
	end, start int64
	rank, loc  int
	call       int32
	p          Pattern
}

func (a *analysis) backwardKeyOf(w *wait) backwardKey {
	lo := a.locs[w.Loc]
	return backwardKey{w.Start + w.Time, w.Start, lo.Rank, lo.Loc, w.call, w.Pattern}
}

// compareBackward orders keys as the backward replay visits them.
func compareBackward(x, y backwardKey) int {
	if x.end != y.end {
		return cmp.Compare(y.end, x.end)
	}
	if x.start != y.start {
		return cmp.Compare(y.start, x.start)
	}
	if x.rank != y.rank {
		return cmp.Compare(y.rank, x.rank)
	}
	if x.loc != y.loc {
		return cmp.Compare(y.loc, x.loc)
	}
	if x.call != y.call {
		return cmp.Compare(y.call, x.call)
	}
	return cmp.Compare(y.p, x.p)
}

func compareDelayCost(x, y DelayCost) int {
	if x.Pattern != y.Pattern {
		return cmp.Compare(x.Pattern, y.Pattern)
	}
	return compareCostPlace(&x, &y)
}

// compareCostPlace orders the costs of one pattern, as compareDelayCost.
func compareCostPlace(x, y *DelayCost) int {
	if x.LongTerm != y.LongTerm {
		if x.LongTerm {
			return 1
		}
		return -1
	}
	if x.Path != y.Path {
		return cmp.Compare(x.Path, y.Path)
	}
	return cmp.Compare(x.Loc, y.Loc)
}

// globalTimes appends location n's times per local call path to buf as
// times per run-wide call path (in pathNs.path), summed.
func (a *analysis) globalTimes(n int, local []pathNs, buf []pathNs) []pathNs {
	for _, p := range local {
		buf = addPathNs(buf, int32(a.paths[n][p.path]), p.ns)
	}
	return buf
}

// subPath takes ns off path's time in times.
func subPath(times []pathNs, path int, ns int64) []pathNs {
	return addPathNs(times, int32(path), -ns)
}

// timeOf returns path's time in times.
func timeOf(times []pathNs, path int32) int64 {
	for _, p := range times {
		if p.path == path {
			return p.ns
		}
	}
	return 0
}

// overlapping appends to out the waits of byStart (indices of waits,
// sorted by start) that overlap s.
func overlapping(out, byStart []int, waits []wait, s span) []int {
	hi, _ := slices.BinarySearchFunc(byStart, s.end, func(i int, t int64) int { return cmp.Compare(waits[i].Start, t) })
	// Waits of one location do not overlap, so few before s.start can
	// reach into s: stop at the first that ends before it.
	for k := hi - 1; k >= 0; k-- {
		w := waits[byStart[k]]
		if w.Start+w.Time <= s.start {
			break
		}
		out = append(out, byStart[k])
	}
	return out
}

// overlap returns how much of wait w lies in s, ns.
func overlap(w wait, s span) int64 {
	return max(min(w.Start+w.Time, s.end)-max(w.Start, s.start), 0)
}

// Cause is what one call path on one location caused: its delay costs for
// one pattern.
type Cause struct {
	Pattern     Pattern
	Path, Loc   int
	Short, Long int64 // ns
}

// Causes returns the delay costs per (pattern, call path, location),
// largest total first.
func (r *Result) Causes() []Cause {
	type key struct {
		p         Pattern
		path, loc int
	}
	at := map[key]int{}
	var out []Cause
	for _, c := range r.DelayCosts {
		k := key{c.Pattern, c.Path, c.Loc}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Cause{Pattern: c.Pattern, Path: c.Path, Loc: c.Loc})
		}
		out[i].add(c)
	}
	slices.SortStableFunc(out, func(x, y Cause) int { return cmp.Compare(y.Short+y.Long, x.Short+x.Long) })
	return out
}

func (c *Cause) add(d DelayCost) {
	if d.LongTerm {
		c.Long += d.Time
	} else {
		c.Short += d.Time
	}
}
