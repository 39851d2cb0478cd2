package dynamics

import (
	"fmt"
	"math"
)

// Kind is the shape of a feature, named as a person reading the plot would.
// Increases are degradations in Oleynik's convention (the series measures
// time lost or a cost), decreases are improvements.
type Kind int

const (
	// Peak is a temporary rise that returns to its level (Oleynik's "AB"
	// episode sequence: concave increase then concave decrease).
	Peak Kind = iota
	// Dip is a temporary fall that returns to its level.
	Dip
	// StepUp is a lasting rise that happens within about one iteration.
	StepUp
	// StepDown is a lasting fall that happens within about one iteration.
	StepDown
	// TrendUp is a gradual rise over many iterations (Oleynik's rising
	// episodes A, D, E).
	TrendUp
	// TrendDown is a gradual fall over many iterations.
	TrendDown
	// Periodic is a peak that recurs every Period iterations: regular
	// work such as a checkpoint every tenth iteration, one feature for all
	// its peaks, not a change of the run.
	Periodic
)

var kindNames = [...]string{"peak", "dip", "step up", "step down", "upward trend", "downward trend", "periodic peaks"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Feature is one relevant change in a series.
type Feature struct {
	Kind Kind
	// From and To are the first and last iteration (0-based, inclusive) of
	// the feature. A peak or dip covers the iterations off its level; a step
	// covers the last iteration at the old level and the first at the new one;
	// a trend covers the iterations over which the series moves.
	From, To int
	// Severity is the time the feature adds over the series' baseline, in
	// value units × iterations: what the run would save if the feature
	// were prevented (Oleynik, §6.1). The baseline is the lowest level the
	// series holds for a while (its fitted level, not a single fast
	// iteration). A peak or dip counts the area between the series and the
	// line joining the levels around it (negative for a dip). Steps and
	// trends share out the area between the fitted series and the
	// baseline: a rise owns what it adds for as long as the series stays
	// up, and the excess the series starts with (a slow start, a run that
	// improves) belongs to the fall that ends it. So no iteration's time is
	// counted twice, and no feature costs more than the series' total.
	Severity float64
	// Scale is the σ, in iterations, of the finest scale-space level at which
	// the feature is significant; Stability is the number of levels over which
	// it is significant (Oleynik's stability, §6.3.5). For trends, which have
	// no critical point inside, these are the levels at which the fitted slope
	// exceeds the noise threshold while the smoothing is narrower than a quarter
	// of the trend. Both are zero for a step that only the direct search of
	// the fit found (see Analyze).
	Scale     float64
	Stability int
	// Period is the distance between the peaks of a Periodic feature, in
	// iterations (0 for the other kinds); its From and To are the first and
	// last of them, Stability their number.
	Period int
}

func (f Feature) String() string {
	if f.Kind == Periodic {
		return fmt.Sprintf("%v every %d [%d,%d] severity %.4g (%d of them)", f.Kind, f.Period, f.From, f.To, f.Severity, f.Stability)
	}
	return fmt.Sprintf("%v [%d,%d] severity %.4g (σ=%.3g, stability %d)", f.Kind, f.From, f.To, f.Severity, f.Scale, f.Stability)
}

// change is a move of the fitted series: a jump at a breakpoint or a
// sloped segment.
type change struct {
	up        bool
	jump      bool
	from, to  int     // a jump: last old and first new sample; a slope: its samples
	delta     float64 // signed size of the move
	sigma     float64
	stability int
}

// first returns the first sample that the change moves.
func (c change) first() int {
	if c.jump {
		return c.to
	}
	return c.from
}

// lastOff returns the last sample still off the level when c is the change
// that ends an excursion: before the jump back, or the end of the slope back.
func (c change) lastOff() int {
	if c.jump {
		return c.from
	}
	return c.to
}

// run is a maximal sequence of changes in one direction with no flat
// stretch of minTrendSamples or more between them: a rise made of a jump and
// a slope, the flank of a rounded bump fitted by several pieces.
type run struct {
	cs []change
	up bool
}

// item is one feature to be: a lasting change, or an excursion made of the
// changes a (away from the level) and b (back).
type item struct {
	c    change
	a, b []change
}

func (it item) excursion() bool { return it.a != nil }

// findChanges lists the jumps and slopes of the model in order.
func findChanges(m model, grid, thr1 []float64) []change {
	var cs []change
	for k, s := range m.segs {
		if k > 0 && m.jumps[k-1] {
			at := float64(s.from) - 0.5
			j := s.at(at) - m.segs[k-1].at(at)
			b := m.bps[k-1]
			cs = append(cs, change{up: j > 0, jump: true, from: s.from - 1, to: s.from, delta: j,
				sigma: b.sigma, stability: b.stability})
		}
		if s.slope != 0 {
			sigma, stability := trendScale(s, grid, thr1)
			cs = append(cs, change{up: s.slope > 0, from: s.from, to: s.to, delta: s.slope * float64(s.to-s.from),
				sigma: sigma, stability: stability})
		}
	}
	return mergeAdjacent(cs)
}

// mergeAdjacent merges touching changes of the same direction and type:
// jumps at consecutive iterations are one step spread over them, and
// slopes that meet are one trend whose rate changes.
func mergeAdjacent(cs []change) []change {
	var out []change
	for _, c := range cs {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.up == c.up && last.jump == c.jump && c.first() <= last.to+1 {
				last.to = c.to
				last.delta += c.delta
				last.stability = max(last.stability, c.stability)
				last.sigma = minPositive(last.sigma, c.sigma)
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// findRuns groups the changes into runs.
func findRuns(cs []change) []run {
	var runs []run
	for _, c := range cs {
		if n := len(runs); n > 0 {
			last := &runs[n-1]
			if last.up == c.up && c.first() < last.cs[len(last.cs)-1].to+minTrendSamples {
				last.cs = append(last.cs, c)
				continue
			}
		}
		runs = append(runs, run{cs: []change{c}, up: c.up})
	}
	return runs
}

// trendScale returns the finest scale at which a slope is significant and
// the number of levels at which it is, counting only levels narrower than a
// quarter of the segment (wider ones mix in its neighbours).
func trendScale(s line, grid, thr1 []float64) (float64, int) {
	sigma, count := 0.0, 0
	length := float64(s.to - s.from + 1)
	for k, g := range grid {
		if 4*g > length {
			break
		}
		if math.Abs(s.slope) > thr1[k] {
			if count == 0 {
				sigma = g
			}
			count++
		}
	}
	return sigma, count
}

// excursionSplit looks for a peak or a dip where run a turns into run b:
// the last changes of a, from ka on, and the first of b, up to kb, go away
// from the level and back to within half of the height (and not more than
// twice it), and the excursion is not wider than the stretches beside it,
// up to the nearest steps outside it or the ends of the series: than both,
// or than the longer one if the shorter holds a level (minTrendSamples
// iterations). Another is left as lasting changes: a raised plateau is a
// step up and a step down, not a peak, and a long fast stretch after two
// slow first iterations is the level the run starts at, not a dip. Trends
// do not bound the stretches beside it: a spike on a trend is a peak. The
// longest such excursion is chosen, so that a rounded bump fitted by
// several pieces is one peak, and a spike at the top of a rise is a peak
// after the rise.
func excursionSplit(cs []change, a, b run, n int) (ka, kb int, ok bool) {
	for ka = 0; ka < len(a.cs); ka++ {
		for kb = len(b.cs); kb >= 1; kb-- {
			away, back := a.cs[ka:], b.cs[:kb]
			var up, down float64
			for _, c := range away {
				up += c.delta
			}
			for _, c := range back {
				down += c.delta
			}
			r := math.Abs(down) / math.Abs(up)
			if r < 0.5 || r > 2 {
				continue
			}
			from, to := away[0].first(), back[len(back)-1].lastOff()
			before, after := from, n-1-to
			for _, c := range cs {
				if !c.jump || c.first() >= from && c.first() <= to+1 {
					continue
				}
				if c.to < from {
					before = min(before, from-c.to)
				} else {
					after = min(after, c.first()-to-1)
				}
			}
			if w := to - from + 1; w <= min(before, after) || w <= max(before, after) && min(before, after) >= minTrendSamples {
				return ka, kb, true
			}
		}
	}
	return 0, 0, false
}

func minPositive(a, b float64) float64 {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return math.Min(a, b)
}
