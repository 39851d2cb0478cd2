package cshim

import (
	"bytes"
	"encoding"
	"sync"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/summary"
)

// Merging the parts of a pass up the tree. A rank that merges its
// children's parts one after the other (rank 0 ⌈log₂ p⌉ times) would read
// its own running merge again each time, in the form it sent it, and the
// parts that gather every rank's (the matrix, the segments, the wait
// states) grow with the ranks merged: read again at every level, they
// cost rank 0, on whom every rank waits, O(p log p) where reading each
// rank's once costs O(p). So the rank keeps its last merge as read
// (mergedPart) and reads only the child's part, when the running merge
// it is given is the one it wrote.

// partCodec reads a pass's part, merges two as read (a's ranks before
// b's, into a or a new value) and writes one.
type partCodec struct {
	decode func([]byte) (any, error)
	merge  func(a, b any) any
	encode func(any) ([]byte, error)
}

// mergedPart is this rank's last merge of a pass: what it wrote, and the
// value it wrote it from.
type mergedPart struct {
	wrote []byte
	value any
}

// merged holds each pass's last merge on this rank, by the pass (defsKey
// for the definitions), until the collective end's passes end (PassEnd).
var merged struct {
	mu   sync.Mutex
	last map[int]mergedPart
}

// defsKey is the definitions' key in merged: they merge up the tree as the
// passes do, but are no pass.
const defsKey = -1

// mergeParts returns the merge of a and b in written form, reading a from
// the last merge of pass when a is what it wrote.
func (c *partCodec) mergeParts(pass int, a, b []byte) ([]byte, error) {
	merged.mu.Lock()
	last, ok := merged.last[pass]
	delete(merged.last, pass) // its value is merged into below
	merged.mu.Unlock()
	var pa any
	if ok && bytes.Equal(last.wrote, a) {
		pa = last.value
	} else {
		var err error
		if pa, err = c.decode(a); err != nil {
			return nil, err
		}
	}
	pb, err := c.decode(b)
	if err != nil {
		return nil, err
	}
	v := c.merge(pa, pb)
	out, err := c.encode(v)
	if err != nil {
		return nil, err
	}
	merged.mu.Lock()
	if merged.last == nil {
		merged.last = map[int]mergedPart{}
	}
	merged.last[pass] = mergedPart{out, v}
	merged.mu.Unlock()
	return out, nil
}

// readMerged returns the value of b, the run's result of pass at rank 0:
// the last merge's when b is what it wrote, else read.
func (c *partCodec) readMerged(pass int, b []byte) (any, error) {
	merged.mu.Lock()
	last, ok := merged.last[pass]
	merged.mu.Unlock()
	if ok && bytes.Equal(last.wrote, b) {
		return last.value, nil
	}
	return c.decode(b)
}

// forgetMerged lets the passes' last merges go.
func forgetMerged() {
	merged.mu.Lock()
	merged.last = nil
	merged.mu.Unlock()
}

// binaryCodec is the codec of the results that encode themselves in
// binary (the run profile, the run's definitions).
func binaryCodec[T any, P interface {
	*T
	Merge(*T)
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}]() *partCodec {
	return &partCodec{
		decode: func(b []byte) (any, error) {
			p := P(new(T))
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, err
			}
			return p, nil
		},
		merge: func(a, b any) any {
			a.(P).Merge(b.(P))
			return a
		},
		encode: func(v any) ([]byte, error) { return v.(P).MarshalBinary() },
	}
}

// variationCodec is the codec of a variation pass's parts (a Choice or
// Segments), in variation's wire form.
func variationCodec[T any, P interface {
	*T
	Merge(*T)
}]() *partCodec {
	return &partCodec{
		decode: func(b []byte) (any, error) {
			p := P(new(T))
			if err := variation.DecodeWire(b, p); err != nil {
				return nil, err
			}
			return p, nil
		},
		merge: func(a, b any) any {
			a.(P).Merge(b.(P))
			return a
		},
		encode: func(v any) ([]byte, error) { return variation.EncodeWire(v.(P)) },
	}
}

// funcCodec is the codec of the results whose package gives it as
// functions (the phase series, the wait states).
func funcCodec[P interface{ Merge(P) }](decode func([]byte) (P, error), encode func(P) ([]byte, error)) *partCodec {
	return &partCodec{
		decode: func(b []byte) (any, error) {
			p, err := decode(b)
			if err != nil {
				return nil, err
			}
			return p, nil
		},
		merge: func(a, b any) any {
			a.(P).Merge(b.(P))
			return a
		},
		encode: func(v any) ([]byte, error) { return encode(v.(P)) },
	}
}

// commCodec's parts are the ranks' comm.Part in rank order, in comm's
// wire form; rank 0 keeps the run's in the archive's form (JSON).
var commCodec = &partCodec{
	decode: func(b []byte) (any, error) { return comm.UnmarshalPartsWire(b) },
	merge:  func(a, b any) any { return append(a.([]comm.Part), b.([]comm.Part)...) },
	encode: func(v any) ([]byte, error) { return comm.MarshalPartsWire(v.([]comm.Part)), nil },
}

var (
	profileCodec  = binaryCodec[summary.RunProfile]()
	choiceCodec   = variationCodec[variation.Choice]()
	segmentsCodec = variationCodec[variation.Segments]()
)

var phasesCodec = funcCodec(trend.DecodeInSitu, trend.EncodeInSitu)

// The parts go up the tree in their wire form, compact and quick to read
// at each merge; rank 0 keeps the run's in the archive's form.
var waitStatesCodec = funcCodec(waitstate.DecodeInSituWire, func(s *waitstate.InSitu) ([]byte, error) {
	return waitstate.EncodeInSituWire(s), nil
})
