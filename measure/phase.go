package measure

import (
	"sync"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// DefaultPhaseSlots is how many samples a location keeps of the phase
// series before adjacent ones merge.
const DefaultPhaseSlots = 512

// phaseSeries is a location's dynamic phase profile (Oleynik, eq. 5.2):
// per iteration of the progress loop, per region, the visits, inclusive
// and exclusive time and counter sums. It lives in constant memory: a fixed
// number of slots, and when they are full, adjacent samples merge pairwise
// and every later sample covers twice as many iterations.
type phaseSeries struct {
	region uint32 // the phase region: each leave closes an iteration
	slots  int
	fields int // per region and sample: visits, incl, excl, then 2 per counter
	width  uint64
	iters  uint64
	cur    int    // the sample being filled
	inCur  uint64 // iterations in it
	rows   [][]uint64
	base   []uint64 // the profile at the last iteration's end, per region and field

	mu        sync.Mutex // guards pub for the live handler
	pub       phaseSnapshot
	published bool
}

// phaseSnapshot is a copy of a series, for readers other than the owner.
type phaseSnapshot struct {
	Region     uint32
	Width      uint64
	Iterations uint64
	Samples    int
	Fields     int
	Rows       map[uint32][]uint64 // region: Samples × Fields values
}

func newPhaseSeries(region uint32, slots, nmet int) *phaseSeries {
	if slots < 2 {
		slots = DefaultPhaseSlots
	}
	slots += slots % 2
	return &phaseSeries{region: region, slots: slots, fields: 3 + 2*nmet, width: 1}
}

// endIteration adds what the location did since the last iteration's end
// to the current sample. The owner calls it at each leave of the phase
// region, after the profile took that leave.
func (ps *phaseSeries) endIteration(l *Location) {
	F := ps.fields
	if need := l.maxEntry() * F; len(ps.base) < need {
		ps.base = append(ps.base, make([]uint64, need-len(ps.base))...)
	}
	for len(ps.rows) < l.maxEntry() {
		ps.rows = append(ps.rows, nil)
	}
	l.forEachEntry(func(r uint32, p *profEntry) {
		b := ps.base[int(r)*F : int(r+1)*F]
		var sums []uint64
		if p.counted && l.src != nil {
			sums = l.sums(r)
		}
		if p.visits == b[0] && p.incl == b[1] && p.excl == b[2] && !moved(sums, b[3:]) {
			return
		}
		row := ps.rows[r]
		if row == nil {
			row = make([]uint64, ps.slots*F)
			ps.rows[r] = row
		}
		s := row[ps.cur*F : (ps.cur+1)*F]
		s[0] += p.visits - b[0]
		s[1] += p.incl - b[1]
		s[2] += p.excl - b[2]
		b[0], b[1], b[2] = p.visits, p.incl, p.excl
		for k, v := range sums {
			s[3+k] += v - b[3+k]
			b[3+k] = v
		}
	})
	ps.iters++
	ps.inCur++
	if ps.inCur < ps.width {
		return
	}
	ps.cur++
	ps.inCur = 0
	if ps.cur == ps.slots {
		ps.merge()
	}
	// A sample is complete: publish the series for the live view, if one
	// is attached. TryLock: the view may lag, the probes never wait.
	if l.m.live.Load() && ps.mu.TryLock() {
		ps.snapshotLocked()
		ps.mu.Unlock()
	}
}

// moved reports whether counter sums changed since b.
func moved(sums, b []uint64) bool {
	for k, v := range sums {
		if v != b[k] {
			return true
		}
	}
	return false
}

// merge halves the resolution: samples 2i and 2i+1 become sample i.
func (ps *phaseSeries) merge() {
	F := ps.fields
	half := ps.slots / 2
	for _, row := range ps.rows {
		if row == nil {
			continue
		}
		for i := 0; i < half; i++ {
			dst, a, b := row[i*F:(i+1)*F], row[2*i*F:(2*i+1)*F], row[(2*i+1)*F:(2*i+2)*F]
			for k := range dst {
				dst[k] = a[k] + b[k]
			}
		}
		clear(row[half*F:])
	}
	ps.cur = half
	ps.width *= 2
}

// samples is the number of samples holding data: the full ones and the one
// being filled, if it has any iteration.
func (ps *phaseSeries) samples() int {
	if ps.inCur > 0 {
		return ps.cur + 1
	}
	return ps.cur
}

func (ps *phaseSeries) snapshotLocked() {
	n := ps.samples()
	s := &ps.pub
	s.Region, s.Width, s.Iterations, s.Samples, s.Fields = ps.region, ps.width, ps.iters, n, ps.fields
	if s.Rows == nil {
		s.Rows = map[uint32][]uint64{}
	}
	for r, row := range ps.rows {
		if row != nil {
			s.Rows[uint32(r)] = append(s.Rows[uint32(r)][:0], row[:n*ps.fields]...)
		}
	}
	ps.published = true
}

// snapshot returns a copy of the series as last published (the owner
// publishes at the end of iterations); ok is false before the first.
func (ps *phaseSeries) snapshot() (phaseSnapshot, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.published {
		return phaseSnapshot{}, false
	}
	c := ps.pub
	c.Rows = make(map[uint32][]uint64, len(ps.pub.Rows))
	for r, v := range ps.pub.Rows {
		c.Rows[r] = append([]uint64(nil), v...)
	}
	return c, true
}

// export converts a published copy for the live view.
func (s phaseSnapshot) export(nmet int) *tracefile.PhaseSeries {
	ps := &phaseSeries{region: s.Region, width: s.Width, iters: s.Iterations, fields: s.Fields, cur: s.Samples}
	for r, row := range s.Rows {
		for int(r) >= len(ps.rows) {
			ps.rows = append(ps.rows, nil)
		}
		ps.rows[r] = row
	}
	return ps.export(nmet)
}

// export converts the series for the trace file.
func (ps *phaseSeries) export(nmet int) *tracefile.PhaseSeries {
	out := &tracefile.PhaseSeries{Region: ps.region, Width: ps.width, Iterations: ps.iters}
	F := ps.fields
	for i := 0; i < ps.samples(); i++ {
		var s tracefile.PhaseSample
		for r, row := range ps.rows {
			if row == nil {
				continue
			}
			v := row[i*F : (i+1)*F]
			if v[0] == 0 && v[1] == 0 && v[2] == 0 {
				continue
			}
			e := tracefile.ProfileEntry{Region: uint32(r), Visits: v[0], Inclusive: v[1], Exclusive: v[2]}
			if nmet > 0 {
				e.CounterInclusive = append([]uint64(nil), v[3:3+nmet]...)
				e.CounterExclusive = append([]uint64(nil), v[3+nmet:3+2*nmet]...)
			}
			s.Entries = append(s.Entries, e)
		}
		out.Samples = append(out.Samples, s)
	}
	return out
}
