package measure

//go:generate go test -run ^TestGoLayout$ -update-golayout .
//go:generate go test -run ^TestProbeAsmLayout$ -update-probeasm .

import (
	"runtime"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// The C shim's probes (cshim/lib/direct.h) record the enters and leaves of a
// C thread in C, in place, into the thread's Location: the same state, the
// same steps and the same bytes as enter and leaveTop for the common case,
// with everything else handed to these Go probes. What they need is here:
// the objects they reach kept pinned, and a way to count the events they
// dropped. The layout they mirror is generated into cshim/lib/golayout.h
// (golayout_test.go). They are no public API: the shim reaches them through
// internal/measureinternal (internalapi.go).

// pinForC pins the location and everything its C probes reach through it
// (its stack, profile, levels and their bins, the hierarchy, the pool's
// epoch), now and as they grow, so that C may keep pointers to them. It
// returns the location and the pool's epoch word. busy is the C probes'
// mark of the location's thread, so that a reduction may reclaim its bins
// while it is not in a probe (buffer.Pool.PinForC), or nil. The pins are
// the location's own, made by whoever runs its probes; unpinC drops them
// once the measurement is closed and the C probes stopped.
func (l *Location) pinForC(busy *int32) (loc, epoch unsafe.Pointer) {
	if l.pinner == nil {
		l.pinner = new(runtime.Pinner)
	}
	p := l.pinner
	p.Pin(l)
	p.Pin(l.h)
	epoch = l.pool.PinForC(p, l.h, busy)
	l.pinSlices()
	return unsafe.Pointer(l), epoch
}

// unpinC drops what pinForC pinned.
func (l *Location) unpinC() {
	if l != nil && l.pinner != nil {
		l.pinner.Unpin()
	}
}

// interrupt tells Close that the location's owner stopped in the middle of
// a probe and will not finish it: Close leaves its state alone, as for a
// goroutine a signal's Close found still probing.
func (l *Location) interrupt() {
	if l != nil {
		l.interrupted = true
	}
}

// pinSlices pins the arrays behind the slices the C probes follow, and the
// levels.
func (l *Location) pinSlices() {
	if len(l.stack) > 0 {
		l.pinNew(unsafe.Pointer(&l.stack[0]))
	}
	if len(l.prof) > 0 {
		l.pinNew(unsafe.Pointer(&l.prof[0]))
	}
	for _, pg := range l.prof {
		if pg != nil {
			l.pinNew(unsafe.Pointer(pg))
		}
	}
	if len(l.commLines) > 0 {
		l.pinNew(unsafe.Pointer(&l.commLines[0]))
	}
	for _, levels := range [][]*buffer.Level{l.levels, l.msgLevels, l.collLevels, l.parLevels} {
		if len(levels) > 0 {
			l.pinNew(unsafe.Pointer(&levels[0]))
		}
		for _, lv := range levels {
			if lv != nil {
				l.pinNew(unsafe.Pointer(lv))
			}
		}
	}
}

// pinNew pins an object the C probes will reach, one the location just
// made (a grown array, a new level), if they write this location.
func (l *Location) pinNew(p unsafe.Pointer) {
	if l.pinner != nil {
		l.pinner.Pin(p)
	}
}

// addDropped counts n events of class c (enters and leaves, messages, or
// collectives' records) at depth d that the C probes did not keep, the depth
// or class being closed in the view of the last sync: what drop does for a
// Go probe. It must come before the location syncs again, so that the
// reason is that view's.
func (l *Location) addDropped(d int, c buffer.Class, n uint64) {
	if l == nil || n == 0 {
		return
	}
	l.h.Level(d, c).Dropped[l.h.DropReason(d, c)] += n
}
