package buffer

import (
	"encoding/binary"
	"time"
)

// Flat is the traditional event buffer the Hierarchical Memory Buffer is
// measured against (Wagner, figure 6): events in one contiguous array in
// the order they occurred, reduced by scanning every event and compacting
// the survivors. Records are fixed width, the fastest layout to scan, so the
// comparison favours it.
type Flat struct {
	buf      []byte
	n        int // records
	maxDepth int
}

// FlatRecordSize is the size of one record: kind, class, depth, region, time.
const FlatRecordSize = 16

// NewFlat allocates a flat buffer of size bytes.
func NewFlat(size int) *Flat {
	return &Flat{buf: make([]byte, size/FlatRecordSize*FlatRecordSize)}
}

// Put appends a record; false means the buffer is full.
func (f *Flat) Put(kind uint8, class Class, depth int, region uint32, t uint64) bool {
	off := f.n * FlatRecordSize
	if off+FlatRecordSize > len(f.buf) {
		return false
	}
	r := f.buf[off : off+FlatRecordSize]
	r[0] = kind
	r[1] = byte(class)
	binary.LittleEndian.PutUint16(r[2:], uint16(depth))
	binary.LittleEndian.PutUint32(r[4:], region)
	binary.LittleEndian.PutUint64(r[8:], t)
	f.n++
	f.maxDepth = max(f.maxDepth, depth)
	return true
}

// Len returns the number of records held.
func (f *Flat) Len() int { return f.n }

// Full reports whether another record would not fit.
func (f *Flat) Full() bool { return (f.n+1)*FlatRecordSize > len(f.buf) }

// ReduceDepth removes every record of the deepest depth present, as the
// depth policy does: a scan of all records and a compaction of the rest.
// It returns how many records it removed.
func (f *Flat) ReduceDepth() int {
	d := f.maxDepth
	if d == 0 {
		return 0
	}
	w := 0
	for i := 0; i < f.n; i++ {
		src := f.buf[i*FlatRecordSize : (i+1)*FlatRecordSize]
		if int(binary.LittleEndian.Uint16(src[2:])) >= d {
			continue
		}
		if w != i {
			copy(f.buf[w*FlatRecordSize:], src)
		}
		w++
	}
	removed := f.n - w
	f.n = w
	f.maxDepth = d - 1
	return removed
}

// ReductionCost times one depth reduction of a full buffer of size bytes,
// both ways: the Hierarchical Memory Buffer revoking the bins of the
// deepest depth, and the flat buffer scanning and compacting. Both hold
// the same kind of content, a call tree whose depths 1..8 take equal
// shares; the bins' contents are not encoded, since revoking them never
// reads them.
func ReductionCost(size, binSize int) (hmb, flat time.Duration, err error) {
	const depths = 8
	p, err := NewPool(Config{Size: size, BinSize: binSize})
	if err != nil {
		return 0, 0, err
	}
	h := p.NewHierarchy()
	p.mu.Lock()
	for i := 0; len(p.free) > 0; i++ {
		depth := 1 + i%depths
		lv := h.levels
		for depth >= len(lv) {
			lv = append(lv, [NumClasses]*Level{})
		}
		h.levels = lv
		l := h.levels[depth][ClassRegion]
		if l == nil {
			l = &Level{h: h, depth: depth, cur: -1, head: -1, tail: -1}
			h.levels[depth][ClassRegion] = l
		}
		p.takeLocked(l, uint64(i))
		l.pos, l.n = binSize, uint32(binSize/2)
		p.sealLocked(l)
	}
	p.mu.Unlock()
	start := time.Now()
	p.mu.Lock()
	p.closeDeepestLocked(0, nil)
	p.mu.Unlock()
	hmb = time.Since(start)

	f := NewFlat(size)
	for i := 0; !f.Full(); i++ {
		f.Put(1, ClassRegion, 1+i%depths, uint32(i), uint64(i))
	}
	start = time.Now()
	f.ReduceDepth()
	flat = time.Since(start)
	return hmb, flat, nil
}
