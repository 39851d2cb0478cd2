package dynamics

import (
	"math"
	"slices"
)

// featureSet is what features returns: the features in time order, and
// for each the index of the feature whose rise it brings back down (-1 for
// none): a step down that ends a raised stretch costs nothing itself, but
// is told with the step up it closes.
type featureSet struct {
	fs     []Feature
	closes []int
}

// features turns the chosen model of the cleaned series into features.
// y is the series, clean the series with the spikes replaced (both in
// value units), m the model fitted to clean, or to its logarithms if
// logDomain;
// grid and thr1 are the scale-space levels and their slope thresholds.
func features(y, clean []float64, logDomain bool, m model, grid, thr1 []float64, spikes []spikeRun, per periodicRun) featureSet {
	n := len(y)
	items := mergeLasting(groupChanges(findChanges(m, grid, thr1), n))

	// The fitted series in value units: each segment of the model; from a
	// fit in logarithms, mapped back with exp and scaled so that it sums to
	// what the cleaned values sum to over the segment, as a least squares
	// fit of the values would: a rise fitted in logarithms keeps its curved
	// shape instead of a straight line that would undershoot its start and
	// overshoot its end.
	base := make([]float64, n)
	for _, s := range m.segs {
		var want, got float64
		for i := s.from; i <= s.to; i++ {
			v := s.at(float64(i))
			if logDomain {
				v = math.Exp(v)
			}
			base[i] = v
			want += clean[i]
			got += v
		}
		if logDomain && got > 0 && want > 0 {
			for i := s.from; i <= s.to; i++ {
				base[i] *= want / got
			}
		}
	}
	// A time is never negative, nor is the level it is fitted by.
	nonNegative := slices.Min(y) >= 0
	var sum float64
	for _, v := range y {
		sum += v
	}
	if nonNegative {
		for i, v := range base {
			base[i] = max(v, 0)
		}
	}
	// Under a peak or dip the level is the line joining the levels
	// around it.
	for _, it := range items {
		if it.excursion() {
			from, to := it.span()
			bridge(base, from, to)
		}
	}
	baseline := lowestLevel(base, m.segs, items, y)

	var out featureSet
	credit, closes := attribute(base, baseline, items)
	for k, it := range items {
		from, to := it.span()
		if it.excursion() {
			var sev, spent float64
			for i := from; i <= to; i++ {
				sev += clean[i] - base[i]
				spent += y[i]
			}
			if nonNegative {
				// Where outliers below the level were cleaned, the
				// cleaned values can exceed the time spent; a dip
				// under a level joined from far higher stretches
				// cannot save more than the series spends.
				sev = max(min(sev, spent), -sum)
			}
			f := Feature{Kind: Peak, From: from, To: to, Severity: sev}
			if sev < 0 {
				f.Kind = Dip
			}
			for _, c := range append(slices.Clone(it.a), it.b...) {
				f.Scale = minPositive(f.Scale, c.sigma)
				f.Stability = max(f.Stability, c.stability)
			}
			out.add(f, -1)
			continue
		}
		c := it.c
		var kind Kind
		switch {
		case c.jump && c.up:
			kind = StepUp
		case c.jump:
			kind = StepDown
		case c.up:
			kind = TrendUp
		default:
			kind = TrendDown
		}
		out.add(Feature{Kind: kind, From: from, To: to, Severity: credit[k], Scale: c.sigma, Stability: c.stability}, closes[k])
	}
	// Where the fitted series dips under the baseline it is counted at the
	// baseline, and under a dip it is counted at the level around it: the
	// lasting costs can then add up to more than the values above the
	// baseline. They are scaled down to that, so that all features
	// together never cost more than the series' total.
	var lasting, avail, total, peaks, outliers float64
	for k, it := range items {
		if !it.excursion() {
			lasting += out.fs[k].Severity
		} else if out.fs[k].Severity > 0 {
			peaks += out.fs[k].Severity
		}
	}
	for i := range clean {
		avail += max(clean[i]-baseline, 0)
		total += math.Abs(y[i])
		outliers += max(y[i]-clean[i], 0) // spikes and periodic peaks
	}
	if avail = min(avail-peaks, total-peaks-outliers); lasting > avail && lasting > 0 {
		f := max(avail, 0) / lasting
		for k, it := range items {
			if !it.excursion() {
				out.fs[k].Severity *= f
			}
		}
	}
	// Items and features share indexes up to here, as closes assumes.
	for _, r := range spikes {
		var sev float64
		for i := r.from; i <= r.to; i++ {
			sev += y[i] - clean[i]
		}
		kind := Peak
		if !r.up {
			kind = Dip
		}
		out.add(Feature{Kind: kind, From: r.from, To: r.to, Severity: sev, Scale: 0.5, Stability: 1}, -1)
	}
	if per.period > 0 {
		f := Feature{Kind: Periodic, From: per.from, To: per.to, Period: per.period, Scale: 0.5}
		for i := per.from; i <= per.to; i += per.period {
			f.Severity += y[i] - clean[i]
			f.Stability++
		}
		out.add(f, -1)
	}
	out.sort()
	return out
}

