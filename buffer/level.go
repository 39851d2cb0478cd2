package buffer

import (
	"unsafe"

	"github.com/hmbtrace/hmbtrace/encode"
)

// Class is an event class: the second dimension of the hierarchy. It is
// encode's, which tracefile shares.
type Class = encode.Class

// The event classes, in the order they are stored.
const (
	ClassRegion     = encode.ClassRegion
	ClassMessage    = encode.ClassMessage
	ClassMetric     = encode.ClassMetric
	ClassCollective = encode.ClassCollective
	ClassParadigm   = encode.ClassParadigm
	NumClasses      = encode.NumClasses
)

// ParseClass reads a class name: enter/leave (or region), message, metric,
// collective, paradigm.
func ParseClass(s string) (Class, error) { return encode.ParseClass(s) }

// The depth policy treats the classes in three groups: compute (enter/leave
// and metric), paradigm (the enters and leaves of MPI and OpenMP regions)
// and communication (messages and collectives). Each group has its own
// depth limit, lowered only when no level of the groups before it is left
// to close: a thread whose MPI calls sit deeper than another's (under an
// OpenMP parallel region) keeps its messages after the buffer shed the
// other's millions of MPI_Test calls.
const (
	groupCompute = iota
	groupParadigm
	groupComm
	numGroups
	groupAll = -1 // every group, for closeDepthLocked
)

// classGroup returns the class's group for the depth policy.
func classGroup(c Class) int {
	switch {
	case c == ClassParadigm:
		return groupParadigm
	case c.KeptLongest():
		return groupComm
	}
	return groupCompute
}

// Reason says why events were removed from a level (encode's, which
// tracefile shares).
type Reason = encode.Reason

// The reasons events are removed. Each is counted separately per level.
const (
	ByDepth    = encode.ByDepth
	ByClass    = encode.ByClass
	ByFirst    = encode.ByFirst
	ByLast     = encode.ByLast
	NoBin      = encode.NoBin
	NumReasons = encode.NumReasons
)

// Level is one cell of a location's hierarchy: the records of one calling
// depth and one event class, in a chain of bins in time order.
type Level struct {
	h     *Hierarchy
	depth int
	class Class

	// Owned by the writer; others read them only under the pool's mutex
	// after Finalize.
	bin []byte         // current bin, nil if none
	pos int            // bytes used in bin
	enc encode.Encoder // delta state of the stream
	n   uint32         // records in bin
	cur int32          // index of bin, -1 if none

	// mark is the current bin's fill mark (survive.BinDesc.Used): stored
	// after the bytes of every record, so that a reader of a mapping
	// the process left sees complete records only. It points at sink
	// until the level takes its first bin.
	mark *uint32
	sink uint32
	ords uint32 // bins taken so far: the next one's position in the chain
	// entry is the level's index in the mapping's table, -1 if none.
	entry int32

	// Dropped counts records dropped before they reached a bin, by reason.
	// Written by the writer only.
	Dropped [NumReasons]uint64

	// limit is the hierarchy's depth limit of the level's class (Limit,
	// PLimit or MLimit): Drop reads it without a switch on the class, which
	// keeps Drop small enough to inline into the probes.
	limit *int

	// Under the pool's mutex.
	head, tail int32 // chain of sealed bins, oldest first; -1 if empty
	sealed     int   // bins in the chain
	written    uint64
	revoked    [NumReasons]uint64 // records in bins revoked, by reason
	closedBy   Reason
	closed     bool
}

// Depth returns the calling depth of the level.
func (lv *Level) Depth() int { return lv.depth }

// Class returns the event class of the level.
func (lv *Level) Class() Class { return lv.class }

// The probes' direct path: Room, Tail, Encoder and Advance let a caller put
// a record with one call into the encoder, where Enter and Leave make two.
// The caller must check Room (and Refill) first, and must keep the rule of
// Enter: room for the leave after every enter. A record begun with Room
// must end with Advance, unless Refill failed.
//
// A writer that checks the closed set's epoch itself anyway (measure's
// probes do, to refresh their view of it) begins the record with
// Hierarchy.Begin instead, which marks it busy before that one check, and
// then asks the level for Free bytes, which neither marks nor loads the
// epoch again: the record ends with Advance, or with Hierarchy.End if
// it puts none.

