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
