package buffer

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/survive"
)

// Limits of the configuration.
const (
	MinBinSize = 256     // a bin holds at least a header and the largest record
	MaxBinSize = 1 << 24 // larger bins make reductions too coarse to be useful
	MinBins    = 2
)

// Config sizes a Pool.
type Config struct {
	Size       int               // bytes in all, allocated once
	BinSize    int               // bytes per bin
	Policy     Policy            // what a full buffer sheds
	ClassOrder []Class           // PolicyClass: least important first; nil = DefaultClassOrder
	Techniques encode.Techniques // how records are encoded

	// Mapping, when set, holds the bins and their bookkeeping in a file
	// mapping that outlives the process (survive.go); Size and BinSize
	// must match its layout.
	Mapping *survive.Mapping
}

// Pool is the fixed allocation, cut into bins, shared by all hierarchies of
// one measurement.
type Pool struct {
	epoch  atomic.Uint64 // bumped on every change of the closed set
	frozen atomic.Bool   // Freeze was called: no more records

	mem     []byte
	descs   []survive.BinDesc // per bin: owner, chain position, fill mark
	surv    *survive.Mapping  // nil unless the buffer must survive the process
	binSize int
	policy  Policy
	order   []Class
	tech    encode.Techniques

	mu          sync.Mutex
	free        []int32
	meta        []binMeta
	binsAtDepth [numGroups][]int // bins in use per class group and depth
	hier        []*Hierarchy
	limit       [numGroups]int // per class group: depths >= limit are closed
	classClosed uint8          // bit c: class c is closed
	stopped     bool           // PolicyFirst: full, recording stopped
	final       bool
	oldest      []int32 // PolicyLast: sealed bins, a min-heap on their last record's key
	reductions  []Reduction
	peakUsed    int
	pending     int  // current bins of closed levels their owners still hold
	coming      int  // those of pending whose owners are not idle: bins on their way back
	noReclaim   bool // some writer puts records without a busy mark
	cWriters    bool // C probes write some bins in place (PinForC)
	waitLimit   time.Duration
	waits       WaitStats
	dry         Dry // the first time the pool ran dry
}

// Dry describes the pool at the first moment a writer found it empty.
// Current counts the bins that were some level's current bin, partly
// filled: when they are three quarters of the pool or more, the buffer ran dry for want of
// bins, one per location and depth, not of bytes (Starved), and smaller
// bins would have kept the events.
type Dry struct {
	Happened bool
	Bins     int // bins in the pool
	Current  int // of them, current bins of open levels
	Levels   int // levels (location × depth × class) then
}

// Starved reports whether three quarters of the pool or more were current
// bins when it ran dry: the number of levels, not the events' bytes,
// exhausted it.
func (d Dry) Starved() bool { return d.Happened && 4*d.Current >= 3*d.Bins }

// FirstDry returns the pool's state the first time it ran dry.
func (p *Pool) FirstDry() Dry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dry
}

// Levels returns the number of levels of all hierarchies: one per
// location, calling depth and event class recorded at.
func (p *Pool) Levels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, _ := p.levelsLocked()
	return n
}

// levelsLocked counts the levels of all hierarchies, and those of them
// that hold a current bin.
func (p *Pool) levelsLocked() (levels, current int) {
	for _, h := range p.hier {
		for _, row := range h.levels {
			for _, lv := range row {
				if lv == nil {
					continue
				}
				levels++
				if lv.cur >= 0 {
					current++
				}
			}
		}
	}
	return levels, current
}

// noteDryLocked records the pool's state the first time it runs dry.
func (p *Pool) noteDryLocked() {
	if p.dry.Happened {
		return
	}
	d := Dry{Happened: true, Bins: len(p.meta)}
	d.Levels, d.Current = p.levelsLocked()
	p.dry = d
}

// DefaultWaitLimit is how long a take waits at most for the bins of a
// reduction that are on their way back before it counts their owners as
// idle, where bins cannot be reclaimed (see the package's doc). Owners that
// probe hand them back within microseconds, or within a few time slices of
// the scheduler when there are more of them than cores; owners that sleep
// in a barrier or a receive do not, and the wait is paid once for each time
// they fall idle, not once per event.
const DefaultWaitLimit = 200 * time.Millisecond

