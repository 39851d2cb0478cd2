package measure

import (
	"github.com/hmbtrace/hmbtrace/buffer"
)

// EnterCollective records that the goroutine enters region r, a collective
// operation (an MPI_Allreduce, say) with the given root rank (-1: none) and
// bytes. Its enter and leave go to the collective event class, which the
// class policy may shed before enter/leave; leave it with Leave. Calls
// entered inside it are dropped with it. The duration filter does not hold
// collectives back.
func (l *Location) EnterCollective(r Region, root int, bytes uint64) {
	if l != nil && ProbesCompiledIn {
		l.enterCollective(r, root, bytes, 0, 0, 0, true)
	}
}

// EnterCollectiveAt is EnterCollective at time t, taken earlier from
// Measurement.Now, like EnterAt.
func (l *Location) EnterCollectiveAt(r Region, root int, bytes uint64, t uint64) {
	if l != nil && ProbesCompiledIn {
		l.enterCollective(r, root, bytes, 0, 0, t, false)
	}
}

// enterCollective is enter for the collective class. It repeats enter's
// bookkeeping on purpose: enter taking the collective's root and bytes, nil
// for a region, costs every enter 7 to 10 more instructions (callgrind,
// BenchmarkReplay: 134 or 137 against 127), for the test and for keeping
// the parameter across the clock read.
func (l *Location) enterCollective(r Region, root int, bytes, received uint64, comm uint32, t uint64, read bool) {
	p := l.entry(r)
	if p == nil || p.off != offNone {
		if p = l.enterOff(r, p); p == nil {
			return
		}
	}
	if read {
		t = l.now()
	}
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	t, tr, seq := l.stamp(t)
	_, _, infoSeq := l.stamp(t)
	l.recorded += 2 // the enter and its root and bytes
	d := l.depth + 1
	if d >= len(l.stack) {
		l.growStack()
	}
	f := &l.stack[d]
	f.start, f.child, f.tr, f.seq, f.region, f.state, f.counted, f.class = t, 0, tr, seq, uint32(r), frameDropped, false, buffer.ClassCollective
	l.depth = d
	p.visits++
	p.active++
	if l.cpt != nil {
		f.node = l.cpt.enter(l.stack[d-1].node, uint32(r))
	}
	if p.counted && l.src != nil && d <= l.mdepth {
		l.enterCounters(f, d, t)
	}
	if l.pendingFrom != 0 {
		l.flush(d - 1) // the calls around it are kept where they can be
	}
	closed := d >= l.mlimit || l.h.ClassClosed&(1<<buffer.ClassCollective) != 0
	if !closed && l.collLevel(d).EnterCollectiveComm(tr, seq, uint32(r), infoSeq, int64(root), bytes, received, comm) {
		f.state = frameWritten
		if f.counted {
			l.putMetric(d, f.tr, f.mseq, f.region, l.mstart[d*l.nmet:(d+1)*l.nmet])
		}
		return
	}
	if closed {
		l.drop(d, buffer.ClassCollective)
		l.drop(d, buffer.ClassCollective)
	}
	if f.counted {
		l.drop(d, buffer.ClassMetric)
	}
	l.lose(d) // what it calls goes with it
}
