package measure

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// MPI one-sided communication (RMA) reaches a measurement through the C
// ABI only (hmb_win_define, hmb_rma, ...: cshim/mpi/rma.c), so its
// definitions and records are no public API of this package: the C shim
// calls them through internal/measureinternal (internalapi.go).

// winID is an MPI window defined with defineWin, as RMA records name it.
type winID uint32

// rmaGroupID is a group defined with defineRmaGroup, as a group
// synchronisation (MPI_Win_post, MPI_Win_start, ...) names it.
type rmaGroupID uint32

// rmaDefs are a measurement's windows and RMA groups, under m.mu.
type rmaDefs struct {
	wins   []tracefile.Win      // index id-1
	groups []tracefile.RmaGroup // index id-1
	byKey  map[string]rmaGroupID
}

// defineWin records the creation of an MPI window on communicator comm (an
// id DefineComm returned). It returns the id RMA records take, unique in
// the process. Safe for concurrent use; a disabled measurement returns 0.
func (m *Measurement) defineWin(comm CommID) (winID, error) {
	if !m.Enabled() {
		return 0, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if comm == 0 || int(comm) > len(m.comms) {
		return 0, fmt.Errorf("measure: window: communicator %d is not defined (%d communicators are)", comm, len(m.comms))
	}
	if uint64(len(m.rma.wins)) >= 1<<32-1 {
		return 0, errors.New("measure: more than 2^32-1 windows")
	}
	w := tracefile.Win{ID: uint32(len(m.rma.wins) + 1), Comm: uint32(comm)}
	m.rma.wins = append(m.rma.wins, w)
	m.surviveWin(w)
	return winID(w.ID), nil
}

// nameWin gives window w a name (MPI_Win_set_name); the last name given
// is the one the trace keeps.
func (m *Measurement) nameWin(w winID, name string) error {
	if !m.Enabled() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w == 0 || int(w) > len(m.rma.wins) {
		return fmt.Errorf("measure: window %d is not defined (%d windows are)", w, len(m.rma.wins))
	}
	m.rma.wins[w-1].Name = name
	m.surviveWin(m.rma.wins[w-1])
	return nil
}

// defineRmaGroup returns the id of the group of processes whose members,
// as world ranks in the order of the group's ranks, are given: the same
// members give the same id, so that a program that builds its group anew
// for every epoch defines it once. Safe for concurrent use; a disabled
// measurement returns 0.
func (m *Measurement) defineRmaGroup(members []int32) (rmaGroupID, error) {
	if !m.Enabled() {
		return 0, nil
	}
	var key strings.Builder
	for _, r := range members {
		if r < 0 {
			return 0, fmt.Errorf("measure: RMA group: world rank %d is negative", r)
		}
		key.WriteString(strconv.Itoa(int(r)))
		key.WriteByte(',')
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.rma.byKey[key.String()]; ok {
		return id, nil
	}
	if uint64(len(m.rma.groups)) >= 1<<32-1 {
		return 0, errors.New("measure: more than 2^32-1 RMA groups")
	}
	if m.rma.byKey == nil {
		m.rma.byKey = map[string]rmaGroupID{}
	}
	g := tracefile.RmaGroup{ID: uint32(len(m.rma.groups) + 1), Members: slices.Clone(members)}
	m.rma.groups = append(m.rma.groups, g)
	m.rma.byKey[key.String()] = rmaGroupID(g.ID)
	m.surviveRmaGroup(g)
	return rmaGroupID(g.ID), nil
}

// rmaTrace puts copies of the windows and RMA groups into t.
func (m *Measurement) rmaTrace(t *tracefile.Trace) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t.Wins = slices.Clone(m.rma.wins)
	t.RmaGroups = slices.Clone(m.rma.groups)
}

// rma records one event of MPI one-sided communication at the current
// depth: r.Kind is one of encode's KindRma* kinds, and the fields that kind
// stores are set (see encode.Record: Win, Remote as a world rank or -1,
// Bytes, Received, Request as the matching or lock id, Aux, Level, Group).
// Like messages, RMA events go to the message class (the collective class
// for window creation and destruction, fences and group synchronisations),
// which the default depth reduction sheds last. Another kind is counted as
// a usage error and dropped.
func (l *Location) rma(r encode.Record) {
	if l != nil && ProbesCompiledIn {
		if !r.Kind.IsRma() {
			l.usage.UnknownRegion++
			return
		}
		l.rmaRecord(&r, 0, true)
	}
}

// rmaClass is the event class of RMA record kind k.
func rmaClass(k encode.Kind) buffer.Class {
	switch k {
	case encode.KindRmaWinCreate, encode.KindRmaWinDestroy, encode.KindRmaCollectiveBegin,
		encode.KindRmaCollectiveEnd, encode.KindRmaGroupSync:
		return buffer.ClassCollective
	}
	return buffer.ClassMessage
}

// rmaRecord records r at time t (read now if read is set), as mpiRecord
// does for requests.
func (l *Location) rmaRecord(r *encode.Record, t uint64, read bool) {
	if read {
		t = l.now()
	}
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	_, r.Time, r.Seq = l.stamp(t)
	d := l.depth
	l.recorded++
	c := rmaClass(r.Kind)
	l.putAtDepth(r, d, c)
}
