package dynamics

import (
	"container/heap"
	"math"
	"slices"
)

// The scale-space image says where something happens and how salient it is;
// what happens and what it costs is then read from the series itself at the
// finest scale (Oleynik, §6.3.6: an episode's borders are the critical points
// at the finest scale and its Sum is taken over the raw samples).
//
// The series is modelled as a sequence of segments, one per episode, each
// flat or straight, split at breakpoints where the segments either jump (a
// step) or meet (a kink: a trend starts or ends). The model is chosen by
// penalised least squares: every parameter (a level, a slope, a breakpoint
// position) must lower the squared residual by more than 2·ln N·σ², the risk
// inflation criterion of Foster and George (1994), which is the universal
// threshold of Donoho and Johnstone squared: a parameter that noise alone
// would justify anywhere among the N samples costs more than it gains. So a
// segment gets a slope only if the slope is significant at that level, a
// breakpoint is a jump only if the two levels differ significantly, and a
// breakpoint is kept only if it pays for its position and parameters.
// Residual sums come from prefix sums in O(1).

// prefixSums holds running sums of y, i·y and y² of the series centred on
// its mean (centring keeps the sums small and the differences precise).
type prefixSums struct {
	mean         float64
	sy, siy, syy []float64
}

func newPrefixSums(x []float64) *prefixSums {
	n := len(x)
	p := &prefixSums{sy: make([]float64, n+1), siy: make([]float64, n+1), syy: make([]float64, n+1)}
	for _, v := range x {
		p.mean += v
	}
	p.mean /= float64(max(n, 1))
	for i, v := range x {
		y := v - p.mean
		p.sy[i+1] = p.sy[i] + y
		p.siy[i+1] = p.siy[i] + float64(i)*y
		p.syy[i+1] = p.syy[i] + y*y
	}
	return p
}

// minTrendSamples is the shortest segment that may get a slope, so that a
// change completed within a few iterations is a step (possibly spread over
// adjacent jumps), never a steep trend of three points.
const minTrendSamples = 5

// line is the fit of one segment [from, to] (inclusive):
// value(i) = level + slope·(i - centre).
type line struct {
	from, to     int
	level, slope float64
	centre       float64
	rssFlat      float64 // residual of the mean alone
	rssLine      float64 // residual with the slope (= rssFlat if too short)
}

func (p *prefixSums) fit(from, to int) line {
	n := float64(to - from + 1)
	sy := p.sy[to+1] - p.sy[from]
	syy := p.syy[to+1] - p.syy[from]
	c := float64(from+to) / 2
	l := line{from: from, to: to, centre: c, level: sy/n + p.mean}
	l.rssFlat = max(syy-sy*sy/n, 0)
	l.rssLine = l.rssFlat
	if to-from+1 >= minTrendSamples {
		sxy := p.siy[to+1] - p.siy[from] - c*sy
		sxx := n * (n*n - 1) / 12
		l.slope = sxy / sxx
		l.rssLine = max(l.rssFlat-sxy*l.slope, 0)
	}
	return l
}

func (l line) at(i float64) float64 { return l.level + l.slope*(i-l.centre) }

// hinge returns the residual of the continuous fit of two pieces over
// [from, to] that meet at knot, the left one over [from, bp-1] and the right
// one over [bp, to]; slopes says which pieces get a slope.
func (p *prefixSums) hinge(from, bp, to int, knot float64, slopes [2]bool) float64 {
	sy := p.sy[to+1] - p.sy[from]
	syy := p.syy[to+1] - p.syy[from]
	rhs := sy
	denom := float64(to - from + 1)
	var terms [2]struct{ su, suu, r float64 }
	for side, r := range [2][2]int{{from, bp - 1}, {bp, to}} {
		a, b := r[0], r[1]
		if !slopes[side] {
			continue
		}
		m := float64(b - a + 1)
		c := float64(a+b) / 2
		t := &terms[side]
		t.su = m * (c - knot)
		t.suu = m*(m*m-1)/12 + m*(c-knot)*(c-knot)
		t.r = p.siy[b+1] - p.siy[a] - knot*(p.sy[b+1]-p.sy[a])
		rhs -= t.su * t.r / t.suu
		denom -= t.su * t.su / t.suu
	}
	if denom <= 0 {
		return math.Inf(1)
	}
	alpha := rhs / denom
	explained := alpha * sy
	for _, t := range terms {
		if t.suu > 0 {
			explained += (t.r - t.su*alpha) / t.suu * t.r
		}
	}
	return max(syy-explained, 0)
}

// segmentation chooses breakpoints for one series.
type segmentation struct {
	p     *prefixSums
	n     int
	param float64 // penalty per parameter, in squared value units
}

// segCost is the penalised residual of one segment, flat or sloped.
func (s *segmentation) segCost(l line) float64 {
	c := l.rssFlat + s.param
	if l.to-l.from+1 >= minTrendSamples && l.rssLine+2*s.param < c {
		c = l.rssLine + 2*s.param
	}
	return c
}

