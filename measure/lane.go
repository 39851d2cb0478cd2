package measure

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/goroutine"
)

// Lanes. A Location is a lane: one single-writer stream of events that a
// goroutine holds while it records and then gives back, so that Go
// programs that start a goroutine per task use as many lanes as ran at
// once, not one per goroutine.
//
// A lane is held in one of two ways, told apart by its own word:
//
//   - By a caller of Measurement.Location (ownLocation), until Done at
//     depth 0 puts it on the measurement's free list, where the next
//     Location takes it. Such a lane keeps the name of its first holder.
//   - By a goroutine through StartRegion (own = the goroutine's key). The
//     goroutine binds a lane at its first region and keeps the binding
//     when its outermost region ends, with the low bit of own cleared: the
//     lane is idle, and the next outermost StartRegion of the same
//     goroutine takes it back with one compare-and-swap, no lock. A
//     goroutine that needs a lane and has none steals an idle one, found
//     in a published list without a lock (with the same compare-and-swap,
//     which fails if its goroutine began a region first); else, under the
//     mutex, it takes a free one, else makes one, "lane N", after letting
//     the holders run a few times if there are many lanes already. So a
//     lane bound to a goroutine that ended is reclaimed when another
//     goroutine needs it, and the lanes made are about the goroutines
//     that had regions open at once (not exactly: a scan races with the
//     goroutines that start and end while it looks). 10^5 goroutines
//     through an unlimited errgroup use 3 to 6 lanes (lane_test.go).
//
// Each holder of a lane after its first is a task on it, recorded with the
// task records of task.go (as OpenMP's explicit tasks are): a switch to a
// new task id when it takes the lane, and the task's completion when it
// gives it back (Done), or, for a goroutine's lane that another goroutine
// steals, at the time of its last event. The first holder runs as the
// lane's implicit task and has no records. A task's regions nest on its
// lane between its switch and its completion.
//
// The runtime recycles the descriptors of goroutines that ended, on which
// the key is based (internal/goroutine): a new goroutine that gets the
// descriptor of one whose lane is still bound and idle continues that
// goroutine's task on it. That changes where a task boundary is drawn,
// never the nesting: both had no region open.

// The values of a lane's own word besides a goroutine's key.
const (
	ownFree     uintptr = 0 // on the free list, or not handed out
	ownLocation uintptr = 1 // held by a caller of Measurement.Location
	ownActive   uintptr = 1 // the low bit of a goroutine's key: it has regions open
	// ownClosing marks a goroutine's lane that was still active when Close
	// stopped waiting for it (settleLanes): until its goroutine's End marks
	// it idle, a StartRegion of that goroutine finds it neither its own nor
	// idle, and records nothing. Keys are multiples of 8, so the bit is
	// free.
	ownClosing uintptr = 2
	// ownClosed is a lane Close took while it was idle: no goroutine's
	// (it has the active bit, and no key is odd), so none takes it back or
	// steals it, and Close reads and finishes its state.
	ownClosed = ^uintptr(0)
)

// laneTaskBit marks the ids of the tasks of lanes, apart from the ids the
// C shim gives OpenMP tasks (counted from 1).
const laneTaskBit = 1 << 63

// laneSlots is the size of the measurement's table from goroutine key to
// lane. The table is a cache that the lane's own word validates: two
// goroutines in one slot cost a scan of the lanes, never a wrong lane.
const (
	laneSlotBits = 10
	laneSlots    = 1 << laneSlotBits
)

// laneState is the lane part of a Location.
type laneState struct {
	own     atomic.Uintptr
	key     uintptr   // the goroutine bound, for a goroutine's lane; written by its holder
	task    uint64    // the task that holds the lane, 0: its implicit task
	holders uint64    // holders so far
	byKey   bool      // a goroutine's lane (StartRegion), else one of Measurement.Location
	next    *Location // the next lane on the returned stack
	// shared counts the probes that found another goroutine inside a probe
	// of the lane: sharing that the busy mark catches (-race finds the
	// rest).
	shared atomic.Uint64
}

