//go:build !hmbtrace_off

package measure

import "github.com/hmbtrace/hmbtrace/encode"

// ProbesCompiledIn reports whether the probes do anything: false in a
// program built with -tags hmbtrace_off.
const ProbesCompiledIn = true

// Enter records that the goroutine enters region r.
func (l *Location) Enter(r Region) {
	// Inlined: the test of the throttled regions' cache and the count of a
	// throttled visit happen in the caller (the inliner's cost is 80 of 80;
	// TestProbesInline watches it).
	if l != nil {
		if l.offRegion[uint8(r)] != r {
			enterProbe(l, r)
		} else {
			l.offVisits[uint8(r)]++
		}
	}
}

// Leave records that the goroutine leaves region r, which must be the
// region entered last. A Leave of another open region leaves the regions
// entered after it implicitly; a Leave of a region that is not open is
// ignored. Both are counted as usage errors.
func (l *Location) Leave(r Region) {
	// A throttled region's leave does nothing: its visit was counted at the enter.
	if l != nil && l.offRegion[uint8(r)] != r {
		leaveProbe(l, r)
	}
}

// EnterAt records an enter at time t, taken earlier from Measurement.Now:
// for replaying probes that were buffered elsewhere, as the C shim does.
// Times must not decrease; an earlier one is taken as the last one seen.
func (l *Location) EnterAt(r Region, t uint64) {
	if l != nil {
		if t < l.m.start.Ticks {
			l.m.noteEarly(t)
		}
		l.enterAt(r, atTime(t, false))
	}
}

// LeaveAt records a leave at time t, like EnterAt.
func (l *Location) LeaveAt(r Region, t uint64) {
	if l != nil {
		l.leaveAt(r, atTime(t, false))
	}
}

// Send records that the goroutine sends a message of the given size and
// tag to the goroutine that records into to.
func (l *Location) Send(to *Location, tag uint32, bytes uint64) {
	if l != nil {
		l.messageTo(false, to, tag, bytes)
	}
}

// Recv records that the goroutine received a message of the given size
// and tag from the goroutine that records into from.
func (l *Location) Recv(from *Location, tag uint32, bytes uint64) {
	if l != nil {
		l.messageTo(true, from, tag, bytes)
	}
}

// SendRank records a message sent to MPI world rank rank.
func (l *Location) SendRank(rank int, tag uint32, bytes uint64) {
	if l != nil {
		l.message(encode.KindSend, uint64(rank), true, tag, bytes, 0, 0, true)
	}
}

// RecvRank records a message received from MPI world rank rank.
func (l *Location) RecvRank(rank int, tag uint32, bytes uint64) {
	if l != nil {
		l.message(encode.KindRecv, uint64(rank), true, tag, bytes, 0, 0, true)
	}
}

// MessageAt records a message at time t, taken earlier from
// Measurement.Now, like EnterAt.
func (l *Location) MessageAt(msg Message, t uint64) {
	if l == nil {
		return
	}
	k := encode.KindSend
	if msg.Recv {
		k = encode.KindRecv
	}
	l.message(k, msg.Peer, msg.PeerIsRank, msg.Tag, msg.Bytes, uint32(msg.Comm), t, false)
}
