package encode

import "fmt"

// MPI one-sided communication, as OTF2 records it (its Rma* events, in the
// same order). The kinds take the values 20..39.
const (
	KindRmaWinCreate          Kind = 20 // a window was created: Win
	KindRmaWinDestroy         Kind = 21 // a window is freed: Win
	KindRmaCollectiveBegin    Kind = 22 // a collective RMA operation starts (fence, window creation)
	KindRmaCollectiveEnd      Kind = 23 // it ends: Win, Aux (collective op), Level, Remote (root), Bytes, Received
	KindRmaGroupSync          Kind = 24 // a synchronisation with a group (post, start, complete, wait): Win, Level, Group
	KindRmaRequestLock        Kind = 25 // a lock is requested: Win, Remote (-1: all), Request (lock id), Aux (lock type)
	KindRmaAcquireLock        Kind = 26 // a lock is acquired: as KindRmaRequestLock
	KindRmaTryLock            Kind = 27 // a lock was tried for, not acquired: as KindRmaRequestLock
	KindRmaReleaseLock        Kind = 28 // a lock is released: Win, Remote, Request (lock id)
	KindRmaSync               Kind = 29 // a memory synchronisation: Win, Remote, Aux (sync type)
	KindRmaWaitChange         Kind = 30 // a wait for a change of the window: Win
	KindRmaPut                Kind = 31 // Win, Remote, Bytes, Request (matching id)
	KindRmaGet                Kind = 32 // Win, Remote, Bytes, Request
	KindRmaAtomic             Kind = 33 // Win, Remote, Aux (atomic type), Bytes (sent), Received, Request
	KindRmaOpCompleteBlocking Kind = 34 // Win, Request
	KindRmaOpCompleteNonBlock Kind = 35 // Win, Request
	KindRmaOpTest             Kind = 36 // Win, Request
	KindRmaOpCompleteRemote   Kind = 37 // Win, Request
	firstRma                       = KindRmaWinCreate
	lastRma                        = KindRmaOpCompleteRemote
)

// IsRma tells whether k is one of the one-sided communication kinds.
func (k Kind) IsRma() bool { return k >= firstRma && k <= lastRma }

// The fields of an RMA record, in the order they are stored after the
// token, the kind and the time. Each kind stores the fields of its mask.
const (
	rmaWin = 1 << iota
	rmaRemote
	rmaBytes
	rmaReceived
	rmaRequest
	rmaAux
	rmaLevel
	rmaGroup
)

var rmaFields = [...]uint8{
	KindRmaWinCreate - firstRma:          rmaWin,
	KindRmaWinDestroy - firstRma:         rmaWin,
	KindRmaCollectiveBegin - firstRma:    0,
	KindRmaCollectiveEnd - firstRma:      rmaWin | rmaRemote | rmaBytes | rmaReceived | rmaAux | rmaLevel,
	KindRmaGroupSync - firstRma:          rmaWin | rmaLevel | rmaGroup,
	KindRmaRequestLock - firstRma:        rmaWin | rmaRemote | rmaRequest | rmaAux,
	KindRmaAcquireLock - firstRma:        rmaWin | rmaRemote | rmaRequest | rmaAux,
	KindRmaTryLock - firstRma:            rmaWin | rmaRemote | rmaRequest | rmaAux,
	KindRmaReleaseLock - firstRma:        rmaWin | rmaRemote | rmaRequest,
	KindRmaSync - firstRma:               rmaWin | rmaRemote | rmaAux,
	KindRmaWaitChange - firstRma:         rmaWin,
	KindRmaPut - firstRma:                rmaWin | rmaRemote | rmaBytes | rmaRequest,
	KindRmaGet - firstRma:                rmaWin | rmaRemote | rmaBytes | rmaRequest,
	KindRmaAtomic - firstRma:             rmaWin | rmaRemote | rmaBytes | rmaReceived | rmaRequest | rmaAux,
	KindRmaOpCompleteBlocking - firstRma: rmaWin | rmaRequest,
	KindRmaOpCompleteNonBlock - firstRma: rmaWin | rmaRequest,
	KindRmaOpTest - firstRma:             rmaWin | rmaRequest,
	KindRmaOpCompleteRemote - firstRma:   rmaWin | rmaRequest,
}

// RmaFieldNames names the bits of an RMA kind's field mask, bit i for
// name i: the C encoder (cshim's direct path) mirrors the record through
// golayout.h, which measure's generator writes from these and RmaFields.
var RmaFieldNames = [...]string{"WIN", "REMOTE", "BYTES", "RECEIVED", "REQUEST", "AUX", "LEVEL", "GROUP"}

// RmaFields returns the mask of the fields an RMA record of kind k stores,
// in RmaFieldNames' bits, and 0 for a kind that is not RMA.
func RmaFields(k Kind) uint8 {
	if !k.IsRma() {
		return 0
	}
	return rmaFields[k-firstRma]
}

// MaxRmaSize bounds an RMA record: seq prefix, token, kind, time and the
// largest field set (an atomic's: window, target, type, two byte counts,
// matching id; a remote is a world rank, 32 bits). It fits the room
// buffer.Level.Put asks for any record, which the check below keeps so.
const MaxRmaSize = 1 + 5 + 1 + 1 + 10 + 5 + 5 + 5 + 10 + 10 + 10

var _ = [1]struct{}{}[max(0, MaxRmaSize-max(MaxMessageSize, MaxCollectiveSize))]

