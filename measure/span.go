package measure

import (
	"context"
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/internal/goroutine"
)

// current is the running measurement: the one Start made last and not yet
// closed.
var current atomic.Pointer[Measurement]

// contexts is set by the first NewContext: until then StartRegion does not
// look in its context at all, which spares the common program, whose one
// measurement is Current, a walk up its context's chain.
var contexts atomic.Bool

// contextKey is the key of the measurement a context carries.
type contextKey struct{}

// Current returns the running measurement: the one Start returned last,
// if it is not closed yet, else nil. StartRegion and Do record into it
// unless their context carries another (NewContext).
func Current() *Measurement {
	return current.Load()
}

// notCurrent stops m from being the running measurement, at its Close.
func (m *Measurement) notCurrent() {
	if m != nil {
		current.CompareAndSwap(m, nil)
	}
}

// NewContext returns a copy of ctx that carries measurement m: StartRegion
// and Do given it, or a context made from it, record into m rather than
// into Current. A program with one measurement needs none.
func NewContext(ctx context.Context, m *Measurement) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	contexts.Store(true)
	return context.WithValue(ctx, contextKey{}, m)
}

// FromContext returns the measurement StartRegion records into for ctx:
// the one ctx carries (NewContext), else Current. ctx may be nil.
func FromContext(ctx context.Context) *Measurement {
	if ctx != nil && contexts.Load() {
		if m, ok := ctx.Value(contextKey{}).(*Measurement); ok {
			return m
		}
	}
	return current.Load()
}

// Span is a region open on the calling goroutine's lane, from StartRegion
// until its End. The zero Span, which StartRegion returns when nothing is
// measured, ends nothing.
type Span struct {
	l *Location
	r Region
}

// StartRegion enters region s on the calling goroutine's lane and returns
// the Span that leaves it:
//
//	defer measure.StartRegion(ctx, solve).End()
//
// The measurement is the one ctx carries, else Current; ctx may be nil or
// context.Background(). The lane is never taken from ctx, which Go code
// hands to the goroutines it starts, but from the calling goroutine: the
// goroutine holds a lane from its outermost StartRegion until that region
// ends, and keeps it bound afterwards, idle, so that its next region takes
// it back without a lock, unless another goroutine that needed a lane took
// it meanwhile (the package's doc says more). It allocates nothing.
//
// The Span must be ended by the goroutine that started it, innermost
// first, as the regions of runtime/trace must.
func StartRegion(ctx context.Context, s *Site) Span {
	m := FromContext(ctx)
	if m == nil || m.pool == nil {
		return Span{}
	}
	var r Region
	if s != nil {
		r = s.regionIn(m)
	}
	k := goroutine.Key()
	slot := &m.lanes.table[laneSlot(k)]
	l := slot.Load()
	if l == nil || l.lane.own.Load() != k|ownActive {
		if l = m.holdLane(k, slot, l); l == nil {
			return Span{}
		}
	}
	l.Enter(r)
	return Span{l: l, r: r}
}

// End leaves the span's region. When it was the goroutine's outermost, the
// goroutine's lane becomes idle: still bound to it, free for another
// goroutine to take.
func (s Span) End() {
	l := s.l
	if l == nil {
		return
	}
	l.Leave(s.r)
	if l.depth == 0 {
		l.idle()
	}
}

// Do runs f inside region s on the calling goroutine's lane, as
//
//	defer measure.StartRegion(ctx, s).End()
//
// at the top of f would: the region is left when f returns or panics.
func Do(ctx context.Context, s *Site, f func(ctx context.Context)) {
	sp := StartRegion(ctx, s)
	defer sp.End()
	f(ctx)
}
