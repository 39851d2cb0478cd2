package cshim

import (
	"encoding"
	"errors"
	"sync"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/summary"
)

// Merging the parts of a pass up the tree. A rank merges its children's
// parts one after the other (rank 0 ⌈log₂ p⌉ times), and the parts that
// gather every rank's (the matrix, the segments, the wait states) grow
// with the ranks merged. The rank's running merge therefore stays here,
// as a Go value (held), from one child's merge to the next: only the
// child's part is read at each merge, and the running merge is written
// once, when the rank sends it to its parent (takeHeld), or never, at the
// root, whose result is taken as held (runPart). Written and read again
// at every level, it cost the root about as much again as reading its
// children's parts (BenchmarkRootMergeScale).

// partCodec reads a pass's part, merges two as read (a's ranks before
// b's, into a or a new value) and writes one.
type partCodec struct {
	decode func([]byte) (any, error)
	merge  func(a, b any) any
	encode func(any) ([]byte, error)
}

// held holds each pass's running merge on this rank, by the pass (defsKey
// for the definitions), until it is sent up the tree, taken at the root,
// or the collective end's passes end (PassEnd).
var held struct {
	mu sync.Mutex
	v  map[int]heldMerge
}

// heldMerge is a running merge and the bytes of the parts merged into it,
// which the root's pass costs report (tracefile.PassCost).
type heldMerge struct {
	v    any
	read int
}

// defsKey is the definitions' key in held: they merge up the tree as the
// passes do, but are no pass.
const defsKey = -1

// errNotHeld is a merge or a send of a running merge this rank does not hold.
var errNotHeld = errors.New("this rank holds no running merge of it")

// mergeInto merges b, the part of the ranks after this rank's running
// merge of pass, into that merge: the one it holds when isHeld, else a,
// its own part (its first merge). The result is held. On an error what
// was held still is.
func (c *partCodec) mergeInto(pass int, a []byte, isHeld bool, b []byte) error {
	var m heldMerge
	if isHeld {
		held.mu.Lock()
		m = held.v[pass]
		held.mu.Unlock()
		if m.v == nil {
			return errNotHeld
		}
	} else {
		var err error
		if m.v, err = c.decode(a); err != nil {
			return err
		}
		m.read = len(a)
	}
	pb, err := c.decode(b)
	if err != nil {
		return err
	}
	m.v, m.read = c.merge(m.v, pb), m.read+len(b)
	held.mu.Lock()
	if held.v == nil {
		held.v = map[int]heldMerge{}
	}
	held.v[pass] = m
	held.mu.Unlock()
	return nil
}

// takeHeld returns this rank's running merge of pass in written form, to
// send up the tree, and lets it go.
func (c *partCodec) takeHeld(pass int) ([]byte, error) {
	m, err := takeHeldMerge(pass)
	if err != nil {
		return nil, err
	}
	return c.encode(m.v)
}

// takeHeldMerge returns this rank's running merge of pass and lets it go.
func takeHeldMerge(pass int) (heldMerge, error) {
	held.mu.Lock()
	m := held.v[pass]
	delete(held.v, pass)
	held.mu.Unlock()
	if m.v == nil {
		return m, errNotHeld
	}
	return m, nil
}

// forgetHeld lets the passes' running merges go.
func forgetHeld() {
	held.mu.Lock()
	held.v = nil
	held.mu.Unlock()
}

// runPart is the run's result of a pass at the root: the running merge it
// holds, or the part it was sent when it merged nothing (b).
type runPart struct {
	codec  *partCodec
	pass   int
	b      []byte
	isHeld bool
	v      any
	read   int // the bytes of the parts merged into v, once taken
}

// value returns the run's result as read.
func (p *runPart) value() (any, error) {
	if p.v != nil {
		return p.v, nil
	}
	if !p.isHeld {
		var err error
		p.v, err = p.codec.decode(p.b)
		return p.v, err
	}
	m, err := takeHeldMerge(p.pass)
	p.v, p.read = m.v, m.read
	return p.v, err
}

// size returns the bytes the root took of the pass: the parts merged into
// its running merge (its own and its children's), or the part it was sent.
func (p *runPart) size() int {
	if p.isHeld {
		return p.read
	}
	return len(p.b)
}

// bytes returns the run's result in written form.
func (p *runPart) bytes() ([]byte, error) {
	if p.b != nil || !p.isHeld {
		return p.b, nil
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.b, err = p.codec.encode(v); err != nil {
		return nil, err
	}
	return p.b, nil
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
