package measure

import (
	"runtime"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
)

// The C shim's probes (cshim/lib/direct.h) record the enters and leaves of a
// C thread in C, in place, into the thread's Location: the same state, the
// same steps and the same bytes as enter and leaveTop for the common case,
// with everything else handed to these Go probes. What they need is here:
// the layout they mirror, the objects they reach kept pinned, and a way to
// count the events they dropped.

// CProbeLayout returns the sizes and offsets the C mirror of frame,
// profEntry (and the profile's pages), Location, buffer.Level and
// encode.Encoder must have, and the constants it uses, in the
// order of hmb_direct_layout (cshim/lib/direct.c). The C side compares them
// with its own at start and records in Go if they differ.
func CProbeLayout() []uintptr {
	var f frame
	var p profEntry
	var l Location
	var c commLine
	lay := []uintptr{
		unsafe.Sizeof(f), unsafe.Offsetof(f.start), unsafe.Offsetof(f.child), unsafe.Offsetof(f.tr),
		unsafe.Offsetof(f.seq), unsafe.Offsetof(f.region), unsafe.Offsetof(f.state),
		unsafe.Offsetof(f.counted), unsafe.Offsetof(f.class),
		unsafe.Sizeof(p), unsafe.Offsetof(p.visits), unsafe.Offsetof(p.incl), unsafe.Offsetof(p.excl),
		unsafe.Offsetof(p.after), unsafe.Offsetof(p.throttledAt),
		unsafe.Offsetof(p.active), unsafe.Offsetof(p.off), unsafe.Offsetof(p.class),
		unsafe.Sizeof(profPage{}.e), profPageBits,
		uintptr(offNone), uintptr(offFiltered), uintptr(offThrottled), uintptr(offUndefined),
		unsafe.Offsetof(l.epoch), unsafe.Offsetof(l.limit), unsafe.Offsetof(l.lostAt),
		unsafe.Offsetof(l.minDur), unsafe.Offsetof(l.last), unsafe.Offsetof(l.lastTR),
		unsafe.Offsetof(l.run), unsafe.Offsetof(l.shift), unsafe.Offsetof(l.depth),
		unsafe.Offsetof(l.stack), unsafe.Offsetof(l.prof), unsafe.Offsetof(l.levels),
		unsafe.Offsetof(l.recorded), unsafe.Offsetof(l.filteredName), unsafe.Offsetof(l.cpt),
		unsafe.Offsetof(l.phaseRegion), unsafe.Offsetof(l.msgLevels), unsafe.Offsetof(l.collLevels),
		unsafe.Offsetof(l.pendingFrom),
		unsafe.Offsetof(l.parLevels), unsafe.Offsetof(l.plimit), unsafe.Offsetof(l.thrCalls), unsafe.Offsetof(l.thrTicks),
		uintptr(frameDropped), uintptr(framePending), uintptr(frameWritten),
		uintptr(buffer.ClassRegion), uintptr(buffer.ClassMessage), uintptr(buffer.ClassCollective), uintptr(buffer.ClassParadigm),
		unsafe.Offsetof(l.commLines), unsafe.Offsetof(l.commShift),
		unsafe.Sizeof(c), unsafe.Offsetof(c.peer), unsafe.Offsetof(c.rank), unsafe.Offsetof(c.used),
		unsafe.Offsetof(c.sent), unsafe.Offsetof(c.sentB), unsafe.Offsetof(c.recv), unsafe.Offsetof(c.recvB),
		encode.TokSendRankComm, encode.TokCollComm, encode.TokIsendRank, encode.TokIrecvRank, encode.TokIsendComplete,
		encode.TokIrecvRequest, encode.TokRequestCancelled, encode.TokCollRequest, encode.TokCollComplete,
	}
	return append(lay, buffer.LevelLayout()...)
}

// PinForC pins the location and everything its C probes reach through it
// (its stack, profile, levels and their bins, the hierarchy, the pool's
// epoch), now and as they grow, so that C may keep pointers to them. It
// returns the location and the pool's epoch word. The pins are the
// location's own, made by whoever runs its probes; UnpinC drops them once
// the measurement is closed and the C probes stopped.
func (l *Location) PinForC() (loc, epoch unsafe.Pointer) {
	if l.pinner == nil {
		l.pinner = new(runtime.Pinner)
	}
	p := l.pinner
	p.Pin(l)
	p.Pin(l.h)
	epoch = l.pool.PinForC(p)
	l.pinSlices()
	return unsafe.Pointer(l), epoch
}

// UnpinC drops what PinForC pinned.
func (l *Location) UnpinC() {
	if l != nil && l.pinner != nil {
		l.pinner.Unpin()
	}
}

// Interrupt tells Close that the location's owner stopped in the middle of
// a probe and will not finish it: Close leaves its state alone, as for a
// goroutine a signal's Close found still probing.
func (l *Location) Interrupt() {
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

// AddDropped counts n events of class c (enters and leaves, messages, or
// collectives' records) at depth d that the C probes did not keep, the depth
// or class being closed in the view of the last sync: what drop does for a
// Go probe. It must come before the location syncs again, so that the
// reason is that view's.
func (l *Location) AddDropped(d int, c buffer.Class, n uint64) {
	if l == nil || n == 0 {
		return
	}
	l.h.Level(d, c).Dropped[l.h.DropReason(d, c)] += n
}
