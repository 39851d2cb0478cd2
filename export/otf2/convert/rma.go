package convert

import (
	"fmt"
	"strconv"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// One-sided communication as OTF2 means it: a window is an RmaWin on its
// communicator, created by every member in the same order (MPI makes
// window creation collective), so the k-th window a file created on a
// communicator is the k-th of every other member's file. RMA events name
// their target by its rank in the window's communicator, and a group
// synchronisation a COMM_GROUP of its members.

// rmaDefs holds the windows and RMA groups of an export.
type rmaDefs struct {
	wins   []map[uint32]rmaWin // per file: window id -> exported window
	groups map[string]otf2.GroupRef
}

type rmaWin struct {
	ref  otf2.RmaWinRef
	comm *comm
}

// defineRma defines the windows of every file, unified across files, after
// the communicators they are created on.
func (x *exporter) defineRma() error {
	r := &rmaDefs{wins: make([]map[uint32]rmaWin, len(x.files)), groups: map[string]otf2.GroupRef{}}
	x.rma = r
	// A window on MPI_COMM_SELF is the process's own: keyed by its file.
	type winKey struct {
		comm *comm
		k    int
		file int
	}
	type unified struct {
		name  string
		comm  *comm
		files []struct {
			file int
			id   uint32
		}
	}
	var order []winKey
	byKey := map[winKey]*unified{}
	for i, f := range x.files {
		r.wins[i] = map[uint32]rmaWin{}
		seen := map[*comm]int{}
		for _, w := range f.Wins {
			c, ok, err := x.commOf(i, w.Comm)
			if err != nil {
				return err
			}
			if !ok || w.Comm == 0 {
				continue // its records are counted as left out
			}
			seen[c]++
			k := winKey{c, seen[c], -1}
			if c.self {
				k.file = i
			}
			u := byKey[k]
			if u == nil {
				u = &unified{comm: c}
				byKey[k] = u
				order = append(order, k)
			}
			if u.name == "" {
				u.name = w.Name
			}
			u.files = append(u.files, struct {
				file int
				id   uint32
			}{i, w.ID})
		}
	}
	for n, k := range order {
		u := byKey[k]
		name := u.name
		if name == "" {
			name = "MPI window " + strconv.Itoa(n)
		}
		ref, err := x.a.RmaWin(name, u.comm.ref)
		if err != nil {
			return err
		}
		for _, f := range u.files {
			r.wins[f.file][f.id] = rmaWin{ref: ref, comm: u.comm}
		}
	}
	return nil
}

// rmaGroup returns the COMM_GROUP of RMA group id of file i, defined on
// first use and shared by the files that name the same members.
func (x *exporter) rmaGroup(i int, id uint32) (otf2.GroupRef, bool, error) {
	if x.sh != nil {
		return x.sh.rmaGroup(x, i, id)
	}
	g := x.files[i].RmaGroup(id)
	if g == nil {
		return 0, false, nil
	}
	key := ranksKey(g.Members)
	if ref, ok := x.rma.groups[key]; ok {
		return ref, true, nil
	}
	ref, _, err := x.commGroup(g.Members)
	if err != nil {
		return 0, false, err
	}
	x.rma.groups[key] = ref
	return ref, true, nil
}

// rmaEvent writes RMA record e of file i. A record naming a window, target
// or group the export does not have, or a type OTF2 does not know, is left
// out and counted (Stats.RmaLeftOut).
func (x *exporter) rmaEvent(i int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	if e.Kind == encode.KindRmaCollectiveBegin {
		return w.RmaCollectiveBegin(ts)
	}
	var win rmaWin
	ok := x.rma != nil
	if ok {
		win, ok = x.rma.wins[i][e.Win]
	}
	if e.Kind == encode.KindRmaCollectiveEnd {
		// Its begin is written: a window creation that failed (window 0)
		// or was left out ends on no window.
		ref := otf2.NoWin
		if ok {
			ref = win.ref
		}
		if e.Aux > uint32(otf2.CollDestroyHandleAndDeallocate) {
			return fmt.Errorf("RMA collective operation %d is not an OTF2 collective operation", e.Aux)
		}
		root := otf2.NoRoot
		if e.Remote >= 0 && ok {
			if r, in := win.comm.rankOf(e.Remote, x.files[i].Header.Rank); in {
				root = r
			}
		}
		return w.RmaCollectiveEnd(ts, otf2.CollectiveOp(e.Aux), otf2.RmaSyncLevel(e.Level), ref, root, e.Bytes, e.Received)
	}
	if !ok {
		x.st.RmaLeftOut++
		return nil
	}
	remote := otf2.AllRemotes
	if e.Remote >= 0 {
		r, in := win.comm.rankOf(e.Remote, x.files[i].Header.Rank)
		if !in {
			x.st.RmaLeftOut++
			return nil
		}
		remote = r
	}
	switch e.Kind {
	case encode.KindRmaWinCreate:
		return w.RmaWinCreate(ts, win.ref)
	case encode.KindRmaWinDestroy:
		return w.RmaWinDestroy(ts, win.ref)
	case encode.KindRmaGroupSync:
		g, ok, err := x.rmaGroup(i, e.Group)
		if err != nil || !ok {
			if !ok {
				x.st.RmaLeftOut++
			}
			return err
		}
		return w.RmaGroupSync(ts, otf2.RmaSyncLevel(e.Level), win.ref, g)
	case encode.KindRmaRequestLock, encode.KindRmaAcquireLock, encode.KindRmaTryLock:
		if e.Aux > uint32(otf2.LockShared) {
			x.st.RmaLeftOut++
			return nil
		}
		t := otf2.LockType(e.Aux)
		switch e.Kind {
		case encode.KindRmaRequestLock:
			return w.RmaRequestLock(ts, win.ref, remote, e.Request, t)
		case encode.KindRmaAcquireLock:
			return w.RmaAcquireLock(ts, win.ref, remote, e.Request, t)
		}
		return w.RmaTryLock(ts, win.ref, remote, e.Request, t)
	case encode.KindRmaReleaseLock:
		return w.RmaReleaseLock(ts, win.ref, remote, e.Request)
	case encode.KindRmaSync:
		if e.Aux > uint32(otf2.RmaSyncNotifyOut) {
			x.st.RmaLeftOut++
			return nil
		}
		return w.RmaSync(ts, win.ref, remote, otf2.RmaSyncType(e.Aux))
	case encode.KindRmaWaitChange:
		return w.RmaWaitChange(ts, win.ref)
	case encode.KindRmaPut:
		x.st.RmaOperations++
		return w.RmaPut(ts, win.ref, remote, e.Bytes, e.Request)
	case encode.KindRmaGet:
		x.st.RmaOperations++
		return w.RmaGet(ts, win.ref, remote, e.Bytes, e.Request)
	case encode.KindRmaAtomic:
		if e.Aux > uint32(otf2.RmaAtomicFetchAndAccumulate) {
			x.st.RmaLeftOut++
			return nil
		}
		x.st.RmaOperations++
		return w.RmaAtomic(ts, win.ref, remote, otf2.RmaAtomicType(e.Aux), e.Bytes, e.Received, e.Request)
	case encode.KindRmaOpCompleteBlocking:
		return w.RmaOpCompleteBlocking(ts, win.ref, e.Request)
	case encode.KindRmaOpCompleteNonBlock:
		return w.RmaOpCompleteNonBlocking(ts, win.ref, e.Request)
	case encode.KindRmaOpTest:
		return w.RmaOpTest(ts, win.ref, e.Request)
	case encode.KindRmaOpCompleteRemote:
		return w.RmaOpCompleteRemote(ts, win.ref, e.Request)
	}
	return fmt.Errorf("unknown RMA event kind %d", e.Kind)
}
