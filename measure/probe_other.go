//go:build !amd64 || race

package measure

import (
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/internal/goroutine"
)

// enterProbe records an enter of region r on l at the clock's time, the
// body of Enter. Off amd64 (and under the race detector) it is enterAt,
// in Go; probe_amd64.go says what amd64 does. Callers ignore t, which the
// amd64 assembly needs as a slot.
func enterProbe(l *Location, r Region) (t uint64) {
	l.enterAt(r, 0)
	return 0
}

// leaveProbe records a leave of region r on l at the clock's time, the
// body of Leave, as enterProbe does.
func leaveProbe(l *Location, r Region) (t uint64) {
	l.leaveAt(r, 0)
	return 0
}

// leaveSpan is Span.End's: leaveProbe for a nested region, endOutermost
// for the region that made the lane active.
func leaveSpan(l *Location, r Region, outer bool) (t uint64) {
	if outer {
		endOutermost(l, r)
		return 0
	}
	l.leaveAt(r, 0)
	return 0
}

// laneEnter is StartRegion's common case: it enters r on the running
// goroutine's lane if the table holds that lane in the goroutine's slot,
// active for it, and returns it; else it returns nil and records nothing.
// Callers ignore t, which the amd64 assembly needs as a slot.
func laneEnter(tab *[laneSlots]atomic.Pointer[Location], r Region) (t uint64, l *Location) {
	k := goroutine.Key()
	l = tab[laneSlot(k)].Load()
	if l == nil || l.lane.own.Load() != k|ownActive {
		return 0, nil
	}
	l.enterAt(r, 0)
	return 0, l
}