// Rma puts an RMA record r (r.Kind one of the KindRma* kinds) and returns
// its size; 0 for another kind. A remote below -1 or above 2^31-2 is
// stored as -1 (none): MPI ranks are ints.
func (e *Encoder) Rma(b []byte, r *Record) int {
	if !r.Kind.IsRma() {
		return 0
	}
	leb := e.tech&LEB128 != 0
	// putHead's record head with the kind between the token and the time.
	t := max(r.Time, e.time)
	n := 0
	if r.Seq != e.defaultSeq(t-e.time) {
		n = e.putSeq(b, r.Seq)
	}
	tf := e.timeField(t)
	e.time, e.next = t, r.Seq+1
	b[n], b[n+1] = TokRma, byte(r.Kind)
	n += 2
	n += putUint(b[n:], tf, 8, leb)
	m := rmaFields[r.Kind-firstRma]
	if m&rmaWin != 0 {
		n += putUint(b[n:], uint64(r.Win), 4, leb)
	}
	if m&rmaRemote != 0 {
		rem := uint64(0)
		if r.Remote >= 0 && r.Remote < 1<<31-1 {
			rem = uint64(r.Remote) + 1
		}
		n += putUint(b[n:], rem, 4, leb)
	}
	if m&rmaBytes != 0 {
		n += putUint(b[n:], r.Bytes, 8, leb)
	}
	if m&rmaReceived != 0 {
		n += putUint(b[n:], r.Received, 8, leb)
	}
	if m&rmaRequest != 0 {
		n += putUint(b[n:], r.Request, 8, leb)
	}
	if m&rmaAux != 0 {
		n += putUint(b[n:], uint64(r.Aux), 4, leb)
	}
	if m&rmaLevel != 0 {
		n += putUint(b[n:], uint64(r.Level), 4, leb)
	}
	if m&rmaGroup != 0 {
		n += putUint(b[n:], uint64(r.Group), 4, leb)
	}
	return n
}

// extended reads the kind byte and the time of a record of a family that
// shares one token (RMA, annotations): what names the family in errors,
// first..last are its kinds.
func (d *Decoder) extended(what string, first, last Kind, leb bool) (Kind, uint64, bool) {
	if d.off >= len(d.b) {
		d.fail(what + " record without its kind")
		return 0, 0, false
	}
	k := Kind(d.b[d.off])
	if k < first || k > last {
		d.fail(fmt.Sprintf("%s record of kind %d, not one of %d..%d", what, k, first, last))
		return 0, 0, false
	}
	d.off++
	t, ok := d.timeField(leb)
	return k, t, ok
}

// rma decodes the rest of an RMA record after its token: kind, time and
// fields. It returns the record's time.
func (d *Decoder) rma(r *Record, leb bool) (uint64, bool) {
	k, t, ok := d.extended("RMA", firstRma, lastRma, leb)
	if !ok {
		return 0, false
	}
	r.Kind = k
	r.Remote = -1
	m := rmaFields[k-firstRma]
	if ok && m&rmaWin != 0 {
		r.Win, ok = d.uint32Field("window", leb)
	}
	if ok && m&rmaRemote != 0 {
		var v uint32
		if v, ok = d.uint32Field("RMA target", leb); ok {
			if v > 1<<31-1 {
				d.fail(fmt.Sprintf("RMA target %d out of range", int64(v)-1))
				return 0, false
			}
			r.Remote = int64(v) - 1
		}
	}
	if ok && m&rmaBytes != 0 {
		r.Bytes, ok = d.uint(8, leb)
	}
	if ok && m&rmaReceived != 0 {
		r.Received, ok = d.uint(8, leb)
	}
	if ok && m&rmaRequest != 0 {
		r.Request, ok = d.uint(8, leb)
	}
	if ok && m&rmaAux != 0 {
		r.Aux, ok = d.uint32Field("RMA type", leb)
	}
	if ok && m&rmaLevel != 0 {
		r.Level, ok = d.uint32Field("RMA sync level", leb)
	}
	if ok && m&rmaGroup != 0 {
		r.Group, ok = d.uint32Field("RMA group", leb)
	}
	return t, ok
}

// The values of Aux and Level, numbered as OTF2 numbers them (its
// OTF2_LockType, OTF2_RmaAtomicType, OTF2_RmaSyncType, OTF2_CollectiveOp
// and the OTF2_RmaSyncLevel bits), so that an export passes them on.
const (
	RmaLockExclusive = 0
	RmaLockShared    = 1

	RmaAtomicAccumulate         = 0
	RmaAtomicIncrement          = 1
	RmaAtomicTestAndSet         = 2
	RmaAtomicCompareAndSwap     = 3
	RmaAtomicSwap               = 4
	RmaAtomicFetchAndAdd        = 5
	RmaAtomicFetchAndIncrement  = 6
	RmaAtomicFetchAndAccumulate = 7

	RmaSyncMemory    = 0 // a memory synchronisation (MPI_Win_sync, flushes)
	RmaSyncNotifyIn  = 1
	RmaSyncNotifyOut = 2

	RmaLevelNone    = 0
	RmaLevelProcess = 1 << 0 // processes are synchronised
	RmaLevelMemory  = 1 << 1 // memory accesses are completed

	RmaCollBarrier                    = 0 // MPI_Win_fence
	RmaCollCreateHandle               = 17
	RmaCollDestroyHandle              = 18
	RmaCollCreateHandleAndAllocate    = 21
	RmaCollDestroyHandleAndDeallocate = 22
)
