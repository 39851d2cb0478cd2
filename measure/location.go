package measure

import (
	"sync/atomic"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// frame is an open region on a location's stack.
type frame struct {
	start   uint64 // clock ticks at enter
	child   uint64 // ticks spent in regions entered from this one
	region  uint32
	written bool // the enter is in a bin, so the leave must follow it
}

// profEntry is a region's line of the flat profile.
type profEntry struct {
	visits, incl, excl uint64
	active             uint32 // open instances: inclusive time counts the outermost only
}

// Location is a stream of events written by one goroutine (or C thread).
// Its probes are not safe for concurrent use. A nil *Location is valid:
// its probes do nothing, which is what a disabled measurement hands out.
type Location struct {
	// The probes' state, in the order they touch it.
	h      *buffer.Hierarchy
	limit  int // depths >= limit are not kept: the view of the last sync, or lostAt
	lostAt int // depth of an open call whose enter found no bin, 0 if none
	last   uint64
	lastTR uint64
	run    uint32
	shift  uint8
	depth  int
	stack  []frame         // stack[d] is the region open at depth d; stack[0] is a sentinel
	prof   []profEntry     // by region id; prof[0] unused
	levels []*buffer.Level // enter/leave level by depth, cached

	recorded uint64
	usage    tracefile.UsageErrors
	closed   bool

	m          *Measurement
	name       string
	id         uint32
	afterClose atomic.Uint64
}

// Name returns the location's name.
func (l *Location) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Enter records that the goroutine enters region r.
func (l *Location) Enter(r Region) {
	if l != nil {
		l.enter(r, 0, true)
	}
}

// Leave records that the goroutine leaves region r, which must be the
// region entered last. A Leave of another open region leaves the regions
// entered after it implicitly; a Leave of a region that is not open is
// ignored. Both are counted as usage errors.
func (l *Location) Leave(r Region) {
	if l != nil {
		l.leave(r, 0, true)
	}
}

// EnterAt records an enter at time t, taken earlier from Measurement.Now:
// for replaying probes that were buffered elsewhere, as the C shim does.
// Times must not decrease; an earlier one is taken as the last one seen.
func (l *Location) EnterAt(r Region, t uint64) {
	if l != nil {
		l.enter(r, t, false)
	}
}

// LeaveAt records a leave at time t, like EnterAt.
func (l *Location) LeaveAt(r Region, t uint64) {
	if l != nil {
		l.leave(r, t, false)
	}
}

// stamp clamps t to the location's last time and reduces it: the reduced
// time and the event's position among those of the same reduced time.
func (l *Location) stamp(t uint64) (uint64, uint64, uint32) {
	if t < l.last {
		t = l.last
	}
	l.last = t
	tr := t >> l.shift
	if tr == l.lastTR {
		l.run++
		return t, tr, l.run
	}
	l.lastTR, l.run = tr, 0
	return t, tr, 0
}

func (l *Location) enter(r Region, t uint64, read bool) {
	if read { // first thing, so that the bookkeeping is not in the caller's time
		if clock.TSCActive() {
			t = clock.TSC()
		} else {
			t = clock.Monotonic()
		}
	}
	if l.h.Stale() && !l.sync() {
		return
	}
	if uint(r)-1 >= uint(len(l.prof)-1) && !l.growProfile(r) {
		return
	}
	t, tr, seq := l.stamp(t)
	d := l.depth + 1
	if d >= len(l.stack) {
		l.growStack()
	}
	f := &l.stack[d]
	f.start, f.child, f.region, f.written = t, 0, uint32(r), false
	l.depth = d
	p := &l.prof[r]
	p.visits++
	p.active++
	l.recorded++
	if d >= l.limit {
		l.drop(d, buffer.ClassRegion)
		return
	}
	if l.level(d).Enter(tr, seq, uint32(r)) {
		f.written = true
		return
	}
	// No bin: the call's whole subtree is lost, so that what is kept nests.
	l.lostAt, l.limit = d, d
}

func (l *Location) leave(r Region, t uint64, read bool) {
	if read { // first thing, so that the bookkeeping is not in the caller's time
		if clock.TSCActive() {
			t = clock.TSC()
		} else {
			t = clock.Monotonic()
		}
	}
	if l.h.Stale() && !l.sync() {
		return
	}
	d := l.depth
	if l.stack[d].region != uint32(r) || d == 0 {
		l.leaveOther(r, t)
		return
	}
	l.leaveTop(t)
}

// leaveTop records the leave of the region open at the top of the stack.
func (l *Location) leaveTop(t uint64) {
	t, tr, seq := l.stamp(t)
	d := l.depth
	f := &l.stack[d]
	dur := t - f.start
	p := &l.prof[f.region]
	p.active--
	if p.active == 0 {
		p.incl += dur
	}
	p.excl += dur - f.child
	l.depth = d - 1
	l.stack[d-1].child += dur
	l.recorded++
	if !f.written {
		if d == l.lostAt {
			l.lostAt = 0
			l.limit = l.viewLimit()
		}
		l.drop(d, buffer.ClassRegion)
		return
	}
	l.level(d).Leave(tr, seq, f.region)
}

// leaveOther handles a Leave of a region that is not the one on top.
func (l *Location) leaveOther(r Region, t uint64) {
	if l.closed {
		l.afterClose.Add(1)
		return
	}
	if l.depth == 0 {
		l.usage.LeaveNothingOpen++
		return
	}
	k := l.depth - 1
	for k > 0 && l.stack[k].region != uint32(r) {
		k--
	}
	if k == 0 {
		l.usage.LeaveNotOpen++
		return
	}
	for l.depth >= k {
		if l.depth > k {
			l.usage.LeftImplicitly++
		}
		l.leaveTop(t)
	}
}

// level returns the enter/leave level at depth d.
func (l *Location) level(d int) *buffer.Level {
	if d < len(l.levels) && l.levels[d] != nil {
		return l.levels[d]
	}
	return l.newLevel(d)
}

func (l *Location) newLevel(d int) *buffer.Level {
	lv := l.h.Level(d, buffer.ClassRegion)
	for d >= len(l.levels) {
		l.levels = append(l.levels, nil)
	}
	l.levels[d] = lv
	return lv
}

// drop counts an event that is not kept: the level is closed, or the
// measurement is.
func (l *Location) drop(d int, c buffer.Class) {
	if l.closed {
		l.afterClose.Add(1)
		return
	}
	l.h.Level(d, c).Dropped[l.h.DropReason(d, c)]++
}

// sync refreshes the location's view of the closed levels. It returns false
// if the measurement is closed.
func (l *Location) sync() bool {
	l.h.Sync()
	l.limit = l.viewLimit()
	if l.lostAt > 0 && l.lostAt < l.limit {
		l.limit = l.lostAt
	}
	if l.h.Final {
		// Leaves of calls open now can no longer reach the trace.
		for d := 1; d <= l.depth; d++ {
			l.stack[d].written = false
		}
		l.closed = true
		l.afterClose.Add(1)
		return false
	}
	return true
}

// viewLimit is the depth limit of the enter/leave class in the view of the
// last sync.
func (l *Location) viewLimit() int {
	if l.h.ClassClosed&(1<<buffer.ClassRegion) != 0 {
		return 0
	}
	return l.h.Limit
}

func (l *Location) growProfile(r Region) bool {
	n := l.m.regionCount()
	if r == 0 || int(r) > n {
		l.usage.UnknownRegion++
		return false
	}
	p := make([]profEntry, n+1)
	copy(p, l.prof)
	l.prof = p
	return true
}

func (l *Location) growStack() {
	s := make([]frame, 2*len(l.stack))
	copy(s, l.stack)
	l.stack = s
}

// closeOpenRegions leaves every open region at time t; Close calls it.
func (l *Location) closeOpenRegions(t uint64) {
	for l.depth > 0 {
		l.usage.OpenAtClose++
		l.leaveTop(t)
	}
}