// BusyWaitLimit is how long a take waits at most for a writer that is in
// the middle of a record to finish it, so that its bins can be reclaimed.
// A record takes nanoseconds and never blocks, so only a thread the system
// does not run waits this long; the bound is there so that a writer that
// never finished a record (a bug) cannot stop the others for good.
const BusyWaitLimit = 10 * time.Second

// WaitStats counts the takes that waited for bins on their way back.
type WaitStats struct {
	Waits     uint64        // takes that waited
	TimedOut  uint64        // of those, the ones that gave up on idle owners
	Total     time.Duration // time spent waiting, in all
	Longest   time.Duration // the longest wait
	Reclaimed uint64        // bins reclaimed from writers that had not handed them back
}

type binMeta struct {
	next     int32
	used     int32
	records  uint32
	level    *Level
	lastTime uint64 // PolicyLast: key of the bin's last record
	lastSeq  uint32
}

// NewPool allocates the buffer. The memory is touched only as bins are used.
func NewPool(c Config) (*Pool, error) {
	prepareFence()
	if c.BinSize < MinBinSize || c.BinSize > MaxBinSize {
		return nil, fmt.Errorf("bin size %d out of range [%d, %d]", c.BinSize, MinBinSize, MaxBinSize)
	}
	if c.Size/c.BinSize < MinBins {
		return nil, fmt.Errorf("buffer size %d holds fewer than %d bins of %d bytes", c.Size, MinBins, c.BinSize)
	}
	if !c.Techniques.Valid() {
		return nil, fmt.Errorf("invalid encoding techniques %v", c.Techniques)
	}
	if c.Policy > PolicyLast {
		return nil, fmt.Errorf("invalid reduction policy %v", c.Policy)
	}
	order := c.ClassOrder
	if order == nil {
		order = DefaultClassOrder
	}
	for i, cl := range order {
		if cl >= NumClasses || cl == ClassRegion {
			return nil, fmt.Errorf("class order: %v cannot be closed by class (enter/leave falls back to depth)", cl)
		}
		for _, prev := range order[:i] {
			if prev == cl {
				return nil, fmt.Errorf("class order: %v listed twice", cl)
			}
		}
	}
	n := c.Size / c.BinSize
	mem, descs, err := poolMemory(c, n)
	if err != nil {
		return nil, err
	}
	p := &Pool{
		mem:     mem,
		descs:   descs,
		surv:    c.Mapping,
		binSize: c.BinSize,
		policy:  c.Policy,
		order:   append([]Class(nil), order...),
		tech:    c.Techniques,
		free:    make([]int32, n),
		meta:    make([]binMeta, n),
		limit:   [numGroups]int{math.MaxInt32, math.MaxInt32, math.MaxInt32},

		waitLimit: DefaultWaitLimit,
	}
	// Hand out low indices first: the memory they cover is touched first.
	for i := range p.free {
		p.free[i] = int32(n - 1 - i)
	}
	if c.Policy == PolicyLast {
		p.oldest = make([]int32, 0, n)
	}
	if c.Mapping != nil {
		// The mapping goes with the pool: nothing stores into it once
		// the pool is unreachable.
		runtime.SetFinalizer(p, func(p *Pool) { p.surv.Unmap() })
	}
	return p, nil
}

// Bins returns the number of bins; BinSize the size of one.
func (p *Pool) Bins() int    { return len(p.meta) }
func (p *Pool) BinSize() int { return p.binSize }

// Policy returns the reduction policy.
func (p *Pool) Policy() Policy { return p.policy }

// Techniques returns the encoding the pool's levels use.
func (p *Pool) Techniques() encode.Techniques { return p.tech }

// Epoch returns the current epoch; it changes whenever the closed set does.
func (p *Pool) Epoch() uint64 { return p.epoch.Load() }

// NewHierarchy makes the hierarchy of a new location.
func (p *Pool) NewHierarchy() *Hierarchy {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := &Hierarchy{pool: p, ID: len(p.hier)}
	h.syncViewLocked()
	p.hier = append(p.hier, h)
	return h
}

// binBytes returns bin b's memory, capped so appends cannot spill over.
func (p *Pool) binBytes(b int32) []byte {
	lo := int(b) * p.binSize
	return p.mem[lo : lo+p.binSize : lo+p.binSize]
}