func (s *featureSet) add(f Feature, closes int) {
	s.fs = append(s.fs, f)
	s.closes = append(s.closes, closes)
}

// sort orders the features by From, keeping closes pointing at the same
// features.
func (s *featureSet) sort() {
	idx := make([]int, len(s.fs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return s.fs[a].From - s.fs[b].From })
	pos := make([]int, len(idx))
	for newI, old := range idx {
		pos[old] = newI
	}
	fs := make([]Feature, len(idx))
	closes := make([]int, len(idx))
	for newI, old := range idx {
		fs[newI] = s.fs[old]
		closes[newI] = -1
		if c := s.closes[old]; c >= 0 {
			closes[newI] = pos[c]
		}
	}
	s.fs, s.closes = fs, closes
}

// span returns the iterations an item covers: for an excursion those off
// the level, for a lasting change those it moves (with the last old one
// for a step).
func (it item) span() (from, to int) {
	if it.excursion() {
		return it.a[0].first(), it.b[len(it.b)-1].lastOff()
	}
	return it.c.from, it.c.to
}

// groupChanges makes items of the changes: where a run of changes in one
// direction turns into a run in the other, the changes that go away from
// a level and back are a peak or a dip (excursionSplit); the others are
// lasting changes.
func groupChanges(cs []change, n int) []item {
	runs := findRuns(cs)
	var items []item
	for i := 0; i < len(runs); i++ {
		if i+1 < len(runs) && runs[i].up != runs[i+1].up {
			if ka, kb, ok := excursionSplit(cs, runs[i], runs[i+1], n); ok {
				for _, c := range runs[i].cs[:ka] {
					items = append(items, item{c: c})
				}
				items = append(items, item{a: runs[i].cs[ka:], b: runs[i+1].cs[:kb]})
				for _, c := range runs[i+1].cs[kb:] {
					items = append(items, item{c: c})
				}
				i++
				continue
			}
		}
		for _, c := range runs[i].cs {
			items = append(items, item{c: c})
		}
	}
	return items
}

