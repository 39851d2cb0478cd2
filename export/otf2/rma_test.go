package otf2

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// Every RMA event, on a window of MPI_COMM_WORLD, is read back by
// otf2-print -Werror with its fields.
func TestRmaEvents(t *testing.T) {
	tracetest.RequireTool(t, "otf2-print", otf2print.DebianPackage)
	dir := t.TempDir()
	a, w := minimalArchive(t, dir)
	world, err := a.MPICommWorld("MPI_COMM_WORLD", []LocationRef{w.Ref()})
	if err != nil {
		t.Fatal(err)
	}
	win, err := a.RmaWin("halo", world)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RmaWin("bad", world+5); err == nil {
		t.Error("a window on an undefined communicator was accepted")
	}
	group, err := a.Group(GroupDef{Type: GroupTypeCommGroup, Paradigm: ParadigmMPI, Members: []uint64{0}})
	if err != nil {
		t.Fatal(err)
	}
	steps := []func(ts uint64) error{
		func(ts uint64) error { return w.RmaCollectiveBegin(ts) },
		func(ts uint64) error { return w.RmaWinCreate(ts, win) },
		func(ts uint64) error {
			return w.RmaCollectiveEnd(ts, CollCreateHandle, RmaSyncLevelProcess, win, NoRoot, 0, 0)
		},
		func(ts uint64) error { return w.RmaGroupSync(ts, RmaSyncLevelProcess, win, group) },
		func(ts uint64) error { return w.RmaRequestLock(ts, win, AllRemotes, 0, LockShared) },
		func(ts uint64) error { return w.RmaAcquireLock(ts, win, 0, 7, LockExclusive) },
		func(ts uint64) error { return w.RmaTryLock(ts, win, 0, 7, LockExclusive) },
		func(ts uint64) error { return w.RmaPut(ts, win, 0, 1<<32-1, 1<<40) },
		func(ts uint64) error { return w.RmaGet(ts, win, 0, 8, 2) },
		func(ts uint64) error { return w.RmaAtomic(ts, win, 0, RmaAtomicCompareAndSwap, 8, 8, 3) },
		func(ts uint64) error { return w.RmaOpTest(ts, win, 3) },
		func(ts uint64) error { return w.RmaOpCompleteBlocking(ts, win, 2) },
		func(ts uint64) error { return w.RmaOpCompleteNonBlocking(ts, win, 1<<40) },
		func(ts uint64) error { return w.RmaOpCompleteRemote(ts, win, 1<<40) },
		func(ts uint64) error { return w.RmaSync(ts, win, AllRemotes, RmaSyncMemory) },
		func(ts uint64) error { return w.RmaWaitChange(ts, win) },
		func(ts uint64) error { return w.RmaReleaseLock(ts, win, AllRemotes, 0) },
		func(ts uint64) error { return w.RmaWinDestroy(ts, win) },
		func(ts uint64) error { return w.RmaCollectiveBegin(ts) },
		func(ts uint64) error {
			return w.RmaCollectiveEnd(ts, CollCreateHandle, RmaSyncLevelProcess, NoWin, NoRoot, 0, 0)
		},
	}
	for i, s := range steps {
		if err := s(uint64(i + 1)); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if err := w.RmaPut(30, win+1, 0, 8, 1); err == nil || !strings.Contains(err.Error(), "window 1 is not defined") {
		t.Errorf("a put on an undefined window: %v", err)
	}
	if err := w.RmaGroupSync(30, RmaSyncLevelNone, win, group+9); err == nil || !strings.Contains(err.Error(), "group") {
		t.Errorf("a group sync with an undefined group: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	anchor := filepath.Join(dir, "traces.otf2")
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	out, err := otf2print.Run(anchor)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`RMA_WIN_CREATE`, `Window: "halo" <0>`, `RMA_COLLECTIVE_END`, `Operation: CREATE_HANDLE`,
		`RMA_PUT`, `Bytes: 4294967295, Matching: 1099511627776`, `RMA_ATOMIC`, `Type: COMPARE_AND_SWAP`,
		`RMA_REQUEST_LOCK`, `Remote: UNDEFINED, Lock: 0, Type: SHARED`, `RMA_OP_COMPLETE_REMOTE`, `RMA_GROUP_SYNC`, `RMA_WIN_DESTROY`, `Window: UNDEFINED`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("otf2-print lacks %q:\n%s", want, out)
		}
	}
	defs, err := otf2print.Run(anchor, "-G")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(defs), "RMA_WIN") || !strings.Contains(string(defs), `"halo"`) {
		t.Errorf("otf2-print -G lacks the window:\n%s", defs)
	}
}
