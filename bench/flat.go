package main

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// flat is the traditional event buffer the Hierarchical Memory Buffer is
// measured against (Wagner, figure 6): events in one contiguous array in
// the order they occurred, reduced by scanning every event and compacting
// the survivors. Records are fixed width, the fastest layout to scan, so the
// comparison favours it.
type flat struct {
	buf      []byte
	n        int // records
	maxDepth int
}

// flatRecordSize is the size of one record: kind, class, depth, region, time.
const flatRecordSize = 16

// newFlat allocates a flat buffer of size bytes.
func newFlat(size int) *flat {
	return &flat{buf: make([]byte, size/flatRecordSize*flatRecordSize)}
}

// Put appends a record; false means the buffer is full.
func (f *flat) Put(kind uint8, class buffer.Class, depth int, region uint32, t uint64) bool {
	off := f.n * flatRecordSize
	if off+flatRecordSize > len(f.buf) {
		return false
	}
	r := f.buf[off : off+flatRecordSize]
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
func (f *flat) Len() int { return f.n }

// Full reports whether another record would not fit.
func (f *flat) Full() bool { return (f.n+1)*flatRecordSize > len(f.buf) }

// ReduceDepth removes every record of the deepest depth present, as the
// depth policy does: a scan of all records and a compaction of the rest.
// It returns how many records it removed.
func (f *flat) ReduceDepth() int {
	d := f.maxDepth
	if d == 0 {
		return 0
	}
	w := 0
	for i := 0; i < f.n; i++ {
		src := f.buf[i*flatRecordSize : (i+1)*flatRecordSize]
		if int(binary.LittleEndian.Uint16(src[2:])) >= d {
			continue
		}
		if w != i {
			copy(f.buf[w*flatRecordSize:], src)
		}
		w++
	}
	removed := f.n - w
	f.n = w
	f.maxDepth = d - 1
	return removed
}

// reductionCost times one depth reduction of a full buffer of size bytes,
// both ways: the Hierarchical Memory Buffer revoking the bins of the
// deepest depth, and the flat buffer scanning and compacting. Both hold
// the same kind of content, a call tree whose depths 1..8 take equal
// shares, one bin after the other; the bins' contents are not encoded,
// since revoking them never reads them.
func reductionCost(size, binSize int) (hmb, flatCost time.Duration, err error) {
	const depths = 8
	p, err := buffer.NewPool(buffer.Config{Size: size, BinSize: binSize})
	if err != nil {
		return 0, 0, err
	}
	h := p.NewHierarchy()
	for i := range p.Bins() {
		lv := h.Level(1+i%depths, buffer.ClassRegion)
		if !lv.Refill(uint64(i), 0) {
			return 0, 0, fmt.Errorf("bin %d of %d: no bin free", i, p.Bins())
		}
		lv.Advance(lv.Room())
	}
	h.Release() // seals the current bins, as a location that stopped leaves them
	start := time.Now()
	p.CloseFrom(depths, uint64(p.Bins()))
	hmb = time.Since(start)
	if used, _ := p.Usage(); used != p.Bins()-p.Bins()/depths {
		return 0, 0, fmt.Errorf("the reduction left %d of %d bins in use, want %d", used, p.Bins(), p.Bins()-p.Bins()/depths)
	}

	f := newFlat(size)
	for i := 0; !f.Full(); i++ {
		f.Put(1, buffer.ClassRegion, 1+i%depths, uint32(i), uint64(i))
	}
	start = time.Now()
	f.ReduceDepth()
	flatCost = time.Since(start)
	return hmb, flatCost, nil
}
