package measure

import (
	"math"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// Runtime throttling, as TAU does it, with a statistic that preemption
// cannot fool: a region that runs very often and very briefly costs more
// to measure than it tells, so the probes switch it off for the rest of
// the run once nearly all of its calls were short. A call is long when its
// inclusive time reaches Config.ThrottleTime; each leave with no call of
// the region open counts it (profEntry.longCalls). The rule has two steps:
//
//   - early, after throttleEarly visits (or Config.ThrottleCalls, if
//     fewer): switched off if at most 1 call in 256 was long, the region
//     being unmistakably short;
//   - late, after Config.ThrottleCalls visits (4096 by default): switched
//     off if at most 1 call in 8 was long.
//
// A mean would not do: a few calls preempted inside a 30 ns accessor add
// milliseconds, and one rank's mean ends above the bound while another's
// stays below, so the ranks throttle different sets (issue 36). A count
// of long calls moves by one per preempted call, so ranks and threads that
// run the same code decide the same, and early: the thousands of calls a
// short region makes in the first moments of a run suffice.
//
// Both steps come early because every call timed before the switch is two
// events in the trace that every pass of the collective end reads: LULESH's
// 13 accessors, switched off after 4096 visits and, on ranks where cache
// misses and preemption made more than 1 call in 256 long, after TAU's
// 100,000, made 1.8 of the run's 2.1 million events and quintupled the
// collective end's CPU a rank (docs/performance.md, "Throttling decided at
// 1024 and 4096 visits"). A share of long calls needs no more calls to be
// robust: the step at 4096 visits decides what the one at 100,000 did
// unless a region's calls grow longer later in the run.
//
// The decision is per location: the counts it rests on are the location's
// own, the flag lives in its profile entry, and no probe writes memory
// another thread reads (a per-process flag would be one more shared cache
// line on every probe of every thread). A region hot on one thread only is
// throttled there only. The C probes (cshim/lib/direct.h) apply the same
// rule with the constants go generate mirrors.

// The throttling rule's constants: the early decision's visits, and the
// share of long calls each step allows, as a shift (long<<shift <= visits).
const (
	throttleEarly      = 1024
	throttleEarlyShift = 8 // 1 in 256
	throttleLateShift  = 3 // 1 in 8
)

// throttleLimits returns the per-location thresholds of the configuration:
// the visits of the early and late steps, and the inclusive time in ticks
// at rate tps from which a call is long. Off, the visits can never be
// reached and no call is long.
func throttleLimits(c *Config, tps float64) (early, calls, ticks uint64) {
	if c.NoThrottle || tps <= 0 {
		return math.MaxUint64, math.MaxUint64, math.MaxUint64
	}
	calls, d := c.ThrottleCalls, c.ThrottleTime
	if calls == 0 {
		calls = DefaultThrottleCalls
	}
	if d == 0 {
		d = DefaultThrottleTime
	}
	return min(calls, throttleEarly), calls, uint64(math.Ceil(d.Seconds() * tps))
}

// throttleDue reports whether region entry p, visited at least l.thrEarly
// times, has few enough long calls to be switched off: the rule above.
func (l *Location) throttleDue(p *profEntry) bool {
	return p.longCalls<<throttleEarlyShift <= p.visits || p.visits >= l.thrCalls && p.longCalls<<throttleLateShift <= p.visits
}

// throttle switches region r off at time t (ticks), at a leave that left it
// with no call open (p.active == 0): from now on its enters and leaves are
// skipped before the clock is read, and counted in the location's cache
// (where Enter is inlined) or in p.after. The phase
// region and the calls kept longest (MPI, collectives) are never throttled:
// the phase profile and the communication need them whole.
func (l *Location) throttle(p *profEntry, r uint32, c buffer.Class, t uint64) {
	if r == l.phaseRegion || c != buffer.ClassRegion || p.class != buffer.ClassRegion || p.off != offNone {
		return
	}
	p.off, p.throttledAt = offThrottled, t
	l.cacheOff(Region(r))
}

// offSlots is the size of a location's cache of throttled regions: 256,
// so that uint8(r) indexes it with no bounds check and no mask, which
// Enter's inlining budget could not pay for. 3 KiB per location.
const offSlots = 256

// initOffCache marks every slot of the cache empty: slot i holds i+1,
// which Enter looks for in slot i+1, so no region matches an empty slot
// (the zero value would match region 0, an undefined one that must be
// counted as a usage error).
func (l *Location) initOffCache() {
	for i := range l.offRegion {
		l.offRegion[i] = Region(i + 1)
	}
}

// cacheOff puts throttled region r into its slot of the cache if the slot
// is empty; if another region holds it, r's probes keep skipping it at its
// profile entry, after a call.
func (l *Location) cacheOff(r Region) {
	if i := uint8(r); l.offRegion[i] == Region(i)+1 {
		l.offRegion[i], l.offVisits[i] = r, 0
	}
}

// offCount returns the visits Enter counted in region r's slot of the
// cache: 0 unless r holds it. The profile adds them to the entry's after.
func (l *Location) offCount(r uint32) uint64 {
	if i := uint8(r); l.offRegion[i] == Region(r) {
		return l.offVisits[i]
	}
	return 0
}
