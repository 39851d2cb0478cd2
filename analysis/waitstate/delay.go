package waitstate

import (
	"cmp"
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
// partners, the waits and their windows.

// window is a stretch of a location's time to account for. There are a
// few per wait, held for the whole second pass, so a window holds no
// times: the sweep charges them where the finishing steps look for them.
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
	// Each wait makes at most a window during it and an interval on its
	// late party, an interval on its waiting party, and the work window
	// of a named one: sized once, the windows are not copied as they grow.
	count := make([]int, len(a.locs))
	for _, w := range waits {
		if w.Peer >= 0 && w.Time > 0 {
			count[w.Peer] += 2
			count[w.Loc]++
		}
	}
	for _, i := range named {
		if p := waits[i].Peer; p >= 0 {
			count[p]++
		}
	}
	wins := make([][]window, len(a.locs))
	for n, c := range count {
		wins[n] = make([]window, 0, c+1) // +1: a span of the critical path, usually
	}
	for i, w := range waits {
		if w.Peer < 0 || w.Time <= 0 {
			continue
		}
		wins[w.Peer] = append(wins[w.Peer], window{start: w.Start, end: w.Start + w.Time, wait: int32(i), kind: winDuring})
		if c := w.lateCall; isNamed[i] && c >= 0 {
			d := a.data[w.Peer]
			from := d.first
			if c > 0 {
				from = d.calls[c-1].leave
			}
			wins[w.Peer] = append(wins[w.Peer], window{start: from, end: d.calls[c].enter, wait: int32(i), kind: winWork})
		}
	}
	cp, spans := a.walkCriticalPath(waits)
	for n, l := range spans {
		for _, s := range l {
			wins[n] = append(wins[n], window{start: s.start, end: s.end, wait: -1, kind: winPath})
		}
	}
	dc := a.intervalWindows(waits, wins, partners)
	outs := make([]delayOut, len(a.locs))
	err := parallel.Do(procs, len(a.locs), func(n int) error {
		if len(wins[n]) == 0 {
			a.data[n].log = regionLog{} // nothing to sweep
			return nil
		}
		// The sweep's sums do not depend on the order of windows that
		// start together (each wait has one window of a kind), so the
		// sort need not be stable, which costs a merge sort's moves.
		slices.SortFunc(wins[n], compareWindow)
		outs[n].times = dc.times
		if err := a.sweep(n, waits, wins[n], isNamed, &outs[n]); err != nil {
			return err
		}
		wins[n] = nil // measured: the windows go as the sweeps go
		a.data[n].log = regionLog{}
		return nil
	})
	if err != nil {
		return err
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
		inst := w.Instance
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

// sweep reads location n's enters and leaves again (its log) and lays its windows (sorted by
// start) over the stretches of time it spent in each call path: its own
// time in the region on top of its stack, or the open synchronisation
// call's time, whatever that calls. It stops after the last window.
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
		next   int
		active []*window
		e      logRecord
		stack  []frame
		sync   = -1 // the outermost open synchronisation call's place in stack
		prev   int64
		begun  bool
	)
	segment := func(s, t int64) {
		for next < len(wins) && wins[next].start < t {
			if wins[next].end > wins[next].start {
				active = append(active, &wins[next])
			}
			next++
		}
		if len(active) == 0 {
			return
		}
		at := len(stack) - 1
		if sync >= 0 {
			at = sync
		}
		for at >= 0 && stack[at].region == 0 {
			at--
		}
		kept := active[:0]
		for _, w := range active {
			if ov := min(t, w.end) - max(s, w.start); ov > 0 && at >= 0 {
				a.charge(w, waits, d.pathOf(stack, at), stack[at].region, ov, named, lo.File, out)
			}
			if w.end > t {
				kept = append(kept, w)
			} else if w.kind == winDuring {
				delete(out.seen, w.wait)
				out.lastSeenOK = false
			}
		}
		active = kept
	}
	defer func() { d.pathCache = nil }()
	// The forward pass kept the location's enters and leaves: read them,
	// not the trace.
	lr := logReader{buf: d.log.buf}
	for (next < len(wins) || len(active) > 0) && lr.next(&e) {
		t := a.nanos(lo.File, f, e.tick) // the axis, or in-situ the rank's reference clock
		if begun && t > prev && len(stack) > 0 {
			segment(prev, t)
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
			if k := a.kind(lo.File, e.region); sync < 0 && (k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier) {
				sync = len(stack)
			}
			stack = append(stack, frame{region: e.region, call: -1, path: -2})
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
	return nil
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