// SetWaitLimit sets how long a take waits at most for bins on their way
// back where they cannot be reclaimed (DefaultWaitLimit unless set); 0
// makes it not wait at all.
func (p *Pool) SetWaitLimit(d time.Duration) {
	p.mu.Lock()
	p.waitLimit = max(d, 0)
	p.mu.Unlock()
}

// Waits returns the statistics of the takes that waited.
func (p *Pool) Waits() WaitStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waits
}

// takeLocked gives lv a free bin, reducing if the pool is empty. It returns
// false if no bin could be had: lv was closed meanwhile, recording stopped,
// or the pool was finalized with none free. While the bins of a reduction
// are on their way back it reclaims them from their owners, or waits for
// them with the mutex released, rather than close another level (see the
// package's doc).
func (p *Pool) takeLocked(lv *Level, t uint64) bool {
	var start time.Time
	for spins := 0; len(p.free) == 0 && !lv.closed && !p.stopped && !p.final; {
		if p.reclaimLocked() {
			continue
		}
		if p.coming == 0 {
			p.reduceLocked(lv.h, t)
			lv.h.syncLocked() // the reduction may have closed lv itself
			if len(p.free) == 0 && p.coming == 0 && !p.reclaimLocked() {
				break // nothing was left to reduce
			}
			continue
		}
		limit := p.waitLimit
		if !p.noReclaim && !p.cWriters {
			// Every owner of a bin on its way back is in the middle of a
			// record: it will finish it, and its bins be reclaimed. A C
			// probe may be interrupted by a signal handler that runs long,
			// so a pool with C writers waits no longer than the limit.
			limit = BusyWaitLimit
		}
		if start.IsZero() {
			start = time.Now()
			p.waits.Waits++
		} else if time.Since(start) >= limit || p.frozen.Load() {
			// The owners sleep, or will not probe again: their bins
			// come back when they do, but no take waits for them.
			p.idleLocked()
			p.waits.TimedOut++
			continue
		}
		p.mu.Unlock()
		if spins++; spins < 16 {
			runtime.Gosched()
		} else {
			time.Sleep(min(time.Duration(spins-15)*20*time.Microsecond, time.Millisecond))
		}
		p.mu.Lock()
		lv.h.syncLocked() // hand back ours, if a reduction closed them meanwhile
	}
	if !start.IsZero() {
		w := time.Since(start)
		p.waits.Total += w
		p.waits.Longest = max(p.waits.Longest, w)
	}
	if lv.closed || len(p.free) == 0 {
		return false
	}
	b := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.meta[b] = binMeta{next: -1, level: lv}
	p.claimLocked(b, lv)
	p.countDepthLocked(lv, +1)
	if used := len(p.meta) - len(p.free); used > p.peakUsed {
		p.peakUsed = used
	}
	lv.cur = b
	lv.bin = p.binBytes(b)
	lv.n = 0
	return true
}

func (p *Pool) countDepthLocked(lv *Level, delta int) {
	at := &p.binsAtDepth[classGroup(lv.class)]
	for lv.depth >= len(*at) {
		*at = append(*at, 0)
	}
	(*at)[lv.depth] += delta
}

// sealLocked closes lv's current bin and links it at the end of its chain.
func (p *Pool) sealLocked(lv *Level) {
	b := lv.cur
	m := &p.meta[b]
	m.used = int32(lv.pos)
	m.records = lv.n
	m.lastTime = lv.enc.Time()
	m.lastSeq = lv.enc.LastSeq()
	lv.written += uint64(lv.n)
	if lv.tail < 0 {
		lv.head = b
	} else {
		p.meta[lv.tail].next = b
	}
	lv.tail = b
	lv.sealed++
	if p.policy == PolicyLast {
		p.pushOldestLocked(b)
	}
	lv.cur, lv.bin, lv.pos, lv.n = -1, nil, 0, 0
}

// freeLocked returns bin b of level lv to the pool.
func (p *Pool) freeLocked(b int32, lv *Level) {
	p.descs[b].Level = 0 // first: from here on a reader skips the bin
	p.meta[b].level = nil
	p.free = append(p.free, b)
	p.countDepthLocked(lv, -1)
}

