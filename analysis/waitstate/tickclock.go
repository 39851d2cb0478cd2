package waitstate

import (
	"math"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// tickClock is run.nanos for one file, its constants read once. In-situ
// the sweep converts each of a rank's enters and leaves (hundreds of
// thousands at LULESH's collective end), and tracefile's GlobalNanos
// reads the header's sync points again each time: the same arithmetic,
// in the same order, on hoisted constants gives the same nanoseconds to
// the bit (TestTickClockSame) for less.
//
// In-situ the conversion is affine in the ticks (one offset interpolated
// between the first and last sync points), so a tick can be bounded
// below a time without converting it (below): the sweep skips the
// records between two windows that way.
type tickClock struct {
	r    *run
	i    int
	f    *tracefile.File
	mode uint8
	// clockSync: GlobalNanos's terms. Without two sync points to
	// interpolate between, span is 1 and doff 0: off0 + f*0 is off0, to
	// the bit.
	shift                     uint8
	t0, span, doff, off0, ref float64
	interp                    bool
	tps                       float64
	// rate bounds from above the nanoseconds per reduced tick, in-situ;
	// 0 when unknown (the post-mortem axis).
	rate float64
}

const (
	clockAxis = iota // post-mortem: the run's axis
	clockWall        // in-situ without sync points: the wall-clock start
	clockSync        // in-situ with sync points: the reference clock
)

// clockOf returns the clock of file i.
func (r *run) clockOf(i int, f *tracefile.File) tickClock {
	c := tickClock{r: r, i: i, f: f, mode: clockAxis}
	if !r.insitu {
		return c
	}
	h := &f.Header
	c.mode = clockWall
	if s := h.ClockSync; len(s) > 0 {
		c.mode = clockSync
		c.shift = uint8(h.TimerShift)
		c.off0, c.ref = float64(s[0].Offset), float64(h.ReferenceStart)
		c.span = 1
		if n := len(s); n > 1 && s[n-1].Ticks > s[0].Ticks {
			c.interp = true
			c.t0, c.span, c.doff = float64(s[0].Ticks), float64(s[n-1].Ticks-s[0].Ticks), float64(s[n-1].Offset-s[0].Offset)
		}
		c.tps = h.TicksPerSecond
		if c.tps <= 0 {
			c.tps = 1e9
		}
	}
	// The slope, with room for the roundings: a bound, not the exact
	// rate, since only ticks far enough below a time are skipped. The
	// conversion must grow with the ticks for that.
	tps := h.TicksPerSecond
	if tps <= 0 {
		tps = 1e9
	}
	slope := 1.0
	if c.interp {
		slope += max(c.doff/c.span, 0)
		if c.doff/c.span <= -1 {
			slope = 0
		}
	}
	if h.TimerShift < 32 && slope > 0 {
		c.rate = float64(uint64(1)<<h.TimerShift)*1e9/tps*slope*(1+1e-6) + 1e-6
	}
	return c
}

// nanos is run.nanos(i, f, reduced).
func (c *tickClock) nanos(reduced uint64) int64 {
	if c.mode == clockSync {
		return c.sync(reduced)
	}
	return c.other(reduced)
}

// sync is tracefile.(*Trace).GlobalNanos, term by term; small enough to
// be inlined into the sweep.
func (c *tickClock) sync(reduced uint64) int64 {
	ticks := float64(reduced << c.shift)
	off := c.off0 + (ticks-c.t0)/c.span*c.doff
	return int64(math.Round((ticks + off - c.ref) * 1e9 / c.tps))
}

func (c *tickClock) other(reduced uint64) int64 {
	switch c.mode {
	case clockWall:
		return c.f.Header.StartWall.UnixNano() + c.f.Nanos(reduced)
	}
	return c.r.axis.Nanos(c.i, c.f, reduced)
}

// below returns a tick whose earlier ticks all convert to before ns,
// given that tick converts to t (0: none known). The margin covers the
// conversion's rounding many times over.
func (c *tickClock) below(tick uint64, t, ns int64) uint64 {
	const margin = 64
	if c.rate <= 0 || ns-t <= margin {
		return 0
	}
	d := float64(ns-t-margin) / c.rate
	if d >= float64(math.MaxUint64-tick) {
		return math.MaxUint64
	}
	return tick + uint64(d)
}
