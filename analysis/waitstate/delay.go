package waitstate

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/parallel"
)

// Everything that needs the waits is found by one second pass over the
// locations' enters and leaves (the forward pass's regionLog), once the
// waits are known (Böhme et al. replay backwards; sweeping each
// location's log in order, with its windows sorted, gives the same sums): what each late location was doing
// during each wait it caused, for the worst waits what it computed since
// its previous synchronisation point, the stretches of the critical path,
// and both parties' synchronisation intervals for the delay costs. The
// sweep charges each window's time per call path where the finishing
// steps read it. Of the first pass's events only the enters and leaves
// are kept, at 2 to 4 bytes each, and each location's log goes when its
// sweep ends; the rest of memory is that of the calls, the packed
// partners and the waits, and per worker the windows of the location it
// sweeps (windowSource).

// window is a stretch of a location's time to account for. There are a
// few per wait, held while their location's sweep runs, so a window holds
// no times: the sweep charges them where the finishing steps look for
// them.
type window struct {
	start, end int64
	wait       int32 // index of the wait (-1 for a stretch of the critical path)
	kind       winKind
}

// winKind says what a window is for.
type winKind uint8

const (
	winDuring winKind = iota // the late party during a wait: the delay costs by region
	winWork                  // the late party's work before the late call (named waits)
	winPath                  // a stretch of the critical path
	winLate                  // the late party's synchronisation interval (delaycost.go)
	winWaiter                // the waiting party's synchronisation interval
)

// delayOut is what the second pass found on one location.
type delayOut struct {
	costs map[costKey]*Value // delay costs by (pattern, region)
	// Per named wait: its regions during the window, and its work.
	during map[int][]regionTime
	work   map[int][]regionTime
	// The critical path's time per local call path.
	path map[int32]int64
	// The run's synchronisation intervals' times (delayPlan.times), of
	// which this location's sweep writes its own.
	times [][]pathNs
	// During the sweep: the regions each open winDuring counted once
	// already, by wait.
	seen map[int32][]uint32
	// The last cost charged and the last (wait, region) seen, during the
	// sweep.
	lastKey     costKey
	lastCost    *Value
	lastSeen    int32
	lastSeenReg uint32
	lastSeenOK  bool
	// The costs charged last, latest first (cost).
	recent [4]recentCost
	// slab is where the intervals' times start out (newTimes).
	slab  []pathNs
	slabs int // made so far
}

// timesCap is the call paths an interval's times hold before they grow:
// an interval spans a few calls, seldom more paths.
const timesCap = 4

// newTimes returns an empty list of times for an interval, carved out of
// a slab: one allocation for many intervals, not one or more each. Its
// capacity ends at its own part, so a list that outgrows it moves out.
func (o *delayOut) newTimes() []pathNs {
	if len(o.slab) < timesCap {
		// Slabs double, from a few lists: a location with few intervals
		// does not pay for many.
		o.slab = make([]pathNs, timesCap<<min(o.slabs+2, 8))
		o.slabs++
	}
	t := o.slab[:0:timesCap]
	o.slab = o.slab[timesCap:]
	return t
}

// recentCost is a delay cost by its key.
type recentCost struct {
	key costKey
	v   *Value
}

// pathNs is a time in a local call path.
type pathNs struct {
	path int32
	ns   int64
}

type costKey struct {
	p      Pattern
	region uint32
}

// regionTime is a region's time in a window.
type regionTime struct {
	region uint32
	ns     int64
}

// sweepWith is the sweep the second pass runs: the tests compare it with
// a reference that charges every open window at every step.
var sweepWith = (*analysis).sweep

// sweepHook, when set (by tests), is called before the sweeps (-1), at
// the end of location n's sweep, before its worker lets its windows go
// (where the workers hold the most), and after the sweeps (-2).
var sweepHook func(a *analysis, n int)

