package measure

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// CommID is a communicator defined with DefineComm, as messages and
// collectives name it. 0 is none given: readers take a rank peer's message
// without one as on MPI_COMM_WORLD. Communicators and the MPI probes that
// name them are for Go code that calls MPI itself, through a binding; C,
// C++ and Fortran programs get the same records from hmbtrace's MPI
// wrappers.
type CommID uint32

// DefineComm records the creation of a communicator: its name
// ("MPI_COMM_WORLD", "MPI_COMM_SELF", or "" for a derived one), the
// communicator it was made from (0 for world and self), its members as
// world ranks in the order of its own ranks, and for an inter-communicator
// (remote not nil) the remote group; members is then the local group. It
// returns the id the probes take, unique in the process; define world and
// self first. Safe for concurrent use. A disabled measurement returns 0.
func (m *Measurement) DefineComm(name string, parent CommID, members, remote []int32) (CommID, error) {
	if !m.Enabled() {
		return 0, nil
	}
	for _, g := range [][]int32{members, remote} {
		for _, r := range g {
			if r < 0 {
				return 0, fmt.Errorf("measure: communicator %q: world rank %d is negative", name, r)
			}
		}
	}
	c := tracefile.Comm{Name: name, Parent: uint32(parent), Members: slices.Clone(members)}
	if remote != nil {
		c.Remote = append([]int32{}, remote...)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if parent != 0 && int(parent) > len(m.comms) {
		return 0, fmt.Errorf("measure: communicator %q: parent %d is not defined (%d communicators are)", name, parent, len(m.comms))
	}
	if uint64(len(m.comms)) >= 1<<32-1 {
		return 0, errors.New("measure: more than 2^32-1 communicators")
	}
	if parent != 0 && slices.Equal(c.Members, m.comms[parent-1].Members) {
		// A duplicate of its parent (MPI_Comm_dup, MPI_Cart_create over
		// every rank) holds the parent's list, not a copy: world's is
		// 400 KB at 10^5 ranks, and libraries duplicate it. The trace
		// file writes it as the parent's members, in no bytes.
		c.Members = m.comms[parent-1].Members
	}
	c.ID = uint32(len(m.comms) + 1)
	m.comms = append(m.comms, c)
	m.surviveComm(c)
	return CommID(c.ID), nil
}

// commDefs returns a copy of the communicators defined so far.
func (m *Measurement) commDefs() []tracefile.Comm {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.comms)
}

// commLine is one peer's line of a location's communication matrix, in an
// open-addressing table keyed by (peer, rank). The C shim's probes update
// it in place (cshim/lib/direct.h): its layout is checked.
type commLine struct {
	peer        uint64
	rank        uint32 // 1 if peer is a world rank
	used        uint32 // 1 once the line holds a peer
	sent, sentB uint64
	recv, recvB uint64
}

// commHash is the first slot of peer in a table of 1<<(64-shift) lines:
// Fibonacci hashing, cheap enough to repeat in C.
func commHash(peer uint64, rank uint32, shift uint32) uint64 {
	return ((peer<<1 | uint64(rank)) * 0x9E3779B97F4A7C15) >> shift
}

// countMessage adds a message to or from peer to the exact matrix. Probes
// call it before the buffer decides what to keep, so that the matrix counts
// what the buffer sheds. It allocates only when the table grows.
func (l *Location) countMessage(recv bool, peer uint64, rank bool, bytes uint64) {
	var rk uint32
	if rank {
		rk = 1
	}
	c := l.commLine(peer, rk)
	if recv {
		c.recv++
		c.recvB += bytes
	} else {
		c.sent++
		c.sentB += bytes
	}
}

// commLine returns the matrix line of (peer, rank), adding it if new.
func (l *Location) commLine(peer uint64, rank uint32) *commLine {
	if len(l.commLines) > 0 {
		mask := uint64(len(l.commLines) - 1)
		for i := commHash(peer, rank, l.commShift); ; i = (i + 1) & mask {
			c := &l.commLines[i]
			if c.used == 0 {
				break
			}
			if c.peer == peer && c.rank == rank {
				return c
			}
		}
	}
	return l.addCommLine(peer, rank)
}

// addCommLine adds a line for a new peer, growing the table to keep it at
// most half full so that lookups stay short.
//
//go:noinline
func (l *Location) addCommLine(peer uint64, rank uint32) *commLine {
	if 2*(l.commUsed+1) > len(l.commLines) {
		n := max(16, 2*len(l.commLines))
		old := l.commLines
		l.commLines = make([]commLine, n)
		l.commShift = uint32(64 - bits.Len64(uint64(n)-1))
		l.commUsed = 0
		for i := range old {
			if old[i].used != 0 {
				*l.insertCommLine(old[i].peer, old[i].rank) = old[i]
			}
		}
		l.pinNew(unsafe.Pointer(&l.commLines[0]))
	}
	return l.insertCommLine(peer, rank)
}