// split returns the penalised residual of [from, to] split at bp, the
// better of a jump (two independent segments) and a kink (two pieces that
// meet between bp-1 and bp, at least one of them sloped), with the penalty
// for the position.
func (s *segmentation) split(from, bp, to int) (cost float64, jump bool) {
	knots := [...]float64{float64(bp) - 1, float64(bp) - 0.5, float64(bp)}
	return s.splitKnots(from, bp, to, knots[:])
}

// splitKnots is split with the knot of a kink tried at the given places.
func (s *segmentation) splitKnots(from, bp, to int, knots []float64) (cost float64, jump bool) {
	jumpCost := s.segCost(s.p.fit(from, bp-1)) + s.segCost(s.p.fit(bp, to))
	kinkCost := math.Inf(1)
	canSlope := [2]bool{bp-from >= minTrendSamples, to-bp+1 >= minTrendSamples}
	for _, slopes := range [3][2]bool{{true, false}, {false, true}, {true, true}} {
		if slopes[0] && !canSlope[0] || slopes[1] && !canSlope[1] {
			continue
		}
		params := 1.0
		for _, sl := range slopes {
			if sl {
				params++
			}
		}
		for _, knot := range knots {
			if c := s.p.hinge(from, bp, to, knot, slopes) + params*s.param; c < kinkCost {
				kinkCost = c
			}
		}
	}
	if jumpCost < kinkCost {
		return jumpCost + s.param, true
	}
	return kinkCost + s.param, false
}

// gain returns how much the breakpoint bp lowers the penalised residual of
// [from, to]; positive means it pays for itself.
func (s *segmentation) gain(from, bp, to int) float64 {
	c, _ := s.split(from, bp, to)
	return s.segCost(s.p.fit(from, to)) - c
}

// breakpoint starts a new segment at pos; scale and stability come from the
// scale-space contour it was found on.
type breakpoint struct {
	pos       int
	sigma     float64
	stability int
}

// bounds returns the segment span around breakpoint j.
func bounds(bps []breakpoint, j, n int) (from, to int) {
	if j > 0 {
		from = bps[j-1].pos
	}
	to = n - 1
	if j+1 < len(bps) {
		to = bps[j+1].pos - 1
	}
	return from, to
}

// refine moves each breakpoint, one at a time, to the position in its
// search window (±(2σ+2) around its anchor, where the scale space found it,
// and never past its neighbours) where the split costs least, until none
// moves. The narrow window keeps several candidates from crowding onto one
// feature.
func (s *segmentation) refine(bps []breakpoint, anchor []int) {
	for pass := 0; pass < 20; pass++ {
		moved := false
		for j := range bps {
			from, to := bounds(bps, j, s.n)
			w := int(math.Ceil(2*bps[j].sigma)) + 2
			if s.move(bps, j, max(from+1, anchor[j]-w), min(to, anchor[j]+w), false) {
				moved = true
			}
		}
		if !moved {
			return
		}
	}
}

// refineWide gives each breakpoint the whole span between its neighbours:
// the edge the scale space sees at a coarse scale where a slow trend starts
// can be farther from the trend's start than its window reaches. Moved
// breakpoints are re-anchored; it reports whether any moved. A breakpoint
// already placed best between the same neighbours (done) is not tried again.
func (s *segmentation) refineWide(bps []breakpoint, anchor []int, done map[[3]int]bool) bool {
	moved := false
	for j := range bps {
		from, to := bounds(bps, j, s.n)
		key := [3]int{from, bps[j].pos, to}
		if done[key] {
			continue
		}
		done[key] = true
		if s.move(bps, j, from+1, to, true) {
			anchor[j] = bps[j].pos
			moved = true
		}
	}
	return moved
}

// move puts breakpoint j at the position in [lo, hi] where its split costs
// least and reports whether it moved. A coarse move tries a kink's knot only
// midway between the samples, which is close enough to find the place.
func (s *segmentation) move(bps []breakpoint, j, lo, hi int, coarse bool) bool {
	from, to := bounds(bps, j, s.n)
	cost := func(b int) float64 {
		if coarse {
			knot := [1]float64{float64(b) - 0.5}
			c, _ := s.splitKnots(from, b, to, knot[:])
			return c
		}
		c, _ := s.split(from, b, to)
		return c
	}
	best := bps[j].pos
	bestCost := cost(best)
	for b := lo; b <= hi; b++ {
		if c := cost(b); c < bestCost-1e-12*math.Abs(bestCost) {
			best, bestCost = b, c
		}
	}
	if best == bps[j].pos {
		return false
	}
	bps[j].pos = best
	return true
}