// Room returns the bytes free in the level's current bin (0 without one).
// It begins a record: from here until Advance, or a Refill that fails, the
// writer is busy, and a reduction does not reclaim its current bins. It
// loads the epoch after the mark, and returns 0 if it changed, so that the
// caller's Refill syncs before the record is put: a bin reclaimed before
// the mark is never written (the package's doc says why both are needed).
func (lv *Level) Room() int {
	h := lv.h
	h.markBusy()
	if h.pool.epoch.Load() != h.epoch {
		return 0
	}
	return len(lv.bin) - lv.pos
}

// Free returns the bytes free in the level's current bin (0 without one),
// for a record Hierarchy.Begin began.
func (lv *Level) Free() int { return len(lv.bin) - lv.pos }

// Tail returns the free part of the current bin, between Room (or Refill,
// or Begin) and Advance only: outside, the bin may be reclaimed. It is
// made without a bounds check, as the probes' path has no room for one:
// pos never passes len(bin), whoever writes either.
func (lv *Level) Tail() []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(lv.bin)), lv.pos)), len(lv.bin)-lv.pos)
}

// Head returns the first two bytes of Tail, for the encoder's EnterFast
// and LeaveFast, under Tail's rules, for a caller that found Free (or Room)
// at least 2: a pointer with no slice to build and check.
func (lv *Level) Head() *[2]byte {
	return (*[2]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(lv.bin)), lv.pos))
}

// Encoder returns the level's encoder.
func (lv *Level) Encoder() *encode.Encoder { return &lv.enc }

// Advance accounts for a record of n bytes put into Tail, and ends it.
func (lv *Level) Advance(n int) {
	lv.pos += n
	lv.n++
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
}

// Drop counts a record of the level that the writer does not put, for the
// reason the hierarchy's view of the last Sync gives: what the probes do for
// an event of a closed level, through the level they hold, without looking
// it up again.
func (lv *Level) Drop() { lv.Dropped[lv.h.dropReason(lv.depth, *lv.limit, lv.class)]++ }

// Refill makes room for the enter or leave Room found none for: it syncs,
// keeps the current bin if Room only saw a new epoch and the record fits,
// and else gives the level a new bin starting at time t with region open
// at its depth. open is 0 before an enter (which keeps room for its leave)
// and the region left before a leave. False means the record is dropped,
// and counted. Other records have methods of their own.
func (lv *Level) Refill(t uint64, open uint32) bool {
	need := encode.MaxEnterLeaveSize
	if open == 0 {
		need = 2 * encode.MaxEnterLeaveSize
	}
	return lv.h.refill(lv, t, open, need)
}

// Enter puts an enter record; false means it was dropped (and counted).
// It keeps room in the bin for the matching leave: a level holds at most one
// open call, so that leave always fits, whatever happens to the pool. A
// caller must not put a leave for an enter that was dropped.
func (lv *Level) Enter(t uint64, seq, region uint32) bool {
	if need := 2 * encode.MaxEnterLeaveSize; lv.Room() < need && !lv.h.refill(lv, t, 0, need) {
		return false
	}
	lv.pos += lv.enc.Enter(lv.bin[lv.pos:], t, seq, region)
	lv.n++
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}

// Leave puts a leave record of the region open at the level's depth, which
// is stored only in the header of a new bin; false means it was dropped
// because the level was closed. After a kept Enter it always finds room.
func (lv *Level) Leave(t uint64, seq, open uint32) bool {
	if need := encode.MaxEnterLeaveSize; lv.Room() < need && !lv.h.refill(lv, t, open, need) {
		return false
	}
	lv.pos += lv.enc.Leave(lv.bin[lv.pos:], t, seq)
	lv.n++
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}