func (l *Location) insertCommLine(peer uint64, rank uint32) *commLine {
	mask := uint64(len(l.commLines) - 1)
	i := commHash(peer, rank, l.commShift)
	for l.commLines[i].used != 0 {
		i = (i + 1) & mask
	}
	c := &l.commLines[i]
	*c = commLine{peer: peer, rank: rank, used: 1}
	l.commUsed++
	return c
}

// commMatrix returns the location's matrix sorted by (PeerRank, Peer), nil
// if it exchanged no message.
func (l *Location) commMatrix() []tracefile.CommCount {
	var out []tracefile.CommCount
	for _, c := range l.commLines {
		if c.used != 0 {
			out = append(out, tracefile.CommCount{Peer: c.peer, PeerRank: c.rank != 0,
				Sent: c.sent, SentBytes: c.sentB, Received: c.recv, ReceivedBytes: c.recvB})
		}
	}
	slices.SortFunc(out, func(a, b tracefile.CommCount) int {
		if a.PeerRank != b.PeerRank {
			if a.PeerRank {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Peer, b.Peer)
	})
	return out
}

// SendRankComm records a message sent to MPI world rank rank on
// communicator comm.
func (l *Location) SendRankComm(rank int, tag uint32, bytes uint64, comm CommID) {
	if l != nil && ProbesCompiledIn {
		l.message(encode.KindSend, uint64(rank), true, tag, bytes, uint32(comm), 0, true)
	}
}

// RecvRankComm records a message received from MPI world rank rank on
// communicator comm.
func (l *Location) RecvRankComm(rank int, tag uint32, bytes uint64, comm CommID) {
	if l != nil && ProbesCompiledIn {
		l.message(encode.KindRecv, uint64(rank), true, tag, bytes, uint32(comm), 0, true)
	}
}

// Isend records the start of a non-blocking send to world rank rank (at
// MPI_Isend, or at the start of a persistent send). request names the
// operation until IsendComplete: a number unique to the location over the
// run, not an MPI_Request, which MPI reuses. Isend and the other request
// probes (IsendComplete, IrecvRequest, Irecv, RequestCancelled) are for
// Go code that calls MPI through a binding, as CommID says.
func (l *Location) Isend(rank int, tag uint32, bytes uint64, comm CommID, request uint64) {
	if l != nil && ProbesCompiledIn {
		r := encode.Record{Kind: encode.KindIsend, Peer: uint64(rank), PeerRank: true, Tag: tag, Bytes: bytes, Comm: uint32(comm), Request: request}
		l.mpiRecord(&r, 0, true)
	}
}

// IsendComplete records that the request of a non-blocking send completed
// (in MPI_Wait, MPI_Test, ...).
func (l *Location) IsendComplete(request uint64) {
	if l != nil && ProbesCompiledIn {
		r := encode.Record{Kind: encode.KindIsendComplete, Request: request}
		l.mpiRecord(&r, 0, true)
	}
}

// IrecvRequest records the start of a non-blocking receive (at MPI_Irecv,
// or at the start of a persistent receive): its peer and size are known
// when it completes, with Irecv.
func (l *Location) IrecvRequest(request uint64) {
	if l != nil && ProbesCompiledIn {
		r := encode.Record{Kind: encode.KindIrecvRequest, Request: request}
		l.mpiRecord(&r, 0, true)
	}
}

// Irecv records that the non-blocking receive request completed with a
// message from world rank rank.
func (l *Location) Irecv(rank int, tag uint32, bytes uint64, comm CommID, request uint64) {
	if l != nil && ProbesCompiledIn {
		r := encode.Record{Kind: encode.KindIrecv, Peer: uint64(rank), PeerRank: true, Tag: tag, Bytes: bytes, Comm: uint32(comm), Request: request}
		l.mpiRecord(&r, 0, true)
	}
}

// RequestCancelled records that a request was cancelled.
func (l *Location) RequestCancelled(request uint64) {
	if l != nil && ProbesCompiledIn {
		r := encode.Record{Kind: encode.KindRequestCancelled, Request: request}
		l.mpiRecord(&r, 0, true)
	}
}

// EnterCollectiveComm is EnterCollective with the bytes received and the
// communicator: sent is what this process contributed.
func (l *Location) EnterCollectiveComm(r Region, root int, sent, received uint64, comm CommID) {
	if l != nil && ProbesCompiledIn {
		l.enterCollective(r, root, sent, received, uint32(comm), 0, true)
	}
}

// EnterCollectiveCommAt is EnterCollectiveComm at time t, taken earlier
// from Measurement.Now, like EnterAt.
func (l *Location) EnterCollectiveCommAt(r Region, root int, sent, received uint64, comm CommID, t uint64) {
	if l != nil && ProbesCompiledIn {
		l.enterCollective(r, root, sent, received, uint32(comm), t, false)
	}
}

// CollectiveRequest records, inside the region of a non-blocking
// collective (MPI_Iallreduce, ...), the request that CollectiveComplete
// will name.
func (l *Location) CollectiveRequest(request uint64) {
	if l != nil && ProbesCompiledIn {
		rec := encode.Record{Kind: encode.KindCollRequest, Request: request}
		l.mpiRecord(&rec, 0, true)
	}
}

// CollectiveComplete records that a non-blocking collective completed
// (in MPI_Wait, ...): r is the region of the call that started it, and
// root (-1: none), sent, received and comm describe it as for
// EnterCollectiveComm.
func (l *Location) CollectiveComplete(r Region, root int, sent, received uint64, comm CommID, request uint64) {
	if l != nil && ProbesCompiledIn {
		rec := encode.Record{Kind: encode.KindCollComplete, Region: uint32(r), Root: int64(root), Bytes: sent, Received: received,
			Comm: uint32(comm), Request: request}
		l.mpiRecord(&rec, 0, true)
	}
}

// recordAt records a message, request or collective completion at time t,
// taken earlier from Measurement.Now, like EnterAt: the C shim's replay of
// the probes it staged (internal/measureinternal). r.Kind is one of encode's
// KindSend, KindRecv, KindIsend, KindIsendComplete, KindIrecvRequest,
// KindIrecv, KindRequestCancelled, KindCollRequest or KindCollComplete, an
// RMA kind (KindRma*, see rma), or a task record (KindTaskCreate,
// KindTaskSwitch, KindTaskComplete, KindTaskSuspend);
// r.Time and r.Seq are ignored. Other kinds are counted as usage errors
// (an undefined region) and dropped.
func (l *Location) recordAt(r encode.Record, t uint64) {
	if l == nil || !ProbesCompiledIn {
		return
	}
	switch r.Kind {
	case encode.KindSend, encode.KindRecv:
		l.message(r.Kind, r.Peer, r.PeerRank, r.Tag, r.Bytes, r.Comm, t, false)
	case encode.KindIsend, encode.KindIrecv, encode.KindIsendComplete, encode.KindIrecvRequest,
		encode.KindRequestCancelled, encode.KindCollRequest, encode.KindCollComplete:
		l.mpiRecord(&r, t, false)
	case encode.KindTaskCreate:
		l.taskRecord(r.Kind, r.Task, t, false)
	case encode.KindTaskSwitch:
		l.taskSwitch(r.Task, t, false)
	case encode.KindTaskComplete:
		l.taskComplete(r.Task, t, false)
	case encode.KindTaskSuspend:
		l.taskSuspend(r.Task, t, false)
	default:
		if r.Kind.IsRma() {
			l.rmaRecord(&r, t, false)
			return
		}
		l.usage.UnknownRegion++
	}
}

// mpiRecord records r, a non-blocking operation's record or a collective's
// completion, at the current depth, as message does for a message: in the
// message class, or the collective class for the collectives' records.
func (l *Location) mpiRecord(r *encode.Record, t uint64, read bool) {
	if read {
		t = l.now()
	}
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	if r.Kind == encode.KindCollComplete && !l.defined(Region(r.Region)) {
		return // a region of another measurement, or none: readers could not name it
	}
	_, r.Time, r.Seq = l.stamp(t)
	d := l.depth
	l.recorded++
	switch r.Kind {
	case encode.KindIsend:
		l.countMessage(false, r.Peer, r.PeerRank, r.Bytes)
	case encode.KindIrecv:
		l.countMessage(true, r.Peer, r.PeerRank, r.Bytes)
	}
	c := buffer.ClassMessage
	if r.Kind == encode.KindCollRequest || r.Kind == encode.KindCollComplete {
		c = buffer.ClassCollective
	}
	l.putAtDepth(r, d, c)
}

// defined reports whether region r is defined in the location's
// measurement, and counts a usage error if it is not: for the records that
// name a region they do not enter (a collective's completion names the
// call that started it), which enter's own test does not cover.
func (l *Location) defined(r Region) bool {
	if p := l.entry(r); p != nil && p.off != offUndefined {
		return true
	}
	return l.define(r) != nil
}

// putAtDepth writes r, of class c (message, collective or paradigm), at
// the current depth d, after the calls held by the duration filter around
// it were written where they can be: into the level of its class, or
// counted as dropped where that depth or class is closed. A record that
// finds no bin is counted by the level.
func (l *Location) putAtDepth(r *encode.Record, d int, c buffer.Class) {
	if l.pendingFrom != 0 {
		l.flush(d)
	}
	if d >= l.limitOf(c) || l.h.ClassClosed&(1<<c) != 0 {
		l.drop(d, c)
		return
	}
	var lv *buffer.Level
	switch c {
	case buffer.ClassCollective:
		lv = l.collLevel(d)
	case buffer.ClassParadigm:
		lv = l.parLevel(d)
	default:
		lv = l.msgLevel(d)
	}
	lv.Put(r, l.stack[d].region)
}
