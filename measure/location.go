package measure

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/survive"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// frame is an open region on a location's stack.
type frame struct {
	start uint64 // clock ticks at enter
	child uint64 // ticks spent in regions entered from this one
	// region, state, counted and class share one 8-byte word, which the
	// assembly probe (probe_amd64.s) writes with one store and tests with
	// one compare (TestProbeAsmLayout).
	region  uint32
	state   uint8        // what became of the enter: frameDropped, framePending or frameWritten
	counted bool         // the region reads counters
	class   buffer.Class // ClassRegion, ClassParadigm, or ClassCollective for a collective operation
	seq     uint32       // the enter's sequence number
	// For a region that reads counters: the sequence number of the metric
	// record after the enter (kept for a pending enter), and the depth of
	// the enclosing frame that reads them, to hand its counts to.
	mseq  uint32
	tr    uint64 // reduced time of the enter, kept for a pending enter
	mprev int
	node  int32 // the call-path node, when call paths are kept
}

// The states of a frame's enter.
const (
	frameDropped uint8 = iota // not in the trace: nor will the leave or anything inside be
	framePending              // held by the duration filter until the call proves long enough
	frameWritten              // in a bin: the leave must follow
)

// probeState is the head of a Location: what its probes touch, in the
// order they touch it. The C shim's probes (cprobe.go) read and write it in
// place through the mirror that go generate writes into
// cshim/lib/golayout.h, whose static assertions stop the C build when the
// two differ; everything else of a Location follows it.
type probeState struct {
	h           *buffer.Hierarchy
	pool        *buffer.Pool
	epoch       uint64 // the pool's epoch at the last sync
	limit       int    // depths >= limit are not kept: the view of the last sync, or lostAt
	lostAt      int    // depth of an open call whose enter found no bin, 0 if none
	pendingFrom int    // shallowest depth whose enter the duration filter holds, 0 if none
	minDur      uint64
	last        uint64
	lastTR      uint64
	run         uint32
	shift       uint8
	tsc         bool // the probes read the TSC, else CLOCK_MONOTONIC: chosen once, when the location is made
	// general sends every probe of a measured region to enterGeneral and
	// leaveGeneral: the location keeps call paths, counters, phases or a
	// duration filter. One test for all of them on the probes' fast path;
	// set at each sync.
	general bool
	depth   int
	stack   []frame         // stack[d] is the region open at depth d; stack[0] is a sentinel
	prof    []*profPage     // region r's entry: prof[r/profPageSize].e[r%profPageSize]; nil pages not made yet
	levels  []*buffer.Level // enter/leave level by depth, cached

	recorded     uint64
	filteredName uint64
	cpt          *callTree       // nil unless call paths are kept
	phaseRegion  uint32          // the phase region, 0 if none
	msgLevels    []*buffer.Level // message level by depth, cached
	collLevels   []*buffer.Level // collective level by depth, cached
	parLevels    []*buffer.Level // paradigm (MPI, OpenMP) enter/leave level by depth, cached
	plimit       int             // depths >= plimit are not kept for paradigm enters and leaves
	mlimit       int             // depths >= mlimit are not kept for messages and collectives
	thrEarly     uint64          // visits from which a region may be throttled (throttle.go) ...
	thrCalls     uint64          // ... and from which the late step's share of long calls applies
	thrTicks     uint64          // a call this long (ticks) or longer counts as long

	// The exact communication matrix (comm.go): an open-addressing table
	// of 1<<(64-commShift) lines, at most half full. The C probes update
	// lines in place and leave new peers to Go.
	commLines []commLine
	commShift uint32
}

