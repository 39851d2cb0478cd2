package otf2

import "fmt"

// RmaWinRef is a reference to an RMA window definition.
type RmaWinRef uint32

// RmaSyncLevel is OTF2_RmaSyncLevel, a bit set: what a synchronisation
// synchronised.
type RmaSyncLevel uint32

// Synchronisation levels (OTF2_RMA_SYNC_LEVEL_*).
const (
	RmaSyncLevelNone    RmaSyncLevel = 0
	RmaSyncLevelProcess RmaSyncLevel = 1 << 0 // processes (MPI_Win_create, MPI_Win_fence)
	RmaSyncLevelMemory  RmaSyncLevel = 1 << 1 // memory accesses are complete (MPI_Win_complete, MPI_Win_wait)
)

// LockType is OTF2_LockType.
type LockType uint8

// Lock types (OTF2_LOCK_*).
const (
	LockExclusive LockType = 0
	LockShared    LockType = 1
)

// RmaAtomicType is OTF2_RmaAtomicType.
type RmaAtomicType uint8

// Atomic operations (OTF2_RMA_ATOMIC_TYPE_*).
const (
	RmaAtomicAccumulate RmaAtomicType = iota
	RmaAtomicIncrement
	RmaAtomicTestAndSet
	RmaAtomicCompareAndSwap
	RmaAtomicSwap
	RmaAtomicFetchAndAdd
	RmaAtomicFetchAndIncrement
	RmaAtomicFetchAndAccumulate
)

// RmaSyncType is OTF2_RmaSyncType.
type RmaSyncType uint8

// Synchronisation types (OTF2_RMA_SYNC_TYPE_*).
const (
	RmaSyncMemory    RmaSyncType = 0 // the public and private copies of memory
	RmaSyncNotifyIn  RmaSyncType = 1
	RmaSyncNotifyOut RmaSyncType = 2
)

// AllRemotes is the target of an RMA event that concerns every process of
// its window (a lock of all of them, a flush of all): OTF2's undefined
// rank, as Score-P writes it.
const AllRemotes uint32 = undefined

// NoWin is the window of an RMA collective operation that made none (a
// window creation that failed): OTF2's undefined reference.
const NoWin RmaWinRef = undefined

// rmaWinFlagCreateDestroyEvents marks a window whose creation and
// destruction its locations record (OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS).
const rmaWinFlagCreateDestroyEvents = 1 << 0

const defRmaWin = 24

// Event record ids of one-sided communication (OTF2_EVENT_RMA_*).
const (
	eventRmaWinCreate = 35 + iota
	eventRmaWinDestroy
	eventRmaCollectiveBegin
	eventRmaCollectiveEnd
	eventRmaGroupSync
	eventRmaRequestLock
	eventRmaAcquireLock
	eventRmaTryLock
	eventRmaReleaseLock
	eventRmaSync
	eventRmaWaitChange
	eventRmaPut
	eventRmaGet
	eventRmaAtomic
	eventRmaOpCompleteBlocking
	eventRmaOpCompleteNonBlocking
	eventRmaOpTest
	eventRmaOpCompleteRemote
)

type rmaWinDef struct {
	name stringRef
	comm CommRef
}

// RmaWin defines a window of one-sided communication on communicator comm,
// whose locations record its creation and destruction (RmaWinCreate,
// RmaWinDestroy).
func (a *Archive) RmaWin(name string, comm CommRef) (RmaWinRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.usable(); err != nil {
		return 0, err
	}
	if int(comm) >= len(a.comms) {
		return 0, fmt.Errorf("otf2: window %q: communicator %d is not defined (%d so far)", name, comm, len(a.comms))
	}
	if err := a.checkStrings("window name", name); err != nil {
		return 0, err
	}
	if uint64(len(a.rmaWins)) == undefined {
		return 0, fmt.Errorf("otf2: window %q: too many windows", name)
	}
	a.rmaWins = append(a.rmaWins, rmaWinDef{name: a.intern(name), comm: comm})
	a.rmaWinCount.Store(uint32(len(a.rmaWins)))
	return RmaWinRef(len(a.rmaWins) - 1), nil
}