// secondPass reads the locations again, once, for what needs the waits:
// the delay of each wait on its late party (Delays, the worst waits'
// Delay), the critical path, and the synchronisation intervals of the
// delay costs (delaycost.go).
func (a *analysis) secondPass(procs int, res *Result, waits []wait, named []int) error {
	partners := a.packPartners()
	// By wait: a slice, since the sweeps ask for every charge.
	isNamed := make([]bool, len(waits))
	for _, i := range named {
		isNamed[i] = true
	}
	cp, spans := a.walkCriticalPath(waits)
	dc := a.planIntervals(waits, partners)
	ws := a.newWindowSource(waits, isNamed, spans, dc)
	outs := make([]delayOut, len(a.locs))
	if sweepHook != nil {
		sweepHook(a, -1)
	}
	// Each worker makes the windows of the location it sweeps, and lets
	// them go when the sweep ends: a worker holds one location's windows,
	// not the run's. Their arrays (the windows and the radix sort's copy)
	// are reused by the worker's next sweep rather than allocated per
	// location: they were a tenth of the bytes a halo run's replay
	// allocated.
	scratch := make(chan *windowScratch, procs) // at most procs sweeps run at once
	err := parallel.Do(procs, len(a.locs), func(n int) error {
		var sc *windowScratch
		select {
		case sc = <-scratch:
		default:
			sc = new(windowScratch)
		}
		defer func() { scratch <- sc }()
		wins := ws.windows(n, sc.wins[:0])
		if len(wins) == 0 {
			a.data[n].log = regionLog{} // nothing to sweep
			return nil
		}
		sc.wins = wins
		a.windowsMade.Add(int64(len(wins)))
		a.windowsLive.Add(int64(len(wins)))
		defer a.windowsLive.Add(-int64(len(wins)))
		sc.sorted = sortWindowsWith(wins, sc.sorted)
		outs[n].times = dc.times
		if err := sweepWith(a, n, waits, wins, isNamed, &outs[n]); err != nil {
			return err
		}
		if sweepHook != nil {
			sweepHook(a, n)
		}
		runtime.KeepAlive(wins) // the hook measures the worker holding them
		a.data[n].log = regionLog{}
		return nil
	})
	ws, scratch = nil, nil // the sweeps are done with the lists of waits by location and their arrays
	if err != nil {
		return err
	}
	if sweepHook != nil {
		sweepHook(a, -2)
	}
	a.unifyPaths() // the sweeps made the paths they charged
	for n, o := range outs {
		f := a.files[a.locs[n].File]
		for k, v := range o.costs {
			v.Region = f.RegionName(k.region)
			res.Delays = append(res.Delays, *v)
		}
	}
	slices.SortFunc(res.Delays, compareValue)
	for _, i := range named {
		w := waits[i]
		inst := a.instance(&w)
		if w.Peer >= 0 {
			inst.Delay = a.delayOf(w, outs[w.Peer].during[i], outs[w.Peer].work[i])
		}
		res.Worst = append(res.Worst, inst)
	}
	if cp != nil {
		a.finishCriticalPath(cp, outs, res)
		res.CriticalPath = cp
	}
	res.DelayCosts, res.DelayUnexplained = a.delayCosts(dc, waits)
	return nil
}

// windowSource makes a location's windows when its sweep needs them,
// from the waits listed by the location that was late (their Peer) and
// by the one that waited (their Loc, for the planned intervals): 8 bytes
// a wait run-wide, where the windows are 24 bytes each, three or four a
// wait. The windows come in the order the run-wide lists had them.
type windowSource struct {
	a     *analysis
	waits []wait
	named []bool
	spans [][]span // the critical path's, per location
	plan  *delayPlan
	// Per location n, late[lateAt[n]:lateAt[n+1]] are the waits n was
	// late for, waiter[waiterAt[n]:waiterAt[n+1]] its planned waits, in
	// index order.
	lateAt, waiterAt []int32
	late, waiter     []int32
}

func (a *analysis) newWindowSource(waits []wait, named []bool, spans [][]span, plan *delayPlan) *windowSource {
	n := len(a.data)
	ws := &windowSource{a: a, waits: waits, named: named, spans: spans, plan: plan,
		lateAt: make([]int32, n+1), waiterAt: make([]int32, n+1)}
	for i, w := range waits {
		if w.Peer >= 0 && w.Time > 0 {
			ws.lateAt[w.Peer+1]++
		}
		if plan.intervals[i].planned {
			ws.waiterAt[w.Loc+1]++
		}
	}
	for k := 1; k <= n; k++ {
		ws.lateAt[k] += ws.lateAt[k-1]
		ws.waiterAt[k] += ws.waiterAt[k-1]
	}
	ws.late, ws.waiter = make([]int32, ws.lateAt[n]), make([]int32, ws.waiterAt[n])
	lateNext, waiterNext := slices.Clone(ws.lateAt[:n]), slices.Clone(ws.waiterAt[:n])
	for i, w := range waits {
		if w.Peer >= 0 && w.Time > 0 {
			ws.late[lateNext[w.Peer]] = int32(i)
			lateNext[w.Peer]++
		}
		if plan.intervals[i].planned {
			ws.waiter[waiterNext[w.Loc]] = int32(i)
			waiterNext[w.Loc]++
		}
	}
	return ws
}

