package buffer

import "github.com/hmbtrace/hmbtrace/encode"

// Hierarchy is one location's grid of levels, indexed by calling depth and
// event class. Its methods are for its single writer unless they say
// otherwise.
type Hierarchy struct {
	pool   *Pool
	ID     int                  // index in creation order
	levels [][NumClasses]*Level // grown by the writer under the pool's mutex
	epoch  uint64

	// The writer's view of the closed set, refreshed by Sync. A record at
	// depth d of class c may be put only if Open(d, c).
	Limit       int   // depths >= Limit are closed for enter/leave and metrics (0 when recording stopped)
	PLimit      int   // depths >= PLimit are closed for the paradigm regions' enters and leaves
	MLimit      int   // depths >= MLimit are closed for messages and collectives, kept longest
	ClassClosed uint8 // bit c: class c is closed
	Stopped     bool  // PolicyFirst filled the buffer
	Final       bool  // the pool was finalized

	// PolicyLast, under the pool's mutex: the key of the newest record of a
	// revoked bin. Records up to it may have lost their neighbours.
	windowed   bool
	windowTime uint64
	windowSeq  uint32

	// Under the pool's mutex: current bins of closed levels this
	// hierarchy's writer has not handed back yet, and whether a take gave
	// up waiting for them (Pool.idleLocked). Both clear when it syncs.
	pending int
	idle    bool

	// busy is 1 while the writer puts a record, from Level.Room to the
	// record's fill mark (mark_*.go): a reduction takes the current bins
	// of closed levels from a writer that is not (Pool.reclaimLocked).
	busy uint32

	// cBusy, if set, is the C probes' mark of the thread that writes this
	// hierarchy's bins in place (its in_direct, cshim/lib/direct.h): 1 from
	// the probe's start to its end, stored before the probe loads the
	// epoch. A reduction reclaims the writer's bins only when both marks
	// are 0 (Pool.PinForC).
	cBusy *int32

	// Publish, if set, is called by the writer's refills of a surviving
	// pool, under the pool's mutex: the measurement copies its counts into
	// the mapping there.
	Publish func()
}

// Open reports whether records at depth of class c are kept, in the view of
// the last Sync.
func (h *Hierarchy) Open(depth int, c Class) bool {
	return depth < h.limit(c) && h.ClassClosed&(1<<c) == 0
}

// limit returns the depth limit of class c in the view of the last Sync.
func (h *Hierarchy) limit(c Class) int { return *h.limitOf(c) }

// limitOf returns where the view of the last Sync keeps the depth limit of
// class c.
func (h *Hierarchy) limitOf(c Class) *int {
	switch classGroup(c) {
	case groupParadigm:
		return &h.PLimit
	case groupComm:
		return &h.MLimit
	}
	return &h.Limit
}

// Begin begins a record of the probes' direct path (see Level.Room): it
// marks the writer busy, then reports whether the pool's epoch is still
// epoch, the caller's view of the closed set. That view must be no newer
// than the hierarchy's (the caller syncs it, after it took epoch), so an
// unchanged epoch means the hierarchy's is current too, and its levels'
// current bins are the writer's until it ends the record with
// Level.Advance or End. On false the mark is cleared already.
func (h *Hierarchy) Begin(epoch uint64) bool {
	h.markBusy()
	if h.pool.epoch.Load() != epoch {
		h.markDone()
		return false
	}
	return true
}

// End ends a record Begin began without putting one.
func (h *Hierarchy) End() { h.markDone() }

// Stale reports whether the closed set changed since the last Sync. The
// probes call it for every event: one atomic load.
func (h *Hierarchy) Stale() bool { return h.pool.epoch.Load() != h.epoch }

// Sync refreshes the writer's view of the closed set and hands back the
// current bins of levels that were closed.
func (h *Hierarchy) Sync() {
	h.pool.mu.Lock()
	h.syncLocked()
	h.mirrorDroppedLocked()
	h.pool.mu.Unlock()
}

func (h *Hierarchy) syncLocked() {
	p := h.pool
	e := p.epoch.Load()
	if e == h.epoch {
		return
	}
	h.epoch = e
	h.syncViewLocked()
	for _, row := range h.levels {
		for _, lv := range row {
			if lv != nil && lv.closed && lv.cur >= 0 {
				p.handBackLocked(lv)
				p.returnedLocked(h)
			}
		}
	}
	h.idle = false
}

func (h *Hierarchy) syncViewLocked() {
	p := h.pool
	h.Limit, h.PLimit, h.MLimit = p.limit[groupCompute], p.limit[groupParadigm], p.limit[groupComm]
	h.ClassClosed, h.Stopped, h.Final = p.classClosed, p.stopped, p.final
	if p.stopped || p.final {
		h.Limit, h.PLimit, h.MLimit = 0, 0, 0
	}
}

// Level returns the level at depth and class c, making it if needed.
func (h *Hierarchy) Level(depth int, c Class) *Level {
	if depth < len(h.levels) {
		if lv := h.levels[depth][c]; lv != nil {
			return lv
		}
	}
	return h.newLevel(depth, c)
}

func (h *Hierarchy) newLevel(depth int, c Class) *Level {
	p := h.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	for depth >= len(h.levels) {
		h.levels = append(h.levels, [NumClasses]*Level{})
	}
	lv := &Level{h: h, depth: depth, class: c, enc: encode.NewEncoder(p.tech), cur: -1, head: -1, tail: -1, entry: -1, limit: h.limitOf(c)}
	lv.mark = &lv.sink
	switch {
	case depth >= p.limit[classGroup(c)]:
		lv.closed, lv.closedBy = true, ByDepth
	case p.classClosed&(1<<c) != 0:
		lv.closed, lv.closedBy = true, ByClass
	}
	p.enterLevelLocked(lv)
	h.levels[depth][c] = lv
	return lv
}