// laneSet is a measurement's lanes.
//
// Lanes given back go onto a lock-free stack (returned), so that a task's
// end never waits for a lock; whoever needs a lane takes the whole stack
// under the mutex into free. Taking all at once is what keeps the stack
// free of the ABA problem of a lock-free pop. The mutex also serializes
// making lanes: a goroutine that waited for it looks for a returned or
// idle lane first, so that goroutines piling up on it (the scheduler
// starts new ones while they wait) do not each make a lane.
type laneSet struct {
	mu       sync.Mutex
	returned atomic.Pointer[Location]    // given back by Done at depth 0, linked by lane.next
	free     []*Location                 // taken from returned, under mu
	byKey    []*Location                 // goroutines' lanes, scanned for a goroutine's own lane or an idle one
	view     atomic.Pointer[[]*Location] // byKey as of its last append, for find
	cursor   atomic.Uint32               // where the next scan for an idle lane starts
	made     int                         // goroutines' lanes made, for their names
	total    int                         // lanes made
	tasks    atomic.Uint64
	table    [laneSlots]atomic.Pointer[Location]
}

// laneSlot returns the table slot of goroutine key k.
func laneSlot(k uintptr) uintptr {
	if goroutine.Fast {
		// The key is the address of a g: the runtime allocates them at
		// least 1<<gSlotShift bytes apart (TestLaneSlotSpread), so a
		// shift and a mask tell the goroutines running at once apart as
		// well as a hash does, at less latency in front of the probe
		// (spanStart and laneEnter compute it in assembly).
		return k >> gSlotShift & (laneSlots - 1)
	}
	// An id shifted by 3, whose low bits say little: Fibonacci hashing of
	// the low 32 bits, a multiply by an immediate and a shift.
	return uintptr(uint32(k)*0x9e3779b9) >> (32 - laneSlotBits)
}

// gSlotShift is the bits of a g's address below those that pick its slot
// in the lane table: a g is larger than 1<<gSlotShift bytes.
const gSlotShift = 8

// reusable reports whether Done at depth 0 may give the lane to another
// holder: a lane of Measurement.Location that no C thread writes and that
// reads no counters (they are its OS thread's).
func (l *Location) reusable() bool {
	return !l.lane.byKey && l.pinner == nil && l.src == nil && l.lane.own.Load() == ownLocation
}

// location returns a lane for a caller of Measurement.Location, held by
// it: a free one, else a new one named name.
func (s *laneSet) location(m *Measurement, name string) *Location {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.popFreeLocked()
	for try := 0; l == nil && s.yieldLocked(try); try++ {
		l = s.popFreeLocked()
	}
	if l == nil {
		s.total++
		l = m.newLocation(name, true)
	}
	l.lane.own.Store(ownLocation)
	return l
}

// popFreeLocked returns a free lane, nil if none.
func (s *laneSet) popFreeLocked() *Location {
	n := len(s.free)
	if n == 0 {
		for l := s.returned.Swap(nil); l != nil; {
			next := l.lane.next
			l.lane.next = nil
			s.free = append(s.free, l)
			l = next
		}
		if n = len(s.free); n == 0 {
			return nil
		}
	}
	l := s.free[n-1]
	s.free[n-1] = nil
	s.free = s.free[:n-1]
	return l
}

// giveBack ends the task on lane l, whose holder is done with it at depth
// 0, and puts the lane on the free list. The lane keeps its current bins
// for its next holder, who fills them on: sealing them here, as Done does
// for a location that is not given back, would seal a bin per level for
// every short task. A reduction that closes their levels meanwhile takes
// them back from the lane, which is idle (package buffer's doc).
func (l *Location) giveBack() {
	l.endTask(0, true)
	l.surviveCounts()
	l.lane.own.Store(ownFree)
	s := &l.m.lanes
	for {
		top := s.returned.Load()
		l.lane.next = top
		if s.returned.CompareAndSwap(top, l) {
			return
		}
	}
}