// eliminate removes, least useful first, every breakpoint that does not pay
// for itself, and returns the survivors with their anchors.
func (s *segmentation) eliminate(bps []breakpoint, anchor []int) ([]breakpoint, []int) {
	m := len(bps)
	prev := make([]int, m)
	next := make([]int, m)
	alive := make([]bool, m)
	version := make([]int, m)
	for j := range bps {
		prev[j], next[j], alive[j] = j-1, j+1, true
	}
	gain := func(j int) float64 {
		from, to := 0, s.n-1
		if prev[j] >= 0 {
			from = bps[prev[j]].pos
		}
		if next[j] < m {
			to = bps[next[j]].pos - 1
		}
		return s.gain(from, bps[j].pos, to)
	}
	h := &gainHeap{}
	for j := range bps {
		heap.Push(h, gainEntry{gain(j), j, 0})
	}
	for h.Len() > 0 {
		e := heap.Pop(h).(gainEntry)
		if !alive[e.j] || e.version != version[e.j] {
			continue
		}
		if e.gain > 0 {
			break
		}
		alive[e.j] = false
		if p := prev[e.j]; p >= 0 {
			next[p] = next[e.j]
		}
		if q := next[e.j]; q < m {
			prev[q] = prev[e.j]
		}
		for _, k := range [2]int{prev[e.j], next[e.j]} {
			if k >= 0 && k < m && alive[k] {
				version[k]++
				heap.Push(h, gainEntry{gain(k), k, version[k]})
			}
		}
	}
	var kept []breakpoint
	var anchors []int
	for j := range bps {
		if alive[j] {
			kept = append(kept, bps[j])
			anchors = append(anchors, anchor[j])
		}
	}
	return kept, anchors
}

type gainEntry struct {
	gain    float64
	j       int
	version int
}

type gainHeap []gainEntry

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(a, b int) bool {
	if h[a].gain != h[b].gain {
		return h[a].gain < h[b].gain
	}
	return h[a].j < h[b].j
}
func (h gainHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *gainHeap) Push(x any)   { *h = append(*h, x.(gainEntry)) }
func (h *gainHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// search looks in every segment for the one breakpoint, kink or jump, that
// gains most, and returns those that pay for themselves. This catches what
// the scale space is weakest at: the start of a slow trend, whose curvature
// becomes significant only at scales coarser than the series allows, is
// plain in a direct fit of two joined pieces.
func (s *segmentation) search(bps []breakpoint, searched map[[2]int]bool) []breakpoint {
	var found []breakpoint
	var knot [1]float64
	for j := 0; j <= len(bps); j++ {
		from, to := 0, s.n-1
		if j > 0 {
			from = bps[j-1].pos
		}
		if j < len(bps) {
			to = bps[j].pos - 1
		}
		if searched[[2]int{from, to}] {
			continue
		}
		searched[[2]int{from, to}] = true
		whole := s.segCost(s.p.fit(from, to))
		best, bestGain := -1, 0.0
		for b := from + 1; b <= to; b++ {
			// The knot midway is close enough to find the place;
			// refinement then tries the others.
			knot[0] = float64(b) - 0.5
			c, _ := s.splitKnots(from, b, to, knot[:])
			if g := whole - c; g > bestGain {
				best, bestGain = b, g
			}
		}
		if best >= 0 {
			found = append(found, breakpoint{pos: best})
		}
	}
	return found
}

// choose eliminates the useless breakpoints where the scale space put them,
// then alternates refinement (narrow, then wide), elimination and search
// until the breakpoints settle. Eliminating first matters: the scale space reports several points
// around one step (the edge and the kinks of its blurred corners), and moving
// them first could let two of them share the step between them.
func (s *segmentation) choose(bps []breakpoint) []breakpoint {
	anchor := make([]int, len(bps))
	for j := range bps {
		anchor[j] = bps[j].pos
	}
	bps, anchor = s.eliminate(bps, anchor)
	searched := map[[2]int]bool{} // segments known to hold no breakpoint
	placed := map[[3]int]bool{}   // breakpoints known to be best between their neighbours
	for round := 0; round < 20; round++ {
		s.refine(bps, anchor)
		kept, keptAnchor := s.eliminate(bps, anchor)
		settled := len(kept) == len(bps)
		bps, anchor = kept, keptAnchor
		if !settled || s.refineWide(bps, anchor, placed) {
			continue
		}
		found := s.search(bps, searched)
		if len(found) == 0 {
			break
		}
		for _, f := range found {
			k, _ := slices.BinarySearchFunc(bps, f.pos, func(b breakpoint, p int) int { return b.pos - p })
			bps = slices.Insert(bps, k, f)
			anchor = slices.Insert(anchor, k, f.pos)
		}
	}
	return bps
}

// model is the chosen description: segments with their slopes decided and,
// per breakpoint, whether it is a jump.
type model struct {
	segs  []line
	bps   []breakpoint
	jumps []bool
}

// describe fits the final segments, keeping a slope only where it pays.
func (s *segmentation) describe(bps []breakpoint) model {
	m := model{bps: bps, jumps: make([]bool, len(bps))}
	from := 0
	for j := 0; j <= len(bps); j++ {
		to := s.n - 1
		if j < len(bps) {
			to = bps[j].pos - 1
		}
		l := s.p.fit(from, to)
		if l.to-l.from+1 < minTrendSamples || l.rssLine+2*s.param >= l.rssFlat+s.param {
			l.slope = 0
		}
		m.segs = append(m.segs, l)
		from = to + 1
	}
	for j, b := range bps {
		_, m.jumps[j] = s.split(m.segs[j].from, b.pos, m.segs[j+1].to)
	}
	return m
}