// mergeLasting merges consecutive lasting changes in one direction that
// no flat stretch of minTrendSamples iterations separates into one: the
// fit describes a curved rise (a ramp whose noise grows with it, a rise
// that slows down) by several straight pieces and jumps, but a person sees
// one trend, and it costs what all its pieces cost. Changes made of jumps
// only stay a step.
func mergeLasting(items []item) []item {
	var out []item
	for _, it := range items {
		if k := len(out); k > 0 && !it.excursion() && !out[k-1].excursion() {
			last := &out[k-1].c
			if last.up == it.c.up && it.c.first() < last.to+minTrendSamples {
				last.jump = last.jump && it.c.jump
				last.to = it.c.to
				last.delta += it.c.delta
				last.sigma = minPositive(last.sigma, it.c.sigma)
				last.stability = max(last.stability, it.c.stability)
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// bridge replaces v[from..to] by the straight line joining v[from-1] and
// v[to+1] (or by the one of them that exists).
func bridge(v []float64, from, to int) {
	n := len(v)
	switch {
	case from == 0 && to == n-1:
		return
	case from == 0:
		for i := from; i <= to; i++ {
			v[i] = v[to+1]
		}
	case to == n-1:
		for i := from; i <= to; i++ {
			v[i] = v[from-1]
		}
	default:
		a, b := v[from-1], v[to+1]
		for i := from; i <= to; i++ {
			f := float64(i-from+1) / float64(to-from+2)
			v[i] = a + f*(b-a)
		}
	}
}

// lowestLevel returns the series' baseline: the lowest value the fitted
// series takes on a segment of at least minTrendSamples iterations outside
// the peaks and dips (a single fast iteration is not a level the run could
// keep), or its lowest value when there is no such segment. Times are
// never negative: for a series without negative values, neither is the
// baseline.
func lowestLevel(base []float64, segs []line, items []item, y []float64) float64 {
	inside := make([]bool, len(base))
	for _, it := range items {
		if it.excursion() {
			from, to := it.span()
			for i := from; i <= to; i++ {
				inside[i] = true
			}
		}
	}
	low, found := math.Inf(1), false
	for _, s := range segs {
		if s.to-s.from+1 < minTrendSamples || inside[s.from] && inside[s.to] {
			continue
		}
		low = min(low, base[s.from], base[s.to])
		found = true
	}
	if !found {
		low = slices.Min(base)
	}
	if slices.Min(y) >= 0 {
		low = max(low, 0)
	}
	return low
}

// layer is a slice of the fitted series' excess over the baseline: added
// by one change (owner, an item index) or, with owner -1, present from the
// start or added by no feature.
type layer struct {
	h     float64 // height
	area  float64 // h × iterations, up to since
	since int
	owner int
}

// attribute shares out the area between the fitted series base and the
// baseline among the lasting items. The excess is a stack of layers: a
// rise puts a layer on top, a fall takes layers off the top, the latest
// rise first. A layer's area goes to the rise that added it; a layer
// present from the start goes to the fall that removes it. It returns the
// area per item and, per item, the item whose layer it removed (-1: none).
func attribute(base []float64, baseline float64, items []item) (credit []float64, closes []int) {
	n := len(base)
	credit = make([]float64, len(items))
	closes = make([]int, len(items))
	for k := range closes {
		closes[k] = -1
	}
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	for k, it := range items {
		if it.excursion() {
			continue
		}
		from := it.c.from
		if it.c.jump {
			from++ // the last old sample does not move
		}
		for i := max(from, 0); i <= it.c.to && i < n; i++ {
			owner[i] = k
		}
	}
	var scale float64
	for _, v := range base {
		scale = max(scale, math.Abs(v))
	}
	tiny := 1e-12 * scale
	var stack []layer
	settle := func(l *layer, t int) {
		l.area += l.h * float64(t-l.since)
		l.since = t
	}
	prev := baseline
	for i, v := range base {
		g := max(v, baseline)
		d := g - prev
		prev = g
		o := owner[i]
		if i == 0 {
			o = -1 // the level the series starts at is no change
		}
		switch {
		case d > tiny:
			if k := len(stack); k > 0 && stack[k-1].owner == o && o >= 0 {
				settle(&stack[k-1], i)
				stack[k-1].h += d
			} else {
				stack = append(stack, layer{h: d, since: i, owner: o})
			}
		case d < -tiny:
			rem := -d
			for rem > tiny && len(stack) > 0 {
				top := &stack[len(stack)-1]
				if top.h <= 0 {
					stack = stack[:len(stack)-1]
					continue
				}
				settle(top, i)
				take := min(rem, top.h)
				portion := top.area * take / top.h
				who := top.owner
				if who < 0 {
					who = o
				} else if o >= 0 && o != who && closes[o] < 0 {
					closes[o] = who
				}
				if who >= 0 {
					credit[who] += portion
				}
				top.area -= portion
				top.h -= take
				rem -= take
				if top.h <= tiny {
					stack = stack[:len(stack)-1]
				}
			}
		}
	}
	for k := range stack {
		settle(&stack[k], n)
		if o := stack[k].owner; o >= 0 {
			credit[o] += stack[k].area
		}
	}
	return credit, closes
}