// beginTask records that a new holder took the lane, at time t or the
// clock's if read: from its second holder on, a switch to a new task.
func (l *Location) beginTask(t uint64, read bool) {
	l.lane.holders++
	if l.lane.holders == 1 {
		return // the lane's implicit task
	}
	l.lane.task = laneTaskBit | l.m.lanes.tasks.Add(1)
	l.taskRecord(encode.KindTaskSwitch, l.lane.task, t, read)
}

// endTask records that the task holding the lane completed, at time t or
// the clock's if read.
func (l *Location) endTask(t uint64, read bool) {
	if l.lane.task == 0 {
		return
	}
	l.taskRecord(encode.KindTaskComplete, l.lane.task, t, read)
	l.lane.task = 0
}

// holdLane returns the lane goroutine k records into, for a caller that
// found none active for it in its table slot (hint, from that slot, may be
// nil or another goroutine's): its own idle lane, taken back, or one it
// acquires; activated is false when the lane was active for k already
// (the slot held another goroutine's lane), so that the caller's region is
// not the outermost. On a disabled or closed measurement it returns nil.
//
//go:noinline
func (m *Measurement) holdLane(k uintptr, slot *atomic.Pointer[Location], hint *Location) (l *Location, activated bool) {
	if m.closing.Load() {
		// Close takes the lanes that go idle: this StartRegion is after
		// Close, counted and dropped, and its Span ends nothing.
		m.late.Add(1)
		return nil, false
	}
	if hint != nil && hint.lane.own.CompareAndSwap(k, k|ownActive) {
		return hint, true // its own, idle since its last outermost region ended
	}
	l, prev := m.lanes.find(k)
	if l == nil {
		if l, prev = m.lanes.acquire(m, k); l == nil {
			return nil, false
		}
	}
	// What follows writes into the lane: marked as a probe under way, then
	// a second look at closing, so that Close either sees the mark or this
	// sees closing (Measurement.quiesce).
	l.markProbe()
	defer l.probeDone()
	if m.closing.Load() {
		l.lane.own.CompareAndSwap(k|ownActive, k) // idle again, for Close to take
		m.late.Add(1)
		return nil, false
	}
	slot.Store(l)
	if prev == k|ownActive {
		return l, false
	}
	if prev != k && (prev != 0 || !l.lane.byKey) {
		// Taken from another goroutine, or from the free list: the
		// previous holder's task ended at its last event there.
		l.endTask(l.last, false)
	}
	l.lane.byKey, l.lane.key = true, k
	if prev != k {
		l.beginTask(0, true)
	}
	return l, true
}

// acquire finds goroutine k a lane and marks it active for k: its own
// (bound, perhaps under another table slot), a free one, an idle one
// stolen from another goroutine, or a new one. prev is the key of the
// goroutine that held it, 0 if none, k|ownActive if it was active for k
// already. The scan is under the mutex so that
// two acquirers do not both make a lane when one would do.
func (s *laneSet) acquire(m *Measurement, k uintptr) (l *Location, prev uintptr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for try := 0; ; try++ {
		if l, prev = s.findLocked(k); l != nil {
			return l, prev
		}
		if !s.yieldLocked(try) {
			break
		}
	}
	if !m.Enabled() || m.pool.Frozen() {
		return nil, 0
	}
	s.made++
	s.total++
	l = m.newLocation(fmt.Sprintf("lane %d", s.made), false)
	l.lane.byKey = true
	l.lane.own.Store(k | ownActive)
	s.addLocked(l)
	return l, 0
}

// find looks for a lane for goroutine k without the mutex: its own, or
// an idle one to steal, from the list of goroutines' lanes as it was when
// the last was added. The compare-and-swap on a lane's own word is what
// makes it k's, so that most new goroutines take a lane without waiting
// for one another: a lock here piles them up while the program starts
// more.
func (s *laneSet) find(k uintptr) (l *Location, prev uintptr) {
	v := s.view.Load()
	if v == nil {
		return nil, 0
	}
	return scanLanes(*v, k, &s.cursor)
}

