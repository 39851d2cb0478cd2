package measure

import (
	"math"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// Runtime throttling, as TAU does it: a region that runs very often and
// very briefly costs more to measure than it tells, so after
// Config.ThrottleCalls visits with a mean inclusive time below
// Config.ThrottleTime the probes switch it off for the rest of the run.
// The decision is per location: the counts it rests on are the location's
// own, the flag lives in its profile entry, and no probe writes memory
// another thread reads (a per-process flag would be one more shared cache
// line on every probe of every thread). A region hot on one thread only is
// throttled there only.

// throttleLimits returns the per-location thresholds of the configuration:
// visits, and the mean inclusive time in ticks at rate tps. Off, the visits
// can never be reached.
func throttleLimits(c *Config, tps float64) (calls, ticks uint64) {
	if c.NoThrottle || tps <= 0 {
		return math.MaxUint64, 0
	}
	calls, d := c.ThrottleCalls, c.ThrottleTime
	if calls == 0 {
		calls = DefaultThrottleCalls
	}
	if d == 0 {
		d = DefaultThrottleTime
	}
	return calls, uint64(math.Ceil(d.Seconds() * tps))
}

// throttle switches region r off at time t (ticks), at a leave that left it
// with no call open (p.active == 0): from now on its enters and leaves are
// skipped before the clock is read, and counted in p.after. The phase
// region and the calls kept longest (MPI, collectives) are never throttled:
// the phase profile and the communication need them whole.
func (l *Location) throttle(p *profEntry, r uint32, c buffer.Class, t uint64) {
	if r == l.phaseRegion || c != buffer.ClassRegion || p.class != buffer.ClassRegion || p.off != offNone {
		return
	}
	p.off, p.throttledAt = offThrottled, t
}