// Location is a lane: a stream of events written by one goroutine (or C
// thread) at a time. A goroutine holds it while it records; it may pass to
// another goroutine while one holds it (handed over through a channel, a
// mutex or a WaitGroup, which order the two), and Done at depth 0 gives it
// back for reuse. Its probes are not safe for concurrent use: two
// goroutines probing it at once are detected where a probe finds the other
// inside one and counted (Stats.SharedLane), and the race detector finds
// the rest. A nil *Location is valid: its probes do nothing, which is what
// a disabled measurement hands out.
type Location struct {
	probeState // first: the C probes take the Location's address as the head's

	// The cold parts, behind pointers so that what the probes touch stays
	// together: counters (made for every location, src nil if none) and
	// what readers may see while the location records.
	*counterState
	pub *published

	// offRegion and offVisits are a direct-mapped cache of the throttled
	// regions (throttle.go): slot uint8(r) holds region r and its visits
	// since it was throttled, or, while empty, a region that maps to another
	// slot. Enter and Leave test it where they are inlined, so that a
	// throttled region's probe is a load, a compare and an increment in the
	// caller, with no call. A region whose slot another holds is skipped by
	// enterAt's test of its profile entry instead, after a call.
	offRegion [offSlots]Region
	offVisits [offSlots]uint64

	phase *phaseSeries

	filteredDuration uint64
	usage            tracefile.UsageErrors
	closed           bool
	interrupted      bool // Close ran for a signal before this location stopped

	pinner *runtime.Pinner // the C probes write this location (cprobe.go)

	m          *Measurement
	name       string
	id         uint32
	afterClose atomic.Uint64
	stopped    atomic.Bool // the probes saw the freeze and touch nothing more
	// inProbe is 1 while a probe's general path (enterGeneral, ...) runs,
	// from before its test of the epoch to its end: with the buffer's busy
	// mark, which covers the fast paths' records, it tells Close a probe
	// under way (Measurement.quiesce). Marked by probemark_*.go.
	inProbe uint32

	commUsed int // lines of commLines in use

	surv *survive.LocEntry // the location's counts in a surviving buffer's mapping, nil if none

	team []int // an OpenMP thread's place (SetTeam), under m.mu

	taskBase map[uint64]int // depth at the last switch to each task running here (task.go)

	lane laneState // who holds the location (lane.go)
}

