package measure

import (
	"context"
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/internal/goroutine"
)

// current is the running measurement: the one Start made last and not yet
// closed, the newest of running's (exit.go), which keeps it.
var current atomic.Pointer[Measurement]

// contexts is set by the first NewContext: until then StartRegion does not
// look in its context at all, which spares the common program, whose one
// measurement is Current, a walk up its context's chain.
var contexts atomic.Bool

// contextKey is the key of the measurement a context carries.
type contextKey struct{}

// Current returns the running measurement: the one Start returned last
// among those not closed yet, else nil. StartRegion and Do record into it
// unless their context carries another (NewContext).
func Current() *Measurement {
	return current.Load()
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
	if contexts.Load() && ctx != nil {
		if m := carried(ctx); m != nil {
			return m
		}
	}
	return current.Load()
}

// carried returns the measurement ctx carries, nil if none.
//
//go:noinline
func carried(ctx context.Context) *Measurement {
	m, _ := ctx.Value(contextKey{}).(*Measurement)
	return m
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
// The Span must be ended once, by the goroutine that started it, innermost
// first, as the regions of runtime/trace must: a second End of an
// outermost Span would write into a lane that may be another goroutine's
// by then.
func StartRegion(ctx context.Context, s *Site) Span {
	// FromContext and Site.regionIn, written out: neither inlines.
	var m *Measurement
	if contexts.Load() && ctx != nil {
		m = carried(ctx)
	}
	if m == nil {
		m = current.Load()
	}
	if m == nil || m.pool == nil {
		return Span{}
	}
	var r Region
	if s != nil {
		if b := s.bound.Load(); uint32(b>>32) == m.serial {
			r = Region(b)
		} else {
			r = s.bind(m)
		}
	}
	k := goroutine.Key()
	slot := &m.lanes.table[laneSlot(k)]
	l := slot.Load()
	if l == nil || l.lane.own.Load() != k|ownActive {
		// Not active for the goroutine: its own idle lane is taken back
		// with one compare-and-swap, anything else is holdLane's.
		if l == nil || !l.lane.own.CompareAndSwap(k, k|ownActive) {
			if l = m.holdLane(k, slot, l); l == nil {
				return Span{}
			}
		}
		if m.gort != nil {
			m.goRuntimeHold(l)
		}
	}
	l.Enter(r)
	return Span{l: l, r: r}
}

// End leaves the span's region. When it was the goroutine's outermost, the
// goroutine's lane becomes idle: still bound to it, free for another
// goroutine to take.
func (s Span) End() {
	// leaveAt, not Leave: Leave's test of the throttled regions' cache
	// saves a call for a Location's caller, and End is a call already (a
	// throttled region's leave returns at its profile entry's flag).
	if l := s.l; l != nil {
		l.leaveAt(s.r, 0)
		if l.depth == 0 {
			l.idle()
		}
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
