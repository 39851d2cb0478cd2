package waitstate

import (
	"cmp"
	"slices"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The delays are found by a second pass over the late locations' events,
// once the waits are known (Böhme et al. replay backwards; reading the
// late party's events again in order, with the waits' windows sorted,
// finds the same): what each late location was doing during each wait it
// caused, and, for the worst waits, what it computed since its previous
// synchronisation point. Nothing of the first pass's events is kept, so
// memory is that of the calls and messages, not of the events.

// window is a stretch of a late location's time to account for.
type window struct {
	start, end int64
	wait       int  // index of the wait
	work       bool // the computation before the late call (named waits only), not the wait itself
	seen       []uint32
}

// delayOut is what the pass found on one late location.
type delayOut struct {
	costs map[costKey]*Value // delay costs by (pattern, region)
	// Per named wait: its regions during the window, and its work.
	during map[int][]regionTime
	work   map[int][]regionTime
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

// delays charges every wait to what its late party did during it (the
// Result's Delays) and names the delay of the worst waits (named, indices
// of waits), which become the Result's Worst.
func (a *analysis) delays(procs int, res *Result, waits []wait, named []int) error {
	isNamed := make(map[int]bool, len(named))
	for _, i := range named {
		isNamed[i] = true
	}
	wins := make([][]window, len(a.locs))
	for i, w := range waits {
		if w.Peer < 0 || w.Time <= 0 {
			continue
		}
		wins[w.Peer] = append(wins[w.Peer], window{start: w.Start, end: w.Start + w.Time, wait: i})
		if c := w.lateCall; isNamed[i] && c >= 0 {
			d := a.data[w.Peer]
			from := d.first
			if c > 0 {
				from = d.calls[c-1].leave
			}
			wins[w.Peer] = append(wins[w.Peer], window{start: from, end: d.calls[c].enter, wait: i, work: true})
		}
	}
	outs := make([]delayOut, len(a.locs))
	err := parallel.Do(procs, len(a.locs), func(n int) error {
		if len(wins[n]) == 0 {
			return nil
		}
		slices.SortStableFunc(wins[n], func(x, y window) int { return cmp.Compare(x.start, y.start) })
		return a.sweep(n, waits, wins[n], isNamed, &outs[n])
	})
	if err != nil {
		return err
	}
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

// sweep reads location n's events again and lays its windows (sorted by
// start) over the stretches of time it spent in each region: its own
// time in the region on top of its stack, or the open synchronisation
// call's time, whatever that calls.
func (a *analysis) sweep(n int, waits []wait, wins []window, named map[int]bool, out *delayOut) error {
	lo := a.locs[n]
	f := a.files[lo.File]
	out.costs = map[costKey]*Value{}
	out.during, out.work = map[int][]regionTime{}, map[int][]regionTime{}
	var (
		next   int
		active []*window
	)
	segment := func(s, e int64, reg uint32) {
		for next < len(wins) && wins[next].start < e {
			if wins[next].end > wins[next].start {
				active = append(active, &wins[next])
			}
			next++
		}
		kept := active[:0]
		for _, w := range active {
			if ov := min(e, w.end) - max(s, w.start); ov > 0 {
				a.charge(w, waits, reg, ov, named, lo.File, out)
			}
			if w.end > e {
				kept = append(kept, w)
			}
		}
		active = kept
	}
	var (
		e       tracefile.Event
		stack   []uint32
		inSync  int
		syncReg uint32
		prev    int64
		started bool
	)
	it := f.Events(lo.ID)
	for it.Next(&e) && (next < len(wins) || len(active) > 0) {
		t := a.axis.Nanos(lo.File, f, e.Time)
		if started && t > prev && len(stack) > 0 {
			reg := stack[len(stack)-1]
			if inSync > 0 {
				reg = syncReg
			}
			if reg != 0 {
				segment(prev, t, reg)
			}
		}
		prev, started = max(prev, t), true
		switch e.Kind {
		case encode.KindEnter:
			for len(stack) < e.Depth-1 {
				stack = append(stack, 0)
			}
			if k := a.kind(lo.File, e.Region); k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier {
				if inSync == 0 {
					syncReg = e.Region
				}
				inSync++
			}
			stack = append(stack, e.Region)
		case encode.KindLeave:
			if len(stack) == 0 {
				break
			}
			if reg := stack[len(stack)-1]; reg != 0 {
				if k := a.kind(lo.File, reg); k == regionMPI || k == regionOMPBarrier || k == regionOMPImplicitBarrier {
					inSync--
				}
			}
			m := len(stack) - 1
			for m > 0 && stack[m-1] == 0 {
				m--
			}
			stack = stack[:m]
		}
	}
	return it.Err()
}

// charge adds ov ns of region reg to window w.
func (a *analysis) charge(w *window, waits []wait, reg uint32, ov int64, named map[int]bool, file int, out *delayOut) {
	if w.work {
		if a.kind(file, reg) == regionCompute {
			out.work[w.wait] = addRegionTime(out.work[w.wait], reg, ov)
		}
		return
	}
	k := costKey{waits[w.wait].Pattern, reg}
	v := out.costs[k]
	if v == nil {
		v = &Value{Pattern: k.p, Path: -1, Loc: waits[w.wait].Peer}
		out.costs[k] = v
	}
	v.Time += ov
	if !slices.Contains(w.seen, reg) {
		w.seen = append(w.seen, reg)
		v.Count++
	}
	if named[w.wait] {
		out.during[w.wait] = addRegionTime(out.during[w.wait], reg, ov)
	}
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