// Name returns the location's name.
func (l *Location) Name() string {
	if l == nil {
		return ""
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	return l.name
}

// SetName renames the location; the trace carries the last name given.
func (l *Location) SetName(name string) {
	if l == nil {
		return
	}
	l.m.mu.Lock()
	l.name = name
	l.m.mu.Unlock()
	l.m.surviveLocation(l.id, name)
}

// stamp clamps t to the location's last time and reduces it: the reduced
// time and the event's position among those of the same reduced time.
func (l *Location) stamp(t uint64) (uint64, uint64, uint32) {
	if t < l.last {
		t = l.last
	}
	l.last = t
	tr := t >> (l.shift & 63) // the mask spares the compiler a check for shifts past 63
	if tr == l.lastTR {
		l.run++
		return t, tr, l.run
	}
	l.lastTR, l.run = tr, 0
	return t, tr, 0
}

// now reads the location's clock: the TSC, or CLOCK_MONOTONIC where the
// TSC is not invariant, chosen once when the location was made, so that a
// probe tests a plain field and not the clock package's atomic flag. Its
// two calls keep it from inlining: enter and leave repeat its test.
func (l *Location) now() uint64 {
	if l.tsc {
		return clock.TSC()
	}
	return clock.Monotonic()
}

// enter records an enter of region r at time t, or at the clock's time if
// read: for the callers that replay a time of their own (task.go).
func (l *Location) enter(r Region, t uint64, read bool) {
	l.enterAt(r, atTime(t, read))
}

// leave records a leave of region r at time t, or at the clock's time if
// read, as enter does.
func (l *Location) leave(r Region, t uint64, read bool) {
	l.leaveAt(r, atTime(t, read))
}

// atTime is the time argument of enterAt and leaveAt: 0 to read the clock,
// else t, where a given 0 becomes 1 (no clock reads 0 after boot, and the
// probes clamp times to the location's last one anyway).
func atTime(t uint64, read bool) uint64 {
	if read {
		return 0
	}
	return max(t, 1)
}

// enterAt records an enter of region r at time t, or at the clock's time
// if t is 0: one argument fewer than a flag would take, which keeps Enter,
// with its test of the switched-off regions, under the inliner's budget.
// It does the common case in one frame and without a call but the
// clock's: a region measured on a location without call paths, counters,
// phases or duration filter (l.general false), into a level whose bin has
// room, or a closed one, in a record EnterFast writes (the encoder's Enter
// is called for the others). Anything else goes to
// enterGeneral, before enter has changed anything but the clock read.
// A throttled region's probe ends at its flag when Enter's test of the
// cache missed it: the visit is counted, the clock is not read.
func (l *Location) enterAt(r Region, t uint64) {
	// l.entry, written out, and one test of p.off for a measured region:
	// a throttled region's probe (one Enter's cache missed) returns in the
	// branch, before anything is spilled for a call.
	var p *profEntry
	if i := uint(r) >> profPageBits; i < uint(len(l.prof)) {
		if pg := l.prof[i]; pg != nil {
			p = &pg.e[r&(profPageSize-1)]
		}
	}
	if p == nil || p.off != offNone {
		if p != nil && p.off == offThrottled {
			p.after++
			return
		}
		if p = l.enterOff(r, p); p == nil {
			return // filtered or undefined
		}
	}
	if t == 0 { // first thing, so that the bookkeeping is not in the caller's time
		if l.tsc { // a plain field, not the clock package's atomic flag
			t = clock.TSC()
		} else {
			t = clock.Monotonic()
		}
	}
	d := l.depth + 1
	stack := l.stack // a local, and an unsigned test, spare stack[d] its bounds check
	// Begin, last, marks the location busy before its one test of the
	// epoch, which both refreshes the location's view of the closed set
	// and keeps its current bins from a reclaim until the record's end
	// (Advance, or End before a drop).
	if l.general || p.class != buffer.ClassRegion || uint(d) >= uint(len(stack)) || !l.h.Begin(l.epoch) {
		l.enterGeneral(r, p, t)
		return
	}
	l.recorded++
	t, tr, seq := l.stamp(t)
	f := &stack[d]
	// tr and seq are kept only for an enter the duration filter holds:
	// enterGeneral's.
	f.start, f.child, f.region, f.state, f.counted, f.class = t, 0, uint32(r), frameDropped, false, buffer.ClassRegion
	l.depth = d
	p.visits++
	p.active++
	if d >= l.limit {
		// The count first: it reads the hierarchy's view, which Close's
		// Finalize writes once no record is under way.
		if l.dropCached(d) {
			l.h.End()
			return
		}
		l.dropRegion(d)
		return
	}
	if d < len(l.levels) {
		if lv := l.levels[d]; lv != nil && lv.Free() >= 2*encode.MaxEnterLeaveSize {
			f.state = frameWritten // first: only lv lives across a call of Enter
			// EnterFast is inlined: the common record makes no call.
			n := lv.Encoder().EnterFast(lv.Head(), tr, seq, uint32(r))
			if n == 0 {
				n = lv.Encoder().Enter(lv.Tail(), tr, seq, uint32(r))
			}
			lv.Advance(n)
			return
		}
	}
	l.enterRefill(f, d, tr, seq)
}

// enterRefill writes the enter of frame f at depth d, whose level is not
// cached yet or has no room left in its bin: enterGeneral's end for a
// plain region.
//
//go:noinline
func (l *Location) enterRefill(f *frame, d int, tr uint64, seq uint32) {
	l.markProbe() // before Begin's mark ends: lose writes after it
	defer l.probeDone()
	lv := l.level(d)
	if lv.Room() >= 2*encode.MaxEnterLeaveSize || lv.Refill(tr, 0) {
		f.state = frameWritten
		lv.Advance(lv.Encoder().Enter(lv.Tail(), tr, seq, f.region))
		return
	}
	l.lose(d)
}

// enterGeneral records an enter of region r at time t, whose entry p is
// neither filtered nor throttled: every case enter leaves to it.
//
//go:noinline
func (l *Location) enterGeneral(r Region, p *profEntry, t uint64) {
	if l.h.Busy() {
		l.sharedProbe()
		return
	}
	l.markProbe() // cleared before each return: a defer costs the general path 2 ns
	if l.pool.Epoch() != l.epoch && !l.sync() {
		l.probeDone()
		return
	}
	l.recorded++
	t, tr, seq := l.stamp(t)
	d := l.depth + 1
	if d >= len(l.stack) {
		l.growStack()
	}
	c := p.class
	f := &l.stack[d]
	f.start, f.child, f.tr, f.seq, f.region, f.state, f.counted, f.class = t, 0, tr, seq, uint32(r), frameDropped, false, c
	l.depth = d
	p.visits++
	p.active++
	if l.cpt != nil {
		f.node = l.cpt.enter(l.stack[d-1].node, uint32(r))
	}
	if p.counted && l.src != nil && d <= l.mdepth {
		l.enterCounters(f, d, t)
	}
	limit := l.limit
	if c != buffer.ClassRegion {
		limit = l.plimit
	}
	if d >= limit {
		l.drop(d, c)
		if f.counted {
			l.drop(d, buffer.ClassMetric)
		}
		l.probeDone()
		return
	}
	if l.minDur != 0 {
		f.state = framePending
		if l.pendingFrom == 0 {
			l.pendingFrom = d
		}
		l.probeDone()
		return
	}
	lv := l.level(d)
	if c != buffer.ClassRegion {
		lv = l.parLevel(d)
	}
	if lv.Room() >= 2*encode.MaxEnterLeaveSize || lv.Refill(tr, 0) {
		lv.Advance(lv.Encoder().Enter(lv.Tail(), tr, seq, uint32(r)))
		f.state = frameWritten
		if f.counted {
			l.putMetric(d, f.tr, f.mseq, f.region, l.mstart[d*l.nmet:(d+1)*l.nmet])
		}
		l.probeDone()
		return
	}
	if f.counted {
		l.drop(d, buffer.ClassMetric)
	}
	if c == buffer.ClassRegion {
		l.lose(d)
	}
	l.probeDone()
}

// enterOff handles an enter of a region whose entry p is missing or says
// the probes skip it. It returns the entry to record the enter with, or nil
// if the enter is done: counted as filtered, as a throttled visit, or as a
// usage error.
//
//go:noinline
func (l *Location) enterOff(r Region, p *profEntry) *profEntry {
	l.markProbe()
	defer l.probeDone()
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return nil // after Close, counted
	}
	if p == nil || p.off == offUndefined {
		if p = l.define(r); p == nil {
			return nil
		}
	}
	switch p.off {
	case offFiltered:
		l.recorded++
		l.filteredName++
		return nil
	case offThrottled:
		p.after++
		return nil
	}
	return p
}