// scanLanes looks in lanes for goroutine k's own lane, taken back if idle,
// else for an idle lane of another goroutine, stolen, starting at cursor.
func scanLanes(lanes []*Location, k uintptr, cursor *atomic.Uint32) (l *Location, prev uintptr) {
	for _, c := range lanes {
		switch v := c.lane.own.Load(); v {
		case k | ownActive:
			return c, v // active for k already: a nested region after a slot was overwritten
		case k:
			if c.lane.own.CompareAndSwap(k, k|ownActive) {
				return c, k
			}
		}
	}
	n := uint32(len(lanes))
	start := cursor.Load()
	for i := range n {
		c := lanes[(start+i)%n]
		if v := c.lane.own.Load(); v&ownActive == 0 && v != ownFree && c.lane.own.CompareAndSwap(v, k|ownActive) {
			cursor.Store((start + i + 1) % n)
			return c, v
		}
	}
	return nil, 0
}

// addLocked adds goroutine lane l to the list, and publishes the list for
// find.
func (s *laneSet) addLocked(l *Location) {
	s.byKey = append(s.byKey, l)
	v := s.byKey // appends write past its length only: find may read it
	s.view.Store(&v)
}

// findLocked looks for a lane for goroutine k as acquire does, without
// making one.
func (s *laneSet) findLocked(k uintptr) (l *Location, prev uintptr) {
	for _, c := range s.byKey {
		switch v := c.lane.own.Load(); v {
		case k | ownActive:
			return c, v // active for k already: a nested region after a slot was overwritten
		case k:
			if c.lane.own.CompareAndSwap(k, k|ownActive) {
				return c, k
			}
		}
	}
	if l = s.popFreeLocked(); l != nil {
		l.lane.own.Store(k | ownActive)
		s.addLocked(l)
		return l, 0
	}
	return scanLanes(s.byKey, k, &s.cursor)
}

// yieldTries is how many times a goroutine that finds no lane yields
// before it makes one, once the measurement has more lanes than twice
// GOMAXPROCS.
const yieldTries = 4

// yieldLocked lets the holders of lanes run before the caller, which
// found none free, makes one, and reports whether it did (the caller then
// looks again). A program that starts goroutines faster than they run
// piles them up on the mutex, and each would make a lane that the tasks
// ahead of it are about to give back: with 10^5 goroutines through an
// unlimited errgroup, thousands of lanes, each holding a bin per level.
// Below twice GOMAXPROCS lanes it never yields.
func (s *laneSet) yieldLocked(try int) bool {
	if try >= yieldTries || s.total < 2*runtime.GOMAXPROCS(0) {
		return false
	}
	s.mu.Unlock()
	runtime.Gosched()
	s.mu.Lock()
	return true
}

// idle marks goroutine lane l idle: its holder's outermost region ended.
// The binding stays, so that the holder's next region takes it back
// without a lock; another goroutine may steal it meanwhile. The store is
// what hands the lane's state over to Close (settleLanes). It may clear
// the mark of a lane Close gave up waiting for: Close left it as
// interrupted already, and the probes are frozen or about to be.
func (l *Location) idle() {
	if l.m.gort != nil {
		l.m.goRuntimeRelease(l)
	}
	l.lane.own.Store(l.lane.key)
}

// closeWait bounds how long Close waits for the goroutines' lanes that
// have regions open to go idle (settleLanes). probeWait bounds its wait
// for the probes under way to end once the probes are frozen
// (Measurement.quiesce): a probe does not block, so that takes as long as
// its goroutine takes to be scheduled again, a few milliseconds with 1000
// goroutines on 2 cores; only a goroutine stopped in a debugger, or one
// that panicked inside a probe, makes Close wait it out.
const (
	closeWait = 100 * time.Millisecond
	probeWait = 2 * time.Second
)