// DropReason says why a record at depth of class c is not kept, in the view
// of the last Sync.
func (h *Hierarchy) DropReason(depth int, c Class) Reason {
	return h.dropReason(depth, h.limit(c), c)
}

// dropReason is DropReason with the class's depth limit given.
func (h *Hierarchy) dropReason(depth, limit int, c Class) Reason {
	switch {
	case h.Stopped:
		return ByFirst
	case depth >= limit && !h.Final:
		return ByDepth
	case h.ClassClosed&(1<<c) != 0:
		return ByClass
	}
	return NoBin
}

// refill seals lv's full bin and gives it a new one that starts at time t
// with region open at the level's depth, unless it was called because
// Level.Room saw a new epoch and the bin still has the room the record
// needs. It returns false, counting the record as dropped, if the level is
// closed or no bin could be had.
func (h *Hierarchy) refill(lv *Level, t uint64, open uint32, need int) bool {
	p := h.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	h.syncLocked()
	if lv.cur >= 0 && !lv.closed && len(lv.bin)-lv.pos >= need {
		return true // Level.Room saw a new epoch; the level is open and has room
	}
	if lv.cur >= 0 {
		p.sealLocked(lv)
	}
	if lv.closed || p.stopped || p.final || !p.takeLocked(lv, t) {
		switch {
		case lv.closed:
			lv.Dropped[lv.closedBy]++
		case p.stopped:
			lv.Dropped[ByFirst]++
		default:
			lv.Dropped[NoBin]++
		}
		p.mirrorDropped(lv)
		h.markDone() // no record follows
		return false
	}
	lv.pos = lv.enc.StartBin(lv.bin, t, open)
	*lv.mark = uint32(lv.pos) // after the bin's header: a reader takes the bin from here
	h.mirrorDroppedLocked()
	if h.Publish != nil && p.surv != nil {
		h.Publish()
	}
	return true
}

func (h *Hierarchy) advanceWindowLocked(t uint64, seq uint32) {
	if !h.windowed || t > h.windowTime || (t == h.windowTime && seq > h.windowSeq) {
		h.windowed, h.windowTime, h.windowSeq = true, t, seq
		if s := h.pool.surv; s != nil {
			if e := s.Loc(h.ID); e != nil {
				e.WindowTime, e.WindowSeq, e.Windowed = t, uint64(seq), 1
			}
		}
	}
}

// Window returns the key (time, seq) of the newest record lost to
// PolicyLast in this hierarchy; ok is false if none was.
func (h *Hierarchy) Window() (t uint64, seq uint32, ok bool) {
	h.pool.mu.Lock()
	defer h.pool.mu.Unlock()
	return h.windowTime, h.windowSeq, h.windowed
}

// Levels calls f for every level made, by depth then class. Call it after
// Finalize, or from the writer.
func (h *Hierarchy) Levels(f func(lv *Level)) {
	h.pool.mu.Lock()
	levels := h.levels
	h.pool.mu.Unlock()
	for _, row := range levels {
		for _, lv := range row {
			if lv != nil {
				f(lv)
			}
		}
	}
}

// Written returns the records put into bins of the level so far (the
// current bin's only after Finalize).
func (lv *Level) Written() uint64 {
	lv.h.pool.mu.Lock()
	defer lv.h.pool.mu.Unlock()
	return lv.written
}

// Revoked returns the records removed from the level's bins, by reason.
func (lv *Level) Revoked() [NumReasons]uint64 {
	lv.h.pool.mu.Lock()
	defer lv.h.pool.mu.Unlock()
	return lv.revoked
}

// Closed reports whether the level was closed and why.
func (lv *Level) Closed() (Reason, bool) {
	lv.h.pool.mu.Lock()
	defer lv.h.pool.mu.Unlock()
	return lv.closedBy, lv.closed
}

// Bins calls f with the bytes and record count of each sealed bin of the
// level, oldest first. After Finalize these are all the level's records.
func (lv *Level) Bins(f func(data []byte, records uint32)) {
	p := lv.h.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	for b := lv.head; b >= 0; b = p.meta[b].next {
		m := &p.meta[b]
		f(p.binBytes(b)[:m.used], m.records)
	}
}

// Current calls f with the level's current bin as it stands, its complete
// records only, when it has one and the pool was not finalized (then
// Bins has it): with Bins, what a reader of a live measurement reads. Its
// writer is expected to be still (the collective end of an MPI run reads
// it from the thread inside MPI_Finalize); a record it is writing now is
// left out.
func (lv *Level) Current(f func(data []byte, records uint32)) {
	p := lv.h.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final || lv.cur < 0 {
		return
	}
	if n, end := p.completeLocked(lv); n > 0 {
		f(lv.bin[:end], n)
	}
}

// Release hands the writer's current bins to the pool, for a writer that
// will not record for a long time or ever again (a goroutine that is done,
// a thread about to wait): it seals those of open levels, so that a
// reduction can revoke them without waiting for it, and hands back those of
// closed levels. The writer may record again later; its levels then take
// new bins.
func (h *Hierarchy) Release() {
	p := h.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	h.syncLocked()
	h.mirrorDroppedLocked()
	for _, row := range h.levels {
		for _, lv := range row {
			switch {
			case lv == nil || lv.cur < 0:
			case lv.n == 0:
				p.freeLocked(lv.cur, lv)
				lv.cur, lv.bin, lv.pos, lv.n = -1, nil, 0, 0
			default:
				p.sealLocked(lv)
			}
		}
	}
}