// leaveAt records a leave of region r at time t, or at the clock's time if
// t is 0: like enterAt, the common case in one frame (the region on top of the
// stack, its enter written or dropped, not held by the duration filter),
// the rest in leaveGeneral.
func (l *Location) leaveAt(r Region, t uint64) {
	var p *profEntry // as in enterAt
	if i := uint(r) >> profPageBits; i < uint(len(l.prof)) {
		if pg := l.prof[i]; pg != nil {
			p = &pg.e[r&(profPageSize-1)]
		}
	}
	if p == nil || p.off != offNone {
		if p != nil && (p.off == offThrottled || l.leaveOff(r, p)) {
			return
		}
		p = nil // undefined: a usage error, which leaveGeneral counts
	}
	if t == 0 { // first thing, so that the bookkeeping is not in the caller's time
		if l.tsc { // a plain field, not the clock package's atomic flag
			t = clock.TSC()
		} else {
			t = clock.Monotonic()
		}
	}
	if l.h.Busy() {
		// Another goroutine is inside a probe of this location: a leave
		// follows every enter, so testing here alone finds sharing at
		// half the cost of testing in both (lane.go).
		l.sharedProbe()
		return
	}
	d := l.depth
	stack := l.stack // a local: stack[d-1] below needs no bounds check
	if d < 0 {
		// Only goroutines sharing the Location, racing, leave it so.
		l.leaveGeneral(r, t)
		return
	}
	f := &stack[d]
	if p == nil || l.general || f.region != uint32(r) || d == 0 ||
		f.class != buffer.ClassRegion || f.state == framePending || f.counted || !l.h.Begin(l.epoch) { // Begin as in enterAt
		l.leaveGeneral(r, t)
		return
	}
	t, tr, seq := l.stamp(t)
	dur := t - f.start
	p.active--
	if p.active == 0 {
		p.incl += dur
		if dur >= l.thrTicks {
			p.longCalls++
		}
		if p.visits >= l.thrEarly && l.throttleDue(p) {
			l.throttle(p, f.region, f.class, t)
		}
	}
	p.excl += dur - f.child
	l.depth = d - 1
	stack[d-1].child += dur
	l.recorded++
	if f.state == frameWritten {
		// A kept enter left room for its leave.
		if d < len(l.levels) {
			if lv := l.levels[d]; lv != nil && lv.Free() >= encode.MaxEnterLeaveSize {
				n := lv.Encoder().LeaveFast(lv.Head(), tr, seq) // inlined, as in enterAt
				if n == 0 {
					n = lv.Encoder().Leave(lv.Tail(), tr, seq)
				}
				lv.Advance(n)
				return
			}
		}
		l.leaveRefill(d, tr, seq, f.region)
		return
	}
	if d == l.lostAt { // before End, as in enterAt
		l.lostAt = 0
		l.limit = l.viewLimit()
	}
	if l.dropCached(d) {
		l.h.End()
		return
	}
	l.dropRegion(d)
}

