package measure

import (
	"context"

	"github.com/hmbtrace/hmbtrace/internal/goroutine"
)

// The context forms of the annotations of mark.go: marks and region
// parameters on the lane the calling goroutine records into, found as
// StartRegion finds it (Instant, and the Span's methods). Channels take the lane a Span records into
// (Span.Lane), since a value's send and receive happen inside regions.

// Lane returns the lane the span records into until its End, nil for the
// zero Span: for the Location methods that have no context form, such as
// a Channel's Send and Recv.
func (s Span) Lane() *Location { return s.l }

// Int records value v of the int parameter name for the span's region, as
// Score-P's SCOREP_USER_PARAMETER_INT64 does for the region it is in:
//
//	sp := measure.StartRegion(ctx, solve)
//	defer sp.End()
//	sp.Int("n", int64(n))
//
// While a region inside the span is open, or when the span's region is
// filtered or throttled (it opened nothing the value could belong to), no
// value is recorded.
func (s Span) Int(name string, v int64) {
	if l := s.open(); l != nil {
		l.ParamInt(l.m.IntParam(name), v)
	}
}

// String records value v of the string parameter name for the span's
// region, as Int.
func (s Span) String(name, v string) {
	if l := s.open(); l != nil {
		l.ParamString(l.m.StringParam(name), v)
	}
}

// Mark records the instant event name inside the span's region, at the
// current depth of its lane.
func (s Span) Mark(name string) {
	if s.l != nil {
		s.l.MarkName(name)
	}
}

// open returns the span's lane if the span's region is the one open on
// it, nil otherwise: the region was filtered or throttled, or regions
// entered since are still open.
func (s Span) open() *Location {
	l := s.l
	if l == nil || l.depth == 0 || l.stack[l.depth].region != uint32(s.r&^spanOuter) {
		return nil
	}
	return l
}

// Instant records the mark (instant event) name on the calling
// goroutine's lane, in the measurement ctx carries or else Current: inside
// the region the goroutine has open, or at depth 0 of a lane it holds for
// the moment.
func Instant(ctx context.Context, name string) {
	m := FromContext(ctx)
	if m == nil || m.pool == nil {
		return
	}
	l, activated := m.goroutineLane(goroutine.Key())
	if l == nil {
		return
	}
	l.MarkName(name)
	if activated && l.depth == 0 {
		l.idle()
	}
}
