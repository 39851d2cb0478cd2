package buffer

import (
	"encoding/binary"
	"fmt"

	"github.com/hmbtrace/hmbtrace/internal/survive"
)

// A buffer that survives its process (Config.Mapping) keeps the bins, the
// bins' descriptors and each level's bookkeeping in a file mapping, in the
// order of stores package survive defines: a record's bytes, then the
// bin's fill mark; a bin's descriptor before its header; a free bin's
// level index cleared before anything else. Without a mapping the
// descriptors are an ordinary slice and the same stores go there, so that
// a probe does the same work either way.

// poolMemory returns the bins' memory and their descriptors: the
// mapping's, or new ones.
func poolMemory(c Config, n int) ([]byte, []survive.BinDesc, error) {
	if m := c.Mapping; m != nil {
		if len(m.Descs) != n || len(m.Bins) != n*c.BinSize {
			return nil, nil, fmt.Errorf("mapping %s holds %d bins of %d bytes, not %d of %d", m.Path(), len(m.Descs), len(m.Bins)/max(len(m.Descs), 1), n, c.BinSize)
		}
		return m.Bins, m.Descs, nil
	}
	return make([]byte, n*c.BinSize), make([]survive.BinDesc, n), nil
}

// Surviving reports whether the pool's memory is a mapping that outlives
// the process.
func (p *Pool) Surviving() bool { return p.surv != nil }

// claimLocked makes bin b lv's current bin in its descriptor: fill mark 0
// first, the level's index last, so that a reader never takes the bin's
// old bytes for lv's.
func (p *Pool) claimLocked(b int32, lv *Level) {
	d := &p.descs[b]
	d.Used = 0
	d.Ord = lv.ords
	lv.ords++
	d.Level = uint32(lv.entry + 1)
	lv.mark = &d.Used
}

// enterLevelLocked gives a new level its entry in the mapping's table.
func (p *Pool) enterLevelLocked(lv *Level) {
	if p.surv == nil {
		return
	}
	lv.entry = int32(p.surv.NewLevel(lv.h.ID, lv.depth, uint8(lv.class)))
	p.mirrorLocked(lv)
}

// mirrorLocked copies the level's closure and revoked counts, which change
// under the pool's mutex, into its entry.
func (p *Pool) mirrorLocked(lv *Level) {
	if p.surv == nil || lv.entry < 0 {
		return
	}
	e := p.surv.Level(int(lv.entry))
	e.Revoked = lv.revoked
	e.ClosedBy = uint8(lv.closedBy)
	if lv.closed {
		e.Closed = 1
	}
}

// mirrorDropped copies the level's dropped counts, which its writer
// keeps, into its entry. Only the writer calls it, on its slow paths, so
// the entry's counts are lower bounds of the writer's.
func (p *Pool) mirrorDropped(lv *Level) {
	if p.surv == nil || lv.entry < 0 {
		return
	}
	p.surv.Level(int(lv.entry)).Dropped = lv.Dropped
}

// mirrorDroppedLocked is mirrorDropped for every level of h.
func (h *Hierarchy) mirrorDroppedLocked() {
	if h.pool.surv == nil {
		return
	}
	for _, row := range h.levels {
		for _, lv := range row {
			if lv != nil {
				h.pool.mirrorDropped(lv)
			}
		}
	}
}

// noteReductionLocked appends the newest reduction (or its update, for
// PolicyLast's merged steps) to the mapping's definition log.
func (p *Pool) noteReductionLocked() {
	if p.surv == nil || len(p.reductions) == 0 {
		return
	}
	i := len(p.reductions) - 1
	r := p.reductions[i]
	b := make([]byte, 0, 64)
	for _, v := range [...]uint64{uint64(i), uint64(r.Reason), uint64(r.Depth), uint64(r.Class), r.Time, uint64(r.Bins), r.Records, uint64(r.Steps)} {
		b = binary.AppendUvarint(b, v)
	}
	p.surv.Append(survive.DefReduction, b)
}