// leaveRefill writes a leave at depth d of region, whose enter was written
// and whose level is not cached or has no room: only a level closed since
// the enter has none, and Refill then counts the leave as dropped.
//
//go:noinline
func (l *Location) leaveRefill(d int, tr uint64, seq uint32, region uint32) {
	lv := l.level(d)
	if lv.Room() >= encode.MaxEnterLeaveSize || lv.Refill(tr, region) {
		lv.Advance(lv.Encoder().Leave(lv.Tail(), tr, seq))
	}
}

// leaveGeneral records a leave of region r at time t: every case leave
// leaves to it.
//
//go:noinline
func (l *Location) leaveGeneral(r Region, t uint64) {
	if l.h.Busy() {
		l.sharedProbe()
		return
	}
	l.markProbe() // cleared before each return, as in enterGeneral
	if l.pool.Epoch() != l.epoch && !l.sync() {
		l.probeDone()
		return
	}
	d := l.depth
	if d < 0 || d >= len(l.stack) {
		// Goroutines sharing the Location raced on its stack (a misuse
		// lane.go counts and Close reports): the leave is counted as
		// shared and the stack reset, so that no probe indexes past it.
		if d < 0 {
			l.depth = 0
		}
		l.sharedProbe()
		l.probeDone()
		return
	}
	if l.stack[d].region != uint32(r) || d == 0 {
		l.leaveOther(r, t)
	} else {
		l.leaveTop(t)
	}
	l.probeDone()
}

// leaveOff reports whether a leave of region r, whose entry p says the
// probes skip it, is done: counted as filtered, or nothing at all for a
// throttled region, whose enter was skipped too. A region is throttled
// only when no call of it is open (throttle), so every leave of it after
// that matches a skipped enter, and the trace stays well nested.
//
//go:noinline
func (l *Location) leaveOff(r Region, p *profEntry) bool {
	l.markProbe()
	defer l.probeDone()
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return true // after Close, counted
	}
	switch p.off {
	case offFiltered:
		l.recorded++
		l.filteredName++
		return true
	case offThrottled:
		return true
	}
	return false // undefined: the leave is a usage error, which leaveOther counts
}

// leaveTop records the leave of the region open at the top of the stack.
func (l *Location) leaveTop(t uint64) { l.leaveFrame(l.depth, t, false) }

// leaveFrame records the leave of the region open at depth d, the top of
// the stack, or for Close (atClose) the top of what it has not left yet.
// Close leaves the regions without writing what a probe reads before it
// finds the measurement closed (the depth, a throttled region's flag), as
// a goroutine may probe after Close, and the race detector would say so.
func (l *Location) leaveFrame(d int, t uint64, atClose bool) {
	if d <= 0 {
		return // only if Close raced a probe it was told had stopped
	}
	t, tr, seq := l.stamp(t)
	f := &l.stack[d]
	dur := t - f.start
	p := l.entry(Region(f.region))
	p.active--
	if p.active == 0 {
		p.incl += dur
		if dur >= l.thrTicks {
			p.longCalls++
		}
		if !atClose && p.visits >= l.thrEarly && l.throttleDue(p) {
			l.throttle(p, f.region, f.class, t)
		}
	}
	p.excl += dur - f.child
	if l.cpt != nil {
		l.cpt.leave(f.node, dur, f.child)
	}
	if !atClose {
		l.depth = d - 1
	}
	l.stack[d-1].child += dur
	l.recorded++
	var mseq uint32
	if f.counted {
		mseq = l.leaveCounters(f, d, t, p.active == 0)
	}
	if f.region == l.phaseRegion {
		l.phase.endIteration(l)
	}
	state := f.state
	if state == framePending {
		if dur < l.minDur {
			// Short, and nothing inside was kept: the call vanishes.
			l.filteredDuration += 2
			if f.counted {
				l.filteredDuration += 2 // its metric records
			}
			if l.pendingFrom == d {
				l.pendingFrom = 0
			}
			return
		}
		if l.flush(d) {
			state = frameWritten
		}
	}
	if state == frameWritten {
		lv := l.level(d)
		switch f.class {
		case buffer.ClassCollective:
			lv = l.collLevel(d)
		case buffer.ClassParadigm:
			lv = l.parLevel(d)
		}
		// A kept enter left room for its leave; only a level closed since
		// has no bin, and Refill then counts the leave as dropped.
		kept := lv.Room() >= encode.MaxEnterLeaveSize || lv.Refill(tr, f.region)
		if kept {
			lv.Advance(lv.Encoder().Leave(lv.Tail(), tr, seq))
		}
		if kept && f.counted {
			l.putMetric(d, tr, mseq, f.region, l.mvals)
		} else if f.counted {
			l.drop(d, buffer.ClassMetric)
		}
		return
	}
	if d == l.lostAt {
		l.lostAt = 0
		l.limit = l.viewLimit()
	}
	l.drop(d, f.class)
	if f.counted {
		l.drop(d, buffer.ClassMetric)
	}
}

