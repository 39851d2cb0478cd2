package waitstate

import (
	"math"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// tickClock is run.nanos for one file, its constants read once.
// Post-mortem the forward pass converts every synchronisation call's enter
// and leave and every message's time: tracefile's AxisClock is Axis.Nanos
// with the axis's terms and the file's sync points read once (Axis.Nanos
// reads the sync points again for each timestamp). In-situ the sweep
// converts each of a rank's enters and leaves (hundreds of thousands at
// LULESH's collective end): tracefile's SyncClock is GlobalNanos with the
// header's sync points read once.
//
// The conversion is affine in the ticks (one offset interpolated between
// the first and last sync points, or none), so a tick can be bounded
// below a time without converting it (below): the sweep skips the
// records between two windows that way, in-situ and post-mortem.
type tickClock struct {
	f    *tracefile.File
	mode uint8
	sc   tracefile.SyncClock // clockSync's
	ax   tracefile.AxisClock // clockAxis's and clockSyncedAxis's
	// rate bounds from above the nanoseconds per reduced tick; 0 when
	// unknown.
	rate float64
}

const (
	clockAxis       = iota // post-mortem: the run's axis
	clockWall              // in-situ without sync points: the wall-clock start
	clockSync              // in-situ with sync points: the reference clock
	clockSyncedAxis        // post-mortem, a file with sync points on a synced axis (ax.SyncedNanos)
)

// clockOf returns the clock of file i.
func (r *run) clockOf(i int, f *tracefile.File) tickClock {
	c := tickClock{f: f, mode: clockAxis}
	h := &f.Header
	drift := 0.0
	if !r.insitu {
		// On a synced axis a file's times are its reference clock's less
		// the axis's origin, clipped at 0: no steeper than the sync
		// clock's; else its own clock's, shifted.
		c.ax = r.axis.Clock(i, f)
		if sc, ok := f.SyncClock(); ok && c.ax.Synced() {
			c.mode, drift = clockSyncedAxis, sc.Drift()
		}
	} else {
		c.mode = clockWall
		if sc, ok := f.SyncClock(); ok {
			c.mode, c.sc, drift = clockSync, sc, sc.Drift()
		}
	}
	// The slope, with room for the roundings: a bound, not the exact
	// rate, since only ticks far enough below a time are skipped. The
	// conversion must grow with the ticks for that.
	tps := h.TicksPerSecond
	if tps <= 0 {
		tps = 1e9
	}
	slope := 1 + max(drift, 0)
	if drift <= -1 {
		slope = 0
	}
	if h.TimerShift < 32 && slope > 0 {
		c.rate = float64(uint64(1)<<h.TimerShift)*1e9/tps*slope*(1+1e-6) + 1e-6
	}
	return c
}

// nanos is run.nanos(i, f, reduced). The sweep, which converts every
// enter and leave, calls the synced modes' conversions itself, inlined.
func (c *tickClock) nanos(reduced uint64) int64 {
	switch c.mode {
	case clockSyncedAxis:
		return c.ax.SyncedNanos(reduced)
	case clockAxis:
		return c.ax.Nanos(reduced)
	case clockSync:
		return c.sc.Nanos(reduced)
	}
	return c.f.Header.StartWall.UnixNano() + c.f.Nanos(reduced)
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