// revokeChainLocked frees every sealed bin of lv and counts its records.
func (p *Pool) revokeChainLocked(lv *Level, why Reason) (bins int, records uint64) {
	for b := lv.head; b >= 0; {
		next := p.meta[b].next
		records += uint64(p.meta[b].records)
		p.freeLocked(b, lv)
		bins++
		b = next
	}
	lv.head, lv.tail, lv.sealed = -1, -1, 0
	lv.revoked[why] += records
	p.mirrorLocked(lv)
	return bins, records
}

// closeLocked marks lv closed and revokes its sealed bins. Its current bin
// is its owner's: handed back at once if the owner is the one reducing
// (trigger), else when the owner next syncs. It returns the bins and
// records freed at once.
func (p *Pool) closeLocked(lv *Level, why Reason, trigger *Hierarchy) (int, uint64) {
	bins, records := 0, uint64(0)
	if !lv.closed {
		lv.closed, lv.closedBy = true, why
		p.mirrorLocked(lv)
		if lv.cur >= 0 {
			if lv.h == trigger {
				bins, records = 1, uint64(lv.n)
				p.handBackLocked(lv)
			} else {
				p.pending++
				lv.h.pending++
				if !lv.h.idle {
					p.coming++
				}
			}
		}
	}
	sb, sr := p.revokeChainLocked(lv, why)
	return bins + sb, records + sr
}

// handBackLocked returns the current bin of a closed level to the pool.
func (p *Pool) handBackLocked(lv *Level) {
	lv.written += uint64(lv.n)
	lv.revoked[lv.closedBy] += uint64(lv.n)
	p.mirrorLocked(lv)
	p.freeLocked(lv.cur, lv)
	lv.cur, lv.bin, lv.pos, lv.n = -1, nil, 0, 0
}

// returnedLocked accounts for a current bin of a closed level that h, its
// owner, handed back.
func (p *Pool) returnedLocked(h *Hierarchy) {
	p.pending--
	h.pending--
	if !h.idle {
		p.coming--
	}
}

// reclaimLocked takes back the current bins of closed levels from the
// writers that hold them and are not in the middle of a record, as their
// own sync would, and reports whether it took any. A closure bumped the
// epoch before: a writer that begins a record after the fence below loads
// the new epoch in Level.Room and syncs under the mutex before it touches
// the level; one whose mark the fence shows busy is left alone until it
// has ended its record.
func (p *Pool) reclaimLocked() bool {
	if p.pending == 0 || p.noReclaim {
		return false
	}
	if !fence() {
		p.noReclaim = true
		return false
	}
	n := 0
	for _, h := range p.hier {
		if h.pending == 0 || h.writing() {
			continue
		}
		for _, row := range h.levels {
			for _, lv := range row {
				if lv != nil && lv.closed && lv.cur >= 0 {
					p.handBackLocked(lv)
					p.returnedLocked(h)
					n++
				}
			}
		}
	}
	p.waits.Reclaimed += uint64(n)
	return n > 0
}

// idleLocked counts the owners of the bins on their way back as idle: a
// take waited for them long enough. Their bins still come back when they
// probe, but no take waits for them until they have.
func (p *Pool) idleLocked() {
	for _, h := range p.hier {
		if h.pending > 0 && !h.idle {
			h.idle = true
			p.coming -= h.pending
		}
	}
}

// publishLocked makes a change of the closed set visible to the probes.
func (p *Pool) publishLocked() { p.epoch.Add(1) }

// reduceLocked frees bins according to the policy, for trigger, the
// hierarchy that found the pool empty, and no more than it must: it stops
// as soon as a bin is free or on its way back. It returns false if nothing
// could be freed.
func (p *Pool) reduceLocked(trigger *Hierarchy, t uint64) bool {
	p.noteDryLocked()
	switch p.policy {
	case PolicyFirst:
		if !p.stopped {
			p.stopped = true
			p.reductions = append(p.reductions, Reduction{Reason: ByFirst, Time: t, Steps: 1})
			p.noteReductionLocked()
			p.publishLocked()
		}
		return false
	case PolicyLast:
		return p.revokeOldestLocked(t)
	}
	if p.coming > 0 {
		return true // bins are on their way back: close nothing more yet
	}
	if p.policy == PolicyClass {
		for _, c := range p.order {
			if p.classClosed&(1<<c) != 0 {
				continue
			}
			p.closeClassLocked(c, t, trigger)
			if len(p.free) > 0 || p.coming > 0 {
				return true
			}
		}
	}
	return p.closeDeepestLocked(t, trigger)
}