// flush writes the enters the duration filter holds, from the shallowest
// down to depth upTo, with their original times: something inside them is
// kept. Each is written if its own level is open and has room, else
// dropped and counted: a held MPI call stays when the compute calls around
// it cannot (the reader accepts kept events below removed ones). It
// reports whether the enter at upTo is in the trace.
func (l *Location) flush(upTo int) bool {
	if l.pendingFrom == 0 || l.pendingFrom > upTo {
		return upTo <= 0 || l.stack[upTo].state == frameWritten
	}
	top := max(upTo, l.depth) // upTo is above l.depth when its leave flushes
	for d := l.pendingFrom; d <= upTo; d++ {
		f := &l.stack[d]
		if f.state != framePending {
			continue
		}
		limit, lv := l.limit, (*buffer.Level)(nil)
		if f.class == buffer.ClassParadigm {
			limit = l.plimit
		}
		if d < limit {
			lv = l.level(d)
			if f.class == buffer.ClassParadigm {
				lv = l.parLevel(d)
			}
		}
		if lv == nil || !lv.Enter(f.tr, f.seq, f.region) {
			if lv == nil {
				l.drop(d, f.class) // Enter counted it otherwise
			}
			f.state = frameDropped
			if f.counted {
				l.drop(d, buffer.ClassMetric)
			}
			if lv != nil && f.class == buffer.ClassRegion {
				l.lose(d) // the compute calls inside go with it
			}
			continue
		}
		f.state = frameWritten
		if f.counted {
			l.putMetric(d, f.tr, f.mseq, f.region, l.mstart[d*l.nmet:(d+1)*l.nmet])
		}
	}
	l.pendingFrom = 0
	for d := upTo + 1; d <= top; d++ {
		if l.stack[d].state == framePending {
			l.pendingFrom = d
			break
		}
	}
	return l.stack[upTo].state == frameWritten
}

// lose records that the enter at depth d found no bin: the call's whole
// subtree is dropped, so that what is kept nests.
func (l *Location) lose(d int) {
	l.lostAt, l.limit = d, d
}

// leaveOther handles a Leave of a region that is not the one on top.
func (l *Location) leaveOther(r Region, t uint64) {
	if l.depth == 0 {
		l.usage.LeaveNothingOpen++
		l.noteUsage(usageLeaveNothingOpen, uint32(r), 0)
		return
	}
	k := l.depth - 1
	for k > 0 && l.stack[k].region != uint32(r) {
		k--
	}
	if k == 0 {
		l.usage.LeaveNotOpen++
		l.noteUsage(usageLeaveNotOpen, uint32(r), 0)
		return
	}
	l.noteUsage(usageLeftImplicitly, uint32(r), l.stack[l.depth].region)
	for l.depth >= k {
		if l.depth > k {
			l.usage.LeftImplicitly++
		}
		l.leaveTop(t)
	}
}

// Message describes a point-to-point message for MessageAt.
type Message struct {
	Recv       bool   // a receive; else a send
	Peer       uint64 // the peer's location id (Location.ID) or world rank
	PeerIsRank bool
	Tag        uint32
	Bytes      uint64
	Comm       CommID // the communicator, 0 if none given
}