// Message puts a send or receive record; open is the region that owns it.
func (lv *Level) Message(k encode.Kind, t uint64, seq, open uint32, peer uint64, rank bool, tag uint32, bytes uint64) bool {
	if need := encode.MaxMessageSize; lv.Room() < need && !lv.h.refill(lv, t, open, need) {
		return false
	}
	lv.pos += lv.enc.Message(lv.bin[lv.pos:], k, t, seq, peer, rank, tag, bytes)
	lv.n++
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}

// MessageComm is Message for a message on communicator comm (0: none).
func (lv *Level) MessageComm(k encode.Kind, t uint64, seq, open uint32, peer uint64, rank bool, tag uint32, bytes uint64, comm uint32) bool {
	if need := encode.MaxMessageSize; lv.Room() < need && !lv.h.refill(lv, t, open, need) {
		return false
	}
	lv.pos += lv.enc.MessageComm(lv.bin[lv.pos:], k, t, seq, peer, rank, tag, bytes, comm)
	lv.n++
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}

// Put puts r, a record that is neither an enter nor a leave (those keep
// the level's bookkeeping: use Enter and Leave); open is the region that
// owns it. False means it was dropped, and counted, or that the encoder
// does not know its kind.
func (lv *Level) Put(r *encode.Record, open uint32) bool {
	if r.Kind == encode.KindEnter || r.Kind == encode.KindLeave {
		return false
	}
	if need := max(encode.MaxMessageSize, encode.MaxCollectiveSize); lv.Room() < need && !lv.h.refill(lv, r.Time, open, need) {
		return false
	}
	n := lv.enc.Put(lv.bin[lv.pos:], *r)
	lv.pos += n
	if n > 0 {
		lv.n++
		*lv.mark = uint32(lv.pos)
	}
	lv.h.markDone()
	return n > 0
}

// Metric puts counter values; open is the region they were read at.
func (lv *Level) Metric(t uint64, seq, open uint32, values []uint64) bool {
	if need := encode.MaxMetricSize; lv.Room() < need && !lv.h.refill(lv, t, open, need) {
		return false
	}
	lv.pos += lv.enc.Metric(lv.bin[lv.pos:], t, seq, values)
	lv.n++
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}

// EnterCollective puts the enter of a collective operation and, right
// after it (sequence number infoSeq), its root and bytes, keeping room for
// the leave as Enter does; false means both were dropped (and counted).
func (lv *Level) EnterCollective(t uint64, seq, region, infoSeq uint32, root int64, bytes uint64) bool {
	if need := 2*encode.MaxEnterLeaveSize + encode.MaxCollectiveSize; lv.Room() < need && !lv.h.refill(lv, t, 0, need) {
		lv.Dropped[lv.h.DropReason(lv.depth, lv.class)]++ // the info record goes with its enter
		return false
	}
	lv.pos += lv.enc.Enter(lv.bin[lv.pos:], t, seq, region)
	lv.pos += lv.enc.Collective(lv.bin[lv.pos:], t, infoSeq, root, bytes)
	lv.n += 2
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}

// EnterCollectiveComm is EnterCollective with the bytes received and the
// communicator (0: none).
func (lv *Level) EnterCollectiveComm(t uint64, seq, region, infoSeq uint32, root int64, sent, received uint64, comm uint32) bool {
	if need := 2*encode.MaxEnterLeaveSize + encode.MaxCollectiveSize; lv.Room() < need && !lv.h.refill(lv, t, 0, need) {
		lv.Dropped[lv.h.DropReason(lv.depth, lv.class)]++ // the info record goes with its enter
		return false
	}
	lv.pos += lv.enc.Enter(lv.bin[lv.pos:], t, seq, region)
	lv.pos += lv.enc.CollectiveComm(lv.bin[lv.pos:], t, infoSeq, root, sent, received, comm)
	lv.n += 2
	*lv.mark = uint32(lv.pos)
	lv.h.markDone()
	return true
}
