//go:build !amd64 || race

package measure

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