// Done tells the measurement that the location's goroutine or thread will
// not record for a long time, or ever again. Call it from that goroutine.
//
// With no region open (depth 0), Done gives the location back: it is a lane
// (the package's doc says what that is), which the next call of
// Measurement.Location hands out again, to a goroutine per task as to a
// worker of a pool, so that the locations made are at most the holders at
// once. The caller must not record into it afterwards; a goroutine that
// goes on with its work calls Measurement.Location again. A location that
// a C thread writes, or that reads counters (Config.Metrics, whose counters
// belong to its OS thread), is not given back; neither is one with regions
// open (a worker about to wait in a barrier): those may record again
// afterwards.
//
// A location that is not given back hands its partly filled bins to the
// buffer, where a reduction can take them at once; without it a reduction
// that closes their levels takes them back from the location itself
// (package buffer's doc says how), or, in a pool the C probes write, waits
// a bounded time for its next probe. A location given back keeps its bins
// for its next holder.
func (l *Location) Done() {
	if l == nil || l.closed || l.pool.Frozen() {
		return
	}
	l.m.goRuntimeRelease(l)
	if l.depth == 0 && l.reusable() {
		l.giveBack()
		return
	}
	l.surviveCounts()
	l.h.Release()
}

// ID returns the location's id, which names it as a message's peer.
func (l *Location) ID() uint32 {
	if l == nil {
		return 0
	}
	return l.id
}

func (l *Location) messageTo(recv bool, peer *Location, tag uint32, bytes uint64) {
	if peer == nil || peer.m != l.m {
		l.usage.MessageNoPeer++
		l.noteUsage(usageMessageNoPeer, 0, 0)
		return
	}
	k := encode.KindSend
	if recv {
		k = encode.KindRecv
	}
	l.message(k, uint64(peer.id), false, tag, bytes, 0, 0, true)
}

// message records a send or receive at the current depth, on communicator
// comm (0: none). A message is something kept inside the calls open around
// it: it makes the duration filter write their enters. The matrix counts it
// whatever the buffer keeps.
func (l *Location) message(k encode.Kind, peer uint64, rank bool, tag uint32, bytes uint64, comm uint32, t uint64, read bool) {
	if read {
		t = l.now()
	}
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	_, tr, seq := l.stamp(t)
	d := l.depth
	l.recorded++
	l.countMessage(k == encode.KindRecv, peer, rank, bytes)
	if l.pendingFrom != 0 {
		l.flush(d) // the calls around a kept message are kept where they can be
	}
	if d >= l.mlimit || l.h.ClassClosed&(1<<buffer.ClassMessage) != 0 {
		l.drop(d, buffer.ClassMessage)
		return
	}
	l.msgLevel(d).MessageComm(k, tr, seq, l.stack[d].region, peer, rank, tag, bytes, comm)
}

// level returns the enter/leave level at depth d.
func (l *Location) level(d int) *buffer.Level {
	if d < len(l.levels) && l.levels[d] != nil {
		return l.levels[d]
	}
	return l.newLevel(d, buffer.ClassRegion)
}

// collLevel returns the collective level at depth d.
func (l *Location) collLevel(d int) *buffer.Level {
	if d < len(l.collLevels) && l.collLevels[d] != nil {
		return l.collLevels[d]
	}
	return l.newLevel(d, buffer.ClassCollective)
}

// parLevel returns the paradigm enter/leave level at depth d.
func (l *Location) parLevel(d int) *buffer.Level {
	if d < len(l.parLevels) && l.parLevels[d] != nil {
		return l.parLevels[d]
	}
	return l.newLevel(d, buffer.ClassParadigm)
}

// msgLevel returns the message level at depth d.
func (l *Location) msgLevel(d int) *buffer.Level {
	if d < len(l.msgLevels) && l.msgLevels[d] != nil {
		return l.msgLevels[d]
	}
	return l.newLevel(d, buffer.ClassMessage)
}

// newLevel looks the level of class c at depth d up in the hierarchy and
// keeps it in the location's cache of that class (levels, msgLevels,
// collLevels, metLevels, parLevels), by depth. The C probes follow all but metLevels: what
// it makes is pinned for them.
// limitOf returns the depth from which records of class c are not kept, in
// the view of the last sync.
func (l *Location) limitOf(c buffer.Class) int {
	switch c {
	case buffer.ClassRegion, buffer.ClassMetric:
		return l.limit
	case buffer.ClassParadigm:
		return l.plimit
	}
	return l.mlimit
}

