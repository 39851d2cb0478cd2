//go:build !amd64 || race

package measure

import (
	"context"
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
// body of Leave and of Span.End, as enterProbe does.
func leaveProbe(l *Location, r Region) (t uint64) {
	leaveAny(l, r, 0)
	return 0
}

// spanStart is StartRegion: startRegion, in Go.
func spanStart(ctx context.Context, s *Site) Span {
	return startRegion(ctx, s)
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