// appendRmaWins appends the RmaWin definitions to traces.def with put.
func (a *Archive) appendRmaWins(p []byte, put func([]byte) ([]byte, error)) ([]byte, error) {
	for i, w := range a.rmaWins {
		p = appendCU32(p, uint32(i))
		p = appendCU32(p, uint32(w.name))
		p = appendCU32(p, uint32(w.comm))
		p = appendCU32(p, rmaWinFlagCreateDestroyEvents)
		var err error
		if p, err = put(p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// The largest payload of an RMA event: an atomic's window, target, type,
// bytes sent and received and matching id.
const rmaEstimate = 2*maxCU32 + 1 + 3*maxCU64

// rmaField is one field of an RMA event: a byte, or a compressed uint32
// or uint64 (whose undefined values differ).
type rmaField struct {
	v     uint64
	width uint8 // 1, 4 or 8
}

func u8(v uint8) rmaField       { return rmaField{uint64(v), 1} }
func cu32(v uint32) rmaField    { return rmaField{uint64(v), 4} }
func cu64(v uint64) rmaField    { return rmaField{v, 8} }
func winF(w RmaWinRef) rmaField { return cu32(uint32(w)) }

// rmaEvent writes an RMA event with a length byte and the given fields, the
// window first where it has one (checked against the definitions).
func (w *EventWriter) rmaEvent(ts uint64, id byte, win *RmaWinRef, group *GroupRef, fields ...rmaField) error {
	if win != nil && *win != NoWin && uint32(*win) >= w.a.rmaWinCount.Load() {
		return w.undefined("window", uint64(*win), w.a.rmaWinCount.Load())
	}
	if group != nil {
		w.a.mu.Lock()
		n := len(w.a.groups)
		w.a.mu.Unlock()
		if int(*group) >= n {
			return w.undefined("group", uint64(*group), uint32(n))
		}
	}
	if err := w.reserve(ts, recordBound(rmaEstimate)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	start := p + 2
	p = start
	for _, f := range fields {
		switch f.width {
		case 1:
			b[p] = byte(f.v)
			p++
		case 4:
			p = putCU32(b, p, uint32(f.v))
		default:
			p = putCU64(b, p, f.v)
		}
	}
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}

// RmaWinCreate records the creation of window win, inside its creation
// call's RmaCollectiveBegin/End.
func (w *EventWriter) RmaWinCreate(ts uint64, win RmaWinRef) error {
	return w.rmaEvent(ts, eventRmaWinCreate, &win, nil, winF(win))
}

// RmaWinDestroy records that window win is destroyed.
func (w *EventWriter) RmaWinDestroy(ts uint64, win RmaWinRef) error {
	return w.rmaEvent(ts, eventRmaWinDestroy, &win, nil, winF(win))
}

// RmaCollectiveBegin records the start of a collective RMA operation (a
// fence, a window's creation); RmaCollectiveEnd says which.
func (w *EventWriter) RmaCollectiveBegin(ts uint64) error {
	return w.rmaEvent(ts, eventRmaCollectiveBegin, nil, nil)
}

// RmaCollectiveEnd records the end of collective RMA operation op on win
// (NoWin: a creation that failed): what it synchronised, its root (NoRoot
// for none), the bytes sent and received.
func (w *EventWriter) RmaCollectiveEnd(ts uint64, op CollectiveOp, level RmaSyncLevel, win RmaWinRef, root uint32, sent, received uint64) error {
	if op > CollDestroyHandleAndDeallocate {
		return fmt.Errorf("otf2: location %d %q: collective operation %d is not an OTF2 collective operation", w.ref, w.name, op)
	}
	return w.rmaEvent(ts, eventRmaCollectiveEnd, &win, nil, u8(uint8(op)), cu32(uint32(level)), winF(win), cu32(root), cu64(sent), cu64(received))
}

// RmaGroupSync records a synchronisation of win with the processes of
// group (MPI_Win_post, _start, _complete, _wait): a group of type
// GroupTypeCommGroup, its members being ranks of COMM_LOCATIONS.
func (w *EventWriter) RmaGroupSync(ts uint64, level RmaSyncLevel, win RmaWinRef, group GroupRef) error {
	return w.rmaEvent(ts, eventRmaGroupSync, &win, &group, cu32(uint32(level)), winF(win), cu32(uint32(group)))
}

// RmaRequestLock records that a lock of win at remote (AllRemotes: all of
// them) was requested.
func (w *EventWriter) RmaRequestLock(ts uint64, win RmaWinRef, remote uint32, lockID uint64, t LockType) error {
	return w.rmaEvent(ts, eventRmaRequestLock, &win, nil, winF(win), cu32(remote), cu64(lockID), u8(uint8(t)))
}

// RmaAcquireLock records that a lock was acquired.
func (w *EventWriter) RmaAcquireLock(ts uint64, win RmaWinRef, remote uint32, lockID uint64, t LockType) error {
	return w.rmaEvent(ts, eventRmaAcquireLock, &win, nil, winF(win), cu32(remote), cu64(lockID), u8(uint8(t)))
}

// RmaTryLock records an unsuccessful attempt to acquire a lock.
func (w *EventWriter) RmaTryLock(ts uint64, win RmaWinRef, remote uint32, lockID uint64, t LockType) error {
	return w.rmaEvent(ts, eventRmaTryLock, &win, nil, winF(win), cu32(remote), cu64(lockID), u8(uint8(t)))
}

// RmaReleaseLock records that a lock was released.
func (w *EventWriter) RmaReleaseLock(ts uint64, win RmaWinRef, remote uint32, lockID uint64) error {
	return w.rmaEvent(ts, eventRmaReleaseLock, &win, nil, winF(win), cu32(remote), cu64(lockID))
}

// RmaSync records a synchronisation with remote (AllRemotes: all).
func (w *EventWriter) RmaSync(ts uint64, win RmaWinRef, remote uint32, t RmaSyncType) error {
	return w.rmaEvent(ts, eventRmaSync, &win, nil, winF(win), cu32(remote), u8(uint8(t)))
}

// RmaWaitChange records a wait for a change of the local window.
func (w *EventWriter) RmaWaitChange(ts uint64, win RmaWinRef) error {
	return w.rmaEvent(ts, eventRmaWaitChange, &win, nil, winF(win))
}

// RmaPut records a put of bytes to remote; matchingID ties it to its
// completion.
func (w *EventWriter) RmaPut(ts uint64, win RmaWinRef, remote uint32, bytes, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaPut, &win, nil, winF(win), cu32(remote), cu64(bytes), cu64(matchingID))
}

// RmaGet records a get of bytes from remote.
func (w *EventWriter) RmaGet(ts uint64, win RmaWinRef, remote uint32, bytes, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaGet, &win, nil, winF(win), cu32(remote), cu64(bytes), cu64(matchingID))
}

// RmaAtomic records an atomic operation on remote's memory.
func (w *EventWriter) RmaAtomic(ts uint64, win RmaWinRef, remote uint32, t RmaAtomicType, sent, received, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaAtomic, &win, nil, winF(win), cu32(remote), u8(uint8(t)), cu64(sent), cu64(received), cu64(matchingID))
}

// RmaOpCompleteBlocking records the local completion of a blocking RMA
// operation.
func (w *EventWriter) RmaOpCompleteBlocking(ts uint64, win RmaWinRef, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaOpCompleteBlocking, &win, nil, winF(win), cu64(matchingID))
}

// RmaOpCompleteNonBlocking records the local completion of a non-blocking
// RMA operation.
func (w *EventWriter) RmaOpCompleteNonBlocking(ts uint64, win RmaWinRef, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaOpCompleteNonBlocking, &win, nil, winF(win), cu64(matchingID))
}

// RmaOpTest records an unsuccessful test of a non-blocking RMA operation.
func (w *EventWriter) RmaOpTest(ts uint64, win RmaWinRef, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaOpTest, &win, nil, winF(win), cu64(matchingID))
}

// RmaOpCompleteRemote records the remote completion of an RMA operation.
func (w *EventWriter) RmaOpCompleteRemote(ts uint64, win RmaWinRef, matchingID uint64) error {
	return w.rmaEvent(ts, eventRmaOpCompleteRemote, &win, nil, winF(win), cu64(matchingID))
}