// CloseFrom closes calling depth d and every deeper one, of every class,
// at reduced time t: asked for from outside the probes.
func (p *Pool) CloseFrom(d int, t uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final {
		return
	}
	if d < max(p.limit[groupCompute], p.limit[groupParadigm], p.limit[groupComm]) {
		p.closeDepthLocked(groupAll, d, t, nil)
	}
}

// closeDeepestLocked closes the deepest open calling depth that holds bins
// of a compute class (enter/leave, metric); only when none is left below
// depth 2 does it close the deepest of the paradigm regions' enters and
// leaves, and only when none of those is left either the deepest of the
// messages and collectives, so that these are kept longest. It
// never closes depth 1 or 0: when they are all that is left, it stops
// recording, keeping what the buffer holds (as PolicyFirst does).
// If that frees nothing now because its bins are all current bins still held
// by their owners, those count as freed: the take that needed a bin
// reclaims them or waits for them instead of closing more. It never closes
// a depth whose closure would free nothing, now or later, because all it
// holds are current bins of idle owners (idleLocked): it closes the deepest
// one that frees something, or nothing, and returns false.
func (p *Pool) closeDeepestLocked(t uint64, trigger *Hierarchy) bool {
	for {
		g, d, held := -1, -1, false
		for _, group := range [...]int{groupCompute, groupParadigm, groupComm} {
			at := p.binsAtDepth[group]
			for i := min(p.limit[group], len(at)) - 1; i >= 2 && d < 0; i-- {
				if at[i] > 0 {
					held = true
					if p.freesLocked(group, i, trigger) {
						g, d = group, i
					}
				}
			}
			if d >= 0 {
				break
			}
		}
		if p.policy == PolicyClass && d >= 0 {
			// The class policy ranked the classes itself: its depth
			// fallback closes every class at the deepest depth in use
			// that frees something.
			for group, at := range p.binsAtDepth {
				for i := min(p.limit[group], len(at)) - 1; i > d; i-- {
					if at[i] > 0 && p.freesLocked(groupAll, i, trigger) {
						d = i
					}
				}
			}
			g = groupAll
		}
		if d < 0 && held {
			return false // what is left comes back when its idle owners probe
		}
		if d < 0 {
			top := -1
			for group, at := range p.binsAtDepth {
				for i := min(p.limit[group], len(at)) - 1; i > top; i-- {
					if at[i] > 0 {
						top = i
					}
				}
			}
			if top < 0 {
				return false
			}
			// Closing the top level would discard the whole trace; keep
			// what is there and stop recording instead.
			p.stopped = true
			p.reductions = append(p.reductions, Reduction{Reason: ByFirst, Depth: top, Time: t, Steps: 1})
			p.noteReductionLocked()
			p.publishLocked()
			return false
		}
		p.closeDepthLocked(g, d, t, trigger)
		if len(p.free) > 0 || p.coming > 0 {
			return true
		}
	}
}

// freesLocked reports whether closing depth d and every deeper one of the
// classes of group g (groupAll: of every class) would free a bin, now or
// when its owner syncs: a sealed bin, a current bin of trigger, or one of
// an owner that is not idle.
func (p *Pool) freesLocked(g, d int, trigger *Hierarchy) bool {
	for _, h := range p.hier {
		for depth := d; depth < len(h.levels); depth++ {
			for _, lv := range h.levels[depth] {
				if lv == nil || lv.closed || (g != groupAll && classGroup(lv.class) != g) {
					continue
				}
				if lv.sealed > 0 || (lv.cur >= 0 && (h == trigger || !h.idle)) {
					return true
				}
			}
		}
	}
	return false
}