// settleLanes takes the goroutines' lanes from them for Close, which set
// m.closing first (so that no StartRegion takes a lane any more): each
// idle one at once, each active one when its outermost region ends (the
// goroutine's End marks it idle), waiting until deadline. The compare and
// swap that takes a lane orders everything its goroutine wrote before Close
// reads it. A lane still active at the deadline is marked ownClosing: its
// goroutine may record into it until the freeze stops its probes, after
// which Close (quiesce) waits out the probe under way and ends the lane's
// open regions as every other location's.
//
// This is what lets a goroutine's `defer wg.Done()` run before its
// `defer measure.StartRegion(ctx, r).End()`: the main goroutine's Wait
// returns, Close runs, and waits here the few microseconds to the End.
func (s *laneSet) settleLanes(deadline time.Time) {
	s.mu.Lock()
	pending := slices.Clone(s.byKey)
	s.mu.Unlock()
	for wait := time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		rest := pending[:0]
		for _, l := range pending {
			v := l.lane.own.Load()
			if v&ownActive == 0 && l.lane.own.CompareAndSwap(v, ownClosed) {
				continue
			}
			if v != ownClosed {
				rest = append(rest, l)
			}
		}
		pending = rest
		if len(pending) == 0 || !time.Now().Before(deadline) {
			break
		}
		time.Sleep(wait)
	}
	for _, l := range pending {
		for {
			v := l.lane.own.Load()
			if v == ownClosed {
				break
			}
			if v&ownActive == 0 && l.lane.own.CompareAndSwap(v, ownClosed) {
				break // idle after all
			}
			if v&ownActive != 0 && l.lane.own.CompareAndSwap(v, v|ownClosing) {
				break
			}
		}
	}
}

// sharedProbe counts a probe that found another goroutine inside a probe
// of the same lane. The probe records nothing: what the other goroutine
// writes is left whole.
//
// The test is the buffer's busy mark (Hierarchy.Busy), which a probe sets
// from the start of its record to its end. Leave tests it on its fast path,
// a load and a branch (a leave follows every enter, so testing enters too
// would double the cost for little more); the general paths of both test
// it. Sharing that never overlaps a leave's test goes unseen: -race finds
// it.
//
// After the freeze the mark may be Close's own, leaving the regions still
// open (closeOpenRegions): the probe is one after Close, counted as such.
//
//go:noinline
func (l *Location) sharedProbe() {
	if l.pool.Frozen() {
		l.afterClose.Add(1)
		return
	}
	l.lane.shared.Add(1)
}

// reportShared says, at Close, which lanes two goroutines recorded into
// at once: their events and profiles are not to be trusted.
func reportShared(w io.Writer, locs []*Location) {
	for _, l := range locs {
		if n := l.lane.shared.Load(); n > 0 {
			fmt.Fprintf(w, "hmbtrace: location %q: %d probes found another goroutine inside a probe of it and were not recorded: "+
				"a Location is one goroutine's at a time (it may pass to another goroutine only while none records into it), "+
				"so its events and profile are not reliable; build with -race to see where it is shared\n", l.name, n)
		}
	}
}

// goroutineLane returns the lane of the calling goroutine, of key k, in m,
// active for it, as StartRegion finds it; activated says it was idle or
// newly taken, so that a caller that opens no region idles it again.
func (m *Measurement) goroutineLane(k uintptr) (l *Location, activated bool) {
	slot := &m.lanes.table[laneSlot(k)]
	l = slot.Load()
	if l != nil && l.lane.own.Load() == k|ownActive {
		return l, false
	}
	activated = true
	if l == nil || !l.lane.own.CompareAndSwap(k, k|ownActive) {
		if l, activated = m.holdLane(k, slot, l); l == nil || !activated {
			return l, false
		}
	}
	if m.gort != nil {
		m.goRuntimeHold(l)
	}
	return l, true
}
