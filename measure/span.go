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

// spanCurrent is current while no context has carried a measurement
// (contexts unset), else nil, so that StartRegion's assembly (spanStart)
// tests both with one load. It changes with them, under running.mu.
var spanCurrent atomic.Pointer[Measurement]

// setCurrent makes m Current, with running.mu held.
func setCurrent(m *Measurement) {
	current.Store(m)
	if !contexts.Load() {
		spanCurrent.Store(m)
	}
}

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
	if !contexts.Load() {
		running.mu.Lock()
		contexts.Store(true)
		spanCurrent.Store(nil)
		running.mu.Unlock()
	}
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
// measured, ends nothing; its Lane is nil.
type Span struct {
	l *Location
	// r is the span's region, with spanOuter set for the region that made
	// the lane active: its End goes through endOutermost, which makes the
	// lane idle again. In the region rather than a field of its own, so
	// that End makes one direct call, leaveProbe (Leave's body), whose
	// common case never sees the bit (it puts r past every profile page,
	// so the probe's first test hands the leave to endOutermost), and a
	// Span is two words.
	r Region
}

// spanOuter marks the region of a Span that made its lane active. Region
// ids never reach it: each takes a profile entry and a definition.
const spanOuter Region = 1 << 31

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
	// Inlined: the caller makes one call, spanStart, which on amd64 is
	// assembly that does startRegion's common cases and jumps into the
	// enter probe, with no Go frame between the caller and the probe
	// (TestProbesInline watches the inlining).
	return spanStart(ctx, s)
}

// startRegion is StartRegion in Go: all of it off amd64 and under -race,
// and on amd64 what spanStart's assembly leaves (a measurement carried in
// contexts, a site not bound yet, no lane in the goroutine's slot).
//
//lint:ignore U1000 on amd64 spanStart's assembly jumps here, which staticcheck does not see
func startRegion(ctx context.Context, s *Site) Span {
	// The common case in this frame: a region nested in one the goroutine
	// has open (its lane is active for it, in its table slot: laneEnter,
	// one call), of a site bound to the running measurement, with no
	// measurement carried in contexts. Everything else is startIn's, so
	// that only s lives across the call (BenchmarkProbeOverClock).
	if contexts.Load() {
		return startCarried(ctx, s)
	}
	m := current.Load()
	if m == nil || s == nil {
		return startSlow(m, s, 0)
	}
	b := s.bound.Load()
	if uint32(b) != m.serial {
		return startSlow(m, s, 0)
	}
	// laneEnter calls enterProbe (Enter's body), not Enter: Enter's test
	// of the throttled regions' cache saves a call for a Location's
	// caller, and this is a call already (a throttled region's enter
	// returns at its profile entry's flag).
	r := Region(b >> 32)
	if _, l := laneEnter(&m.lanes.table, r); l != nil {
		return Span{l: l, r: r}
	}
	return startIn(current.Load(), s)
}

// startCarried is StartRegion once a context carried a measurement
// (NewContext): ctx's, else Current.
//
//go:noinline
func startCarried(ctx context.Context, s *Site) Span {
	return startIn(carriedOr(ctx, current.Load()), s)
}

// startIn is StartRegion in measurement m, with its other common case too:
// the goroutine's outermost region, which takes its idle lane back.
//
//go:noinline
func startIn(m *Measurement, s *Site) Span {
	if m == nil || s == nil {
		return startSlow(m, s, 0)
	}
	b := s.bound.Load()
	if uint32(b) != m.serial {
		return startSlow(m, s, 0)
	}
	r := Region(b >> 32)
	if _, l := laneEnter(&m.lanes.table, r); l != nil {
		return Span{l: l, r: r}
	}
	k := goroutine.Key()
	l := m.lanes.table[laneSlot(k)].Load()
	if l != nil && m.gort == nil && l.lane.own.CompareAndSwap(k, k|ownActive) {
		enterProbe(l, r)
		return Span{l: l, r: r | spanOuter}
	}
	return startSlow(m, s, k)
}

// carriedOr returns the measurement ctx carries, else m.
//
//go:noinline
func carriedOr(ctx context.Context, m *Measurement) *Measurement {
	if ctx != nil {
		if c, _ := ctx.Value(contextKey{}).(*Measurement); c != nil {
			return c
		}
	}
	return m
}

// startSlow is StartRegion for all but its common cases: no measurement,
// a disabled one, a nil site, a site not bound to m yet, a goroutine with
// no lane in its table slot, or whose runtime events are traced. k is the
// goroutine's key, 0 if not read yet.
//
//go:noinline
func startSlow(m *Measurement, s *Site, k uintptr) Span {
	if m == nil || m.pool == nil {
		return Span{}
	}
	var r Region
	if s != nil {
		r = s.regionIn(m)
	}
	if k == 0 {
		k = goroutine.Key()
	}
	l, activated := m.goroutineLane(k)
	if l == nil {
		return Span{}
	}
	l.Enter(r)
	if activated {
		return Span{l: l, r: r | spanOuter}
	}
	return Span{l: l, r: r}
}

// endOutermost leaves the region that made goroutine lane l active, and
// makes the lane idle if that closed its last region: still bound to the
// goroutine, free for another goroutine to take. (Regions left open inside
// it, by a Span never ended, keep the lane active: the goroutine's.)
//
//lint:ignore U1000 leaveProbe's assembly jumps here, which staticcheck does not see
func endOutermost(l *Location, r Region) {
	leaveProbe(l, r)
	if l.depth == 0 {
		l.idle()
	}
}

// leaveAny is the leave of region r at time t (0: not read yet) for every
// leave the probe does not do itself: the end of a Span's outermost region
// (r carries spanOuter) on a goroutine's lane, else leaveAt.
func leaveAny(l *Location, r Region, t uint64) {
	if r&spanOuter != 0 && l.lane.byKey {
		endOutermost(l, r&^spanOuter)
		return
	}
	l.leaveAt(r, t)
}

// End leaves the span's region. When it was the goroutine's outermost, the
// goroutine's lane becomes idle: still bound to it, free for another
// goroutine to take.
func (s Span) End() {
	// Inlined into the defer's wrapper, which makes one call: leaveProbe
	// (Leave's body, without Leave's test of the throttled regions' cache:
	// a throttled region's leave returns at its profile entry's flag),
	// which hands an outermost region's leave to leaveAny.
	if s.l != nil {
		leaveProbe(s.l, s.r)
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