func (l *Location) newLevel(d int, c buffer.Class) *buffer.Level {
	cache := &l.levels
	switch c {
	case buffer.ClassMessage:
		cache = &l.msgLevels
	case buffer.ClassCollective:
		cache = &l.collLevels
	case buffer.ClassMetric:
		cache = &l.metLevels
	case buffer.ClassParadigm:
		cache = &l.parLevels
	}
	lv := l.h.Level(d, c)
	for d >= len(*cache) {
		*cache = append(*cache, nil)
	}
	(*cache)[d] = lv
	l.pinNew(unsafe.Pointer(&(*cache)[0]))
	l.pinNew(unsafe.Pointer(lv))
	return lv
}

// drop counts an event that is not kept, for the reason its level gives.
func (l *Location) drop(d int, c buffer.Class) {
	l.h.Level(d, c).Dropped[l.h.DropReason(d, c)]++
}

// dropCached counts an enter or leave at depth d of a closed level through
// the level the location caches, and reports whether it had one. It
// inlines into the probes, with Level.Drop: after the reductions most
// events go there, and such a probe must cost no more than one that keeps
// its event (issue 23).
func (l *Location) dropCached(d int) bool {
	if d < len(l.levels) {
		if lv := l.levels[d]; lv != nil {
			lv.Drop()
			return true
		}
	}
	return false
}

// dropRegion is drop of an enter or leave at depth d whose level is not
// cached (dropCached returned false), for a probe that Begin marked busy:
// it ends that record, and marks the probe under way until it counted the
// drop, as Close must not read the count before. The level is cached now,
// so that the next one finds it.
//
//go:noinline
func (l *Location) dropRegion(d int) {
	l.markProbe()
	l.h.End()
	l.level(d).Drop()
	l.probeDone()
}

// sync refreshes the location's view of the closed levels. It returns false
// if the measurement is closing: from then on every probe returns here,
// touching nothing else, so that Close can leave the open regions.
func (l *Location) sync() bool {
	if l.closed || l.pool.Frozen() {
		l.closed = true
		l.epoch = ^uint64(0) // never the pool's: every probe comes here
		l.afterClose.Add(1)
		l.stopped.Store(true)
		return false
	}
	// The location's own epoch, not the hierarchy's: a refill that reduced
	// synced the hierarchy already, but not this cached view.
	l.epoch = l.pool.Epoch()
	l.h.Sync()
	l.limit = l.viewLimit()
	if l.lostAt > 0 && l.lostAt < l.limit {
		l.limit = l.lostAt
	}
	l.plimit, l.mlimit = l.h.PLimit, l.h.MLimit
	l.surviveCounts()
	if r := l.m.phase.Load(); r != l.phaseRegion && l.phase == nil {
		l.phaseRegion = r
		l.phase = newPhaseSeries(r, l.m.cfg.PhaseSlots, l.nmet)
	}
	if l.m.minDurSet.Load() {
		l.minDur = l.m.minDurLive.Load()
	}
	if l.m.live.Load() {
		l.publish()
	}
	l.general = l.cpt != nil || l.src != nil || l.phaseRegion != 0 || l.minDur != 0
	return true
}

// publish copies what a live view may read while the location records.
// The owner does it at a sync; a view asks for one by bumping the epoch.
func (l *Location) publish() {
	p := l.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	p.generation = l.epoch
	p.recorded = l.recorded
	p.filtered = l.filteredName + l.filteredDuration
	p.profile = l.profileEntries(p.profile[:0])
	if l.cpt != nil {
		p.paths = l.cpt.export()
	}
}

// viewLimit is the depth limit of the enter/leave class in the view of the
// last sync.
func (l *Location) viewLimit() int {
	if l.h.ClassClosed&(1<<buffer.ClassRegion) != 0 {
		return 0
	}
	return l.h.Limit
}

//go:noinline
func (l *Location) growStack() { // cold: kept out of the probes' code
	s := make([]frame, 2*len(l.stack))
	copy(s, l.stack)
	l.stack = s
	l.pinNew(unsafe.Pointer(&s[0]))
	if l.src != nil {
		l.mstart = append(l.mstart, make([]uint64, len(l.mstart))...)
		l.mchild = append(l.mchild, make([]uint64, len(l.mchild))...)
	}
}

// closeOpenRegions leaves every open region at time t, counting each as a
// usage error if misuse; Close calls it.
func (l *Location) closeOpenRegions(t uint64, misuse bool) {
	for d := l.depth; d > 0; d-- {
		if misuse {
			l.usage.OpenAtClose++
		}
		l.leaveFrame(d, t, true)
	}
}