// closeDepthLocked closes calling depth d and every deeper one of the
// classes of group g (groupAll: of every class) in every hierarchy, at
// reduced time t, for trigger as closeLocked says (nil when no location
// asked). The reduction's Class is ClassParadigm for the communication
// group, else ClassRegion.
func (p *Pool) closeDepthLocked(g, d int, t uint64, trigger *Hierarchy) {
	r := Reduction{Reason: ByDepth, Depth: d, Time: t, Steps: 1}
	before := p.pending
	switch g {
	case groupAll:
		for i := range p.limit {
			p.limit[i] = min(p.limit[i], d)
		}
	case groupParadigm:
		r.Class = ClassParadigm
		p.limit[g] = d
	case groupComm:
		r.Class = ClassMessage
		p.limit[g] = d
	default:
		p.limit[g] = d
	}
	for _, h := range p.hier {
		for depth := d; depth < len(h.levels); depth++ {
			for _, lv := range h.levels[depth] {
				if lv != nil && (g == groupAll || classGroup(lv.class) == g) && !lv.closed {
					bins, recs := p.closeLocked(lv, ByDepth, trigger)
					r.Bins += bins
					r.Records += recs
				}
			}
		}
	}
	r.Pending = p.pending - before
	p.reductions = append(p.reductions, r)
	p.noteReductionLocked()
	p.publishLocked()
}

// closeClassLocked closes event class c at every depth of every hierarchy.
func (p *Pool) closeClassLocked(c Class, t uint64, trigger *Hierarchy) {
	p.classClosed |= 1 << c
	r := Reduction{Reason: ByClass, Class: c, Time: t, Steps: 1}
	before := p.pending
	for _, h := range p.hier {
		for _, row := range h.levels {
			if lv := row[c]; lv != nil {
				bins, recs := p.closeLocked(lv, ByClass, trigger)
				r.Bins += bins
				r.Records += recs
			}
		}
	}
	r.Pending = p.pending - before
	p.reductions = append(p.reductions, r)
	p.noteReductionLocked()
	p.publishLocked()
}

// revokeOldestLocked frees the sealed bin whose newest record is the
// oldest, whatever level holds it: that keeps the window of complete
// records as long as it can be. It is the head of its level's chain, since
// a level's bins hold ever newer records.
func (p *Pool) revokeOldestLocked(t uint64) bool {
	if len(p.oldest) == 0 {
		return false
	}
	b := p.popOldestLocked()
	m := p.meta[b]
	lv := m.level
	if lv.head != b {
		panic("buffer: oldest sealed bin is not the head of its chain")
	}
	lv.head = m.next
	if lv.head < 0 {
		lv.tail = -1
	}
	lv.sealed--
	lv.revoked[ByLast] += uint64(m.records)
	p.mirrorLocked(lv)
	lv.h.advanceWindowLocked(m.lastTime, m.lastSeq)
	p.freeLocked(b, lv)
	if n := len(p.reductions); n > 0 && p.reductions[n-1].Reason == ByLast {
		r := &p.reductions[n-1]
		r.Steps++
		r.Bins++
		r.Records += uint64(m.records)
		r.Time = t
	} else {
		p.reductions = append(p.reductions, Reduction{Reason: ByLast, Time: t, Steps: 1, Bins: 1, Records: uint64(m.records)})
	}
	p.noteReductionLocked()
	return true
}

func (p *Pool) olderLocked(a, b int32) bool {
	ma, mb := &p.meta[a], &p.meta[b]
	if ma.lastTime != mb.lastTime {
		return ma.lastTime < mb.lastTime
	}
	return ma.lastSeq < mb.lastSeq
}

func (p *Pool) pushOldestLocked(b int32) {
	h := append(p.oldest, b)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !p.olderLocked(h[i], h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	p.oldest = h
}

func (p *Pool) popOldestLocked() int32 {
	h := p.oldest
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && p.olderLocked(h[l], h[m]) {
			m = l
		}
		if r < len(h) && p.olderLocked(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	p.oldest = h
	return top
}

// Reductions returns the reduction steps so far.
func (p *Pool) Reductions() []Reduction {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Reduction(nil), p.reductions...)
}

// Usage reports the bins in use now and at the most.
func (p *Pool) Usage() (used, peak int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.meta) - len(p.free), p.peakUsed
}

// Notify makes every hierarchy's writer sync at its next probe, for a
// change of the measurement's own that the probes must pick up.
func (p *Pool) Notify() {
	p.mu.Lock()
	p.publishLocked()
	p.mu.Unlock()
}

// Freeze tells the probes to stop: they see a new epoch, then Frozen, and
// return without touching anything. Bins are still handed out, to a probe
// that was under way and to Close, which leaves the regions still open;
// Finalize follows. Once it returns, a writer's Busy is reliable: a probe
// that began before the freeze is busy until it ends its record, one that
// begins after sees the new epoch (the fence orders the writers' plain busy
// marks, as for a reclaim).
func (p *Pool) Freeze() {
	p.mu.Lock()
	p.frozen.Store(true)
	p.publishLocked()
	p.mu.Unlock()
	fence()
}