// windowScratch is a worker's arrays for the windows of the location it
// sweeps, kept for its next one.
type windowScratch struct {
	wins, sorted []window
}

// windows returns location n's windows, unsorted, in buf if it is large
// enough: per wait it was late for, the stretch during it and, for a named
// wait, its work before the late call; its spans of the critical path;
// and, per wait in index order, its synchronisation intervals as the late
// or the waiting party.
func (ws *windowSource) windows(n int, buf []window) []window {
	late := ws.late[ws.lateAt[n]:ws.lateAt[n+1]]
	waiter := ws.waiter[ws.waiterAt[n]:ws.waiterAt[n+1]]
	size := 2*len(late) + len(ws.spans[n]) + len(waiter)
	for _, i := range late {
		if ws.named[i] {
			size++
		}
	}
	if size == 0 {
		return nil
	}
	wins := buf[:0]
	if cap(wins) < size {
		wins = make([]window, 0, size)
	}
	d := ws.a.data[n]
	for _, i := range late {
		w := &ws.waits[i]
		wins = append(wins, window{start: w.Start, end: w.Start + w.Time, wait: i, kind: winDuring})
		if c := w.lateCall; ws.named[i] && c >= 0 {
			from := d.first
			if c > 0 {
				from = d.calls[c-1].leave
			}
			wins = append(wins, window{start: from, end: d.calls[c].enter, wait: i, kind: winWork})
		}
	}
	for _, s := range ws.spans[n] {
		wins = append(wins, window{start: s.start, end: s.end, wait: -1, kind: winPath})
	}
	// The intervals, merged by wait: a wait's two parties differ.
	for len(late) > 0 || len(waiter) > 0 {
		if len(waiter) == 0 || len(late) > 0 && late[0] < waiter[0] {
			i := late[0]
			late = late[1:]
			if pi := &ws.plan.intervals[i]; pi.planned && pi.late.end > pi.late.start {
				wins = append(wins, window{start: pi.late.start, end: pi.late.end, wait: i, kind: winLate})
			}
			continue
		}
		i := waiter[0]
		waiter = waiter[1:]
		if pi := &ws.plan.intervals[i]; pi.waiter.end > pi.waiter.start {
			wins = append(wins, window{start: pi.waiter.start, end: pi.waiter.end, wait: i, kind: winWaiter})
		}
	}
	return wins
}

// delayOf names the delay of wait w from the late party's regions during
// it and its computation before the late call.
func (a *analysis) delayOf(w wait, during, work []regionTime) *Delay {
	if len(during) == 0 && len(work) == 0 {
		return nil
	}
	f := a.files[a.locs[w.Peer].File]
	dl := &Delay{Loc: w.Peer, Interval: w.Time, Since: -1}
	if len(during) > 0 {
		sortRegionTimes(during)
		dl.Region, dl.Time = f.RegionName(during[0].region), during[0].ns
	}
	if c := w.lateCall; c > 0 {
		dl.Since = a.data[w.Peer].calls[c-1].leave
	}
	if len(work) > 0 {
		sortRegionTimes(work)
		var sum int64
		for _, g := range work {
			sum += g.ns
		}
		dl.Work, dl.WorkRegion = &sum, f.RegionName(work[0].region)
	}
	return dl
}

func sortRegionTimes(rt []regionTime) {
	slices.SortFunc(rt, func(a, b regionTime) int {
		if a.ns != b.ns {
			return cmp.Compare(b.ns, a.ns)
		}
		return cmp.Compare(a.region, b.region)
	})
}