// Frozen reports whether Freeze was called. Probes check it without a lock.
func (p *Pool) Frozen() bool { return p.frozen.Load() }

// Finalize seals every current bin (or hands back those of closed levels)
// and stops the pool: later probes drop their events. The writers must have
// stopped putting records; Finalize reads their current bins. A writer
// still inside a record (Busy after Freeze: one stuck in the middle of a
// probe) keeps its bins where it writes: they are sealed with the records
// complete now, and the rest of what it writes there is left out, but it
// never writes through a bin taken from it.
func (p *Pool) Finalize() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final {
		return
	}
	for _, h := range p.hier {
		h.syncLocked()
		busy := h.Busy()
		for _, row := range h.levels {
			for _, lv := range row {
				if lv != nil && lv.cur >= 0 {
					bin, pos := lv.bin, lv.pos
					p.recountLocked(lv)
					p.sealLocked(lv)
					if busy {
						lv.bin, lv.pos = bin, pos
					}
				}
			}
		}
		if h.windowed {
			p.countBeforeWindowLocked(h)
		}
	}
	p.final = true
	p.publishLocked()
}

// recountLocked sets a current bin's record count and length from its
// bytes: the records that decode, up to the last complete one. Its writer
// updates the count after the bytes, so if Finalize ran while a probe was
// under way (a signal's Close), they could disagree.
func (p *Pool) recountLocked(lv *Level) {
	lv.n, lv.pos = p.completeLocked(lv)
}

// completeLocked returns how many records of a current bin decode, up to
// the last complete one, and where that ends.
func (p *Pool) completeLocked(lv *Level) (records uint32, end int) {
	pos := min(lv.pos, len(lv.bin))
	d := encode.NewDecoder(p.tech)
	if d.Reset(lv.bin[:pos]) != nil {
		return 0, 0
	}
	var r encode.Record
	n, at := uint32(0), d.Offset()
	for d.Next(&r) {
		n++
		at = d.Offset()
	}
	return n, at
}

// countBeforeWindowLocked counts, as removed by PolicyLast, the records of
// h's kept bins that are not newer than its window start: their neighbours
// in other levels may be gone, so readers skip them.
func (p *Pool) countBeforeWindowLocked(h *Hierarchy) {
	d := encode.NewDecoder(p.tech)
	var r encode.Record
	for _, row := range h.levels {
		for _, lv := range row {
			if lv == nil {
				continue
			}
		chain:
			for b := lv.head; b >= 0; b = p.meta[b].next {
				if d.Reset(p.binBytes(b)[:p.meta[b].used]) != nil {
					break
				}
				for d.Next(&r) {
					if r.Time > h.windowTime || (r.Time == h.windowTime && r.Seq > h.windowSeq) {
						break chain
					}
					lv.revoked[ByLast]++
				}
			}
		}
	}
}

// PinForC pins the pool, its memory and the bins' descriptors for the C
// shim's probes, which read the epoch and write into bins and fill marks in
// place for hierarchy h; it returns the epoch's word.
//
// busy is the C probes' mark of h's writer (see Hierarchy.cBusy): with it,
// a reduction reclaims the writer's current bins of closed levels while
// the mark is 0, as it does a Go writer's. Without it (nil), or where the
// C mark cannot be ordered (cMarks), no bin of the pool is reclaimed from
// its owner from then on: reductions wait for them and then count their
// owners idle, as DefaultWaitLimit says.
func (p *Pool) PinForC(pin *runtime.Pinner, h *Hierarchy, busy *int32) unsafe.Pointer {
	p.mu.Lock()
	p.cWriters = true
	if busy == nil || !cMarks {
		p.noReclaim = true
	} else {
		h.cBusy = busy
	}
	p.mu.Unlock()
	pin.Pin(p)
	if len(p.mem) > 0 {
		pin.Pin(&p.mem[0])
	}
	if len(p.descs) > 0 {
		pin.Pin(&p.descs[0]) // the levels' fill marks, which they store through
	}
	return unsafe.Pointer(&p.epoch)
}