// sweep reads location n's enters and leaves again (its log) and lays its
// windows (sorted by start) over the stretches of time it spent in each
// call path: its own time in the region on top of its stack, or the open
// synchronisation call's time, whatever that calls. It stops after the
// last window.
//
// A location's intervals overlap: on a halo run a dozen windows are open
// at each step. Rather than charging each open window at every step, the
// sweep keeps one running total per call path (pathSums) and charges a
// window once, when it closes, with the difference of those totals to a
// copy taken when it opened. The sums are integers, so the windows get
// exactly what step-by-step charging gave them.
func (a *analysis) sweep(n int, waits []wait, wins []window, named []bool, out *delayOut) error {
	lo := a.locs[n]
	f := a.files[lo.File]
	d := a.data[n]
	out.costs = map[costKey]*Value{}
	out.during, out.work = map[int][]regionTime{}, map[int][]regionTime{}
	out.path = map[int32]int64{}
	out.seen = map[int32][]uint32{}
	defer func() { out.seen, out.slab = nil, nil }()
	var (
		next  int
		open  openHeap
		sums  pathSums
		e     logRecord
		stack []frame
		sync  = -1 // the outermost open synchronisation call's place in stack
		prev  int64
		begun bool
		// A closing wait's regions (scratch).
		regions []regionTime
	)
	sums.head = -1
	closeTop := func() {
		ow := open.pop()
		w := &wins[ow.win]
		if w.kind == winDuring {
			// By region, each counted once for the wait.
			regions = regions[:0]
			for p := sums.head; p >= 0 && sums.stamp[p] > ow.snap.step; p = sums.next[p] {
				if ns := sums.cum[p] - ow.snap.at(p); ns > 0 {
					regions = addRegionTime(regions, d.paths[p].region, ns)
				}
			}
			a.chargeDuring(w, waits, regions, named, out)
		} else if w.kind == winLate || w.kind == winWaiter {
			// An interval is one window, charged once, here: its times
			// are made whole (each path listed once) and stored, without
			// reading the run-wide list first.
			var t []pathNs
			for p := sums.head; p >= 0 && sums.stamp[p] > ow.snap.step; p = sums.next[p] {
				if ns := sums.cum[p] - ow.snap.at(p); ns > 0 {
					if t == nil {
						t = out.newTimes()
					}
					t = append(t, pathNs{p, ns})
				}
			}
			if t != nil {
				out.times[interval(int(w.wait), w.kind)] = t
			}
		} else {
			for p := sums.head; p >= 0 && sums.stamp[p] > ow.snap.step; p = sums.next[p] {
				if ns := sums.cum[p] - ow.snap.at(p); ns > 0 {
					a.charge(w, waits, p, d.paths[p].region, ns, named, lo.File, out)
				}
			}
		}
		sums.release(ow.snap)
	}
	segment := func(s, t int64) {
		cur := s
		path := int32(-1) // the segment's call path, looked up once
		// advance charges the time up to x to the segment's call path,
		// while a window is open.
		advance := func(x int64) {
			if x <= cur {
				return
			}
			if len(open) > 0 {
				if path == -1 {
					path = d.chargedPath(stack, sync)
				}
				if path >= 0 {
					sums.charge(path, x-cur)
				}
			}
			cur = x
		}
		for {
			openAt, closeAt := int64(math.MaxInt64), int64(math.MaxInt64)
			if next < len(wins) && wins[next].start < t {
				openAt = max(wins[next].start, cur)
			}
			if len(open) > 0 && open[0].end <= t {
				closeAt = max(open[0].end, cur)
			}
			switch {
			case closeAt != math.MaxInt64 && closeAt <= openAt:
				advance(closeAt)
				closeTop()
			case openAt != math.MaxInt64:
				advance(openAt)
				if w := &wins[next]; w.end > w.start {
					open.push(openWindow{end: w.end, win: int32(next), snap: sums.snapshot()})
				}
				next++
			default:
				advance(t)
				return
			}
		}
	}
	defer func() { d.pathCache = nil }()
	// The forward pass kept the location's enters and leaves: read them,
	// not the trace.
	lr := records{log: logReader{buf: d.log.buf}}
	if d.log.reread {
		lr.it = f.Events(lo.ID)
	}
	var (
		lastTick uint64 // the last record's tick, converted to t
		t        int64
		// The synchronisation calls' enters and leaves were put on the
		// axis by the forward pass: their times are read from d.calls,
		// found as it made them (a sync call's enter, unless an MPI call
		// inside another), rather than converted again.
		nextCall int32
	)
	clk := a.clockOf(lo.File, f)
	// Between two windows the sweep only keeps the stack: records whose
	// ticks are below skip fall before the next window opens, so their
	// times are not needed (the clock bounds them; about two in five of
	// LULESH's records).
	var skip uint64
	for (next < len(wins) || len(open) > 0) && (lr.it == nil && lr.log.next(&e) || lr.it != nil && lr.next(&e)) {
		c, k := int32(-1), regionCompute
		if e.enter {
			if k = a.kind(lo.File, e.region); (k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier) && (sync < 0 || k != regionMPI) {
				c = nextCall
				nextCall++
			}
		} else if len(stack) > 0 {
			c = stack[len(stack)-1].call
		}
		switch {
		case c >= 0 && int(c) < len(d.calls) && e.enter:
			lastTick, t = e.tick, d.calls[c].enter
		case c >= 0 && int(c) < len(d.calls):
			lastTick, t = e.tick, d.calls[c].leave
		case begun && e.tick < skip && len(open) == 0:
			// Before the next window: t stays the last record's, which
			// segments nothing.
		case !begun || e.tick != lastTick:
			// The axis, or in-situ the rank's reference clock; the synced
			// cases inlined: every record of a compute region.
			switch lastTick = e.tick; clk.mode {
			case clockSyncedAxis:
				t = clk.ax.SyncedNanos(e.tick)
			case clockSync:
				t = clk.sc.Nanos(e.tick)
			default:
				t = clk.nanos(e.tick)
			}
		}
		if begun && t > prev && len(stack) > 0 {
			skip = 0
			if len(open) > 0 && open[0].end > t && (next == len(wins) || wins[next].start >= t) {
				// No window opens or closes before t, the common case
				// inside a synchronisation interval: what segment does
				// then, without its calls. The top's known path outside
				// synchronisation calls (nearly every record) is read in
				// place: a known path is a region's, removed ancestors'
				// frames hold -1.
				p := stack[len(stack)-1].path
				if sync >= 0 || p < 0 {
					p = d.chargedPath(stack, sync)
				}
				if p >= 0 {
					sums.charge(p, t-prev)
				}
			} else {
				segment(prev, t)
				if len(open) == 0 && next < len(wins) {
					skip = clk.below(lastTick, t, wins[next].start)
				}
			}
		}
		if !begun {
			prev = t // in-situ, times before the reference clock's zero are negative
		}
		prev, begun = max(prev, t), true
		switch {
		case e.enter:
			for len(stack) < e.depth-1 {
				stack = append(stack, frame{call: -1, path: -1}) // a removed ancestor
			}
			if sync < 0 && (k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier) {
				sync = len(stack)
			}
			fr := frame{region: e.region, call: c, path: -2}
			if c >= 0 && int(c) < len(d.calls) {
				fr.path = d.calls[c].path // the forward pass made it, on the same stack
			}
			stack = append(stack, fr)
		default:
			if len(stack) == 0 {
				break
			}
			// Close the region and the removed ancestors right above it, as
			// the reader does.
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
	if err := lr.err(); err != nil {
		return fmt.Errorf("%s: location %d: %w", f.Path, lo.ID, err)
	}
	// The windows still open at the location's last event end there.
	for len(open) > 0 {
		closeTop()
	}
	return nil
}

// chargedPath returns the call path the sweep charges a location's time
// to: the outermost open synchronisation call's (stack[sync]) or else the
// top's, skipping removed regions; -2 when only removed regions are open.
func (d *locData) chargedPath(stack []frame, sync int) int32 {
	at := len(stack) - 1
	if sync >= 0 {
		at = sync
	}
	for at >= 0 && stack[at].region == 0 {
		at--
	}
	if at < 0 {
		return -2
	}
	if p := stack[at].path; p != -2 {
		return p
	}
	return d.pathOf(stack, at)
}

// pathSums is a location's time per local call path while the sweep had a
// window open, and which paths it charged last.
type pathSums struct {
	cum   []int64  // per path: the time so far
	stamp []uint64 // per path: the step that charged it last
	step  uint64   // charges so far
	// The paths charged so far, the latest first (a list through next
	// and prev, from head): a closing window reads only the paths charged
	// since it opened, however many the location has.
	next, prev []int32
	head       int32
	last       *pathSnap   // the latest snapshot, shared while no charge follows
	free       []*pathSnap // released snapshots, for reuse
}

// pathSnap is a copy of pathSums.cum when windows opened, at step.
type pathSnap struct {
	cum  []int64
	step uint64
	refs int
}

// at returns path p's time in the snapshot (0: the path came after it).
func (s *pathSnap) at(p int32) int64 {
	if int(p) < len(s.cum) {
		return s.cum[p]
	}
	return 0
}

// charge adds ns to path p.
func (ps *pathSums) charge(p int32, ns int64) {
	for int(p) >= len(ps.cum) {
		ps.cum = append(ps.cum, 0)
		ps.stamp = append(ps.stamp, 0)
		ps.next = append(ps.next, -1)
		ps.prev = append(ps.prev, -1)
	}
	// The four lists are as long as cum: said once, so that an index
	// below it is checked once (a charge per segment of every window).
	n := len(ps.cum)
	cum, stamp, next, prev := ps.cum[:n], ps.stamp[:n], ps.next[:n], ps.prev[:n]
	i := int(p)
	ps.step++
	cum[i] += ns
	stamp[i] = ps.step
	head := ps.head
	if head == p {
		return
	}
	// Unlink p (if listed) and put it first.
	pn, pp := next[i], prev[i]
	if pp >= 0 {
		next[pp] = pn
	}
	if pn >= 0 {
		prev[pn] = pp
	}
	prev[i], next[i] = -1, head
	if head >= 0 {
		prev[head] = p
	}
	ps.head = p
}

// snapshot returns a copy of the sums now, shared with the windows opened
// since the last charge.
func (ps *pathSums) snapshot() *pathSnap {
	if s := ps.last; s != nil && s.refs > 0 && s.step == ps.step {
		s.refs++
		return s
	}
	var s *pathSnap
	if k := len(ps.free); k > 0 {
		s, ps.free = ps.free[k-1], ps.free[:k-1]
	} else {
		s = new(pathSnap)
	}
	s.cum = append(s.cum[:0], ps.cum...)
	s.step, s.refs = ps.step, 1
	ps.last = s
	return s
}

// release gives back a window's snapshot.
func (ps *pathSums) release(s *pathSnap) {
	if s.refs--; s.refs == 0 {
		ps.free = append(ps.free, s)
	}
}

// openWindow is a window the sweep has open: which one, when it ends, and
// the sums when it opened.
type openWindow struct {
	end  int64
	win  int32 // an index of the location's windows
	snap *pathSnap
}

// openHeap is the open windows, the first to end on top.
type openHeap []openWindow

func (h *openHeap) push(w openWindow) {
	*h = append(*h, w)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].end <= s[i].end {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *openHeap) pop() openWindow {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && s[c+1].end < s[c].end {
			c++
		}
		if s[i].end <= s[c].end {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// sortWindows sorts a location's windows by start. The sweep's sums do
// not depend on the order of windows that start together, only on their
// starts and ends. Tens of thousands of windows a location are sorted by
// their starts' digits (a least-significant-digit radix sort, stable, so
// the order is the same every run), which costs a few moves a window where
// comparing costs an indirect call per comparison; few, by comparing.
func sortWindows(w []window) { sortWindowsWith(w, nil) }

// sortWindowsWith is sortWindows with tmp for the radix sort's copy if it
// is large enough; it returns the copy's array for the next call.
func sortWindowsWith(w, tmp []window) []window {
	if len(w) < 256 {
		slices.SortFunc(w, compareWindow)
		return tmp
	}
	lo, hi := w[0].start, w[0].start
	for i := range w {
		lo, hi = min(lo, w[i].start), max(hi, w[i].start)
	}
	const digit = 11 // bits: 2048 counters, about two to four passes
	var count [1 << digit]int
	if cap(tmp) < len(w) {
		tmp = make([]window, len(w))
	}
	src, dst := w, tmp[:len(w)]
	// Unsigned differences: right for any two int64s, hi ≥ lo.
	for shift := 0; shift < bits.Len64(uint64(hi)-uint64(lo)); shift += digit {
		clear(count[:])
		for i := range src {
			count[(uint64(src[i].start)-uint64(lo))>>shift&(1<<digit-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for i := range src {
			d := (uint64(src[i].start) - uint64(lo)) >> shift & (1<<digit - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &w[0] {
		copy(w, src)
	}
	return tmp
}

// compareWindow orders windows by start, then fully, so that the order
// is the same every run.
func compareWindow(x, y window) int {
	if x.start != y.start {
		return cmp.Compare(x.start, y.start)
	}
	if x.wait != y.wait {
		return cmp.Compare(x.wait, y.wait)
	}
	if x.kind != y.kind {
		return cmp.Compare(x.kind, y.kind)
	}
	return cmp.Compare(x.end, y.end)
}

// charge adds ov ns of local call path path (of region reg) to window w.
func (a *analysis) charge(w *window, waits []wait, path int32, reg uint32, ov int64, named []bool, file int, out *delayOut) {
	i := int(w.wait)
	switch w.kind {
	case winPath:
		out.path[path] += ov
		return
	case winLate, winWaiter:
		k := interval(i, w.kind)
		if out.times[k] == nil {
			out.times[k] = out.newTimes()
		}
		out.times[k] = addPathNs(out.times[k], path, ov)
		return
	case winWork:
		if a.kind(file, reg) == regionCompute {
			out.work[i] = addRegionTime(out.work[i], reg, ov)
		}
		return
	}
	// A wait is charged segment by segment, mostly in one region: the
	// last cost and the last (wait, region) counted save the maps' hashing.
	k := costKey{waits[i].Pattern, reg}
	v := out.lastCost
	if v == nil || out.lastKey != k {
		v = out.costs[k]
		if v == nil {
			v = &Value{Pattern: k.p, Path: -1, Loc: waits[i].Peer}
			out.costs[k] = v
		}
		out.lastKey, out.lastCost = k, v
	}
	v.Time += ov
	if !out.lastSeenOK || out.lastSeen != w.wait || out.lastSeenReg != reg {
		if s := out.seen[w.wait]; !slices.Contains(s, reg) {
			out.seen[w.wait] = append(s, reg)
			v.Count++
		}
		out.lastSeen, out.lastSeenReg, out.lastSeenOK = w.wait, reg, true
	}
	if named[i] {
		out.during[i] = addRegionTime(out.during[i], reg, ov)
	}
}

// chargeDuring adds a wait's window w, whole, to the delay costs: the
// late party's time in each region during the wait (regions, each once).
func (a *analysis) chargeDuring(w *window, waits []wait, regions []regionTime, named []bool, out *delayOut) {
	i := int(w.wait)
	for _, rt := range regions {
		v := out.cost(costKey{waits[i].Pattern, rt.region}, waits[i].Peer)
		v.Time += rt.ns
		v.Count++
	}
	if named[i] && len(regions) > 0 {
		out.during[i] = append(out.during[i], regions...)
	}
}

// cost returns the delay cost of key k on location loc, made on first
// use. A location charges few (pattern, region) keys, and waits of two
// patterns alternate: the last keys, searched in order, save the map's
// hashing.
func (o *delayOut) cost(k costKey, loc int) *Value {
	for i := range o.recent {
		if o.recent[i].key == k && o.recent[i].v != nil {
			return o.recent[i].v
		}
	}
	v := o.costs[k]
	if v == nil {
		v = &Value{Pattern: k.p, Path: -1, Loc: loc}
		o.costs[k] = v
	}
	copy(o.recent[1:], o.recent[:len(o.recent)-1])
	o.recent[0] = recentCost{k, v}
	return v
}

func addPathNs(pt []pathNs, path int32, ns int64) []pathNs {
	for i := range pt {
		if pt[i].path == path {
			pt[i].ns += ns
			return pt
		}
	}
	return append(pt, pathNs{path, ns})
}

func addRegionTime(rt []regionTime, reg uint32, ns int64) []regionTime {
	for i := range rt {
		if rt[i].region == reg {
			rt[i].ns += ns
			return rt
		}
	}
	return append(rt, regionTime{reg, ns})
}
