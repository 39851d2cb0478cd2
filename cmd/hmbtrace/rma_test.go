package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/measureinternal"
	"github.com/hmbtrace/hmbtrace/measure"
)

// dump prints each RMA record with the fields of its kind, and export
// says how many it left out.
func TestDumpRma(t *testing.T) {
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "rma"})
	if err != nil {
		t.Fatal(err)
	}
	// RMA reaches a measurement through the C shim only: its calls.
	mi := measureinternal.Of[*measure.Location, *measure.Measurement]()
	world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
	win, _ := mi.DefineWin(m, uint32(world))
	g, _ := mi.DefineRmaGroup(m, []int32{1})
	fence := m.Region("MPI_Win_fence")
	l := m.Location("main")
	l.Enter(fence)
	for _, r := range []encode.Record{
		{Kind: encode.KindRmaCollectiveBegin},
		{Kind: encode.KindRmaPut, Win: uint32(win), Remote: 1, Bytes: 64, Request: 3},
		{Kind: encode.KindRmaAtomic, Win: uint32(win), Remote: 1, Aux: encode.RmaAtomicCompareAndSwap, Bytes: 8, Received: 8, Request: 4},
		{Kind: encode.KindRmaRequestLock, Win: uint32(win), Remote: -1, Aux: encode.RmaLockShared},
		{Kind: encode.KindRmaGroupSync, Win: uint32(win), Level: encode.RmaLevelProcess, Group: uint32(g)},
		{Kind: encode.KindRmaOpCompleteRemote, Win: uint32(win), Request: 3},
		{Kind: encode.KindRmaCollectiveEnd, Win: uint32(win), Remote: -1, Level: 3},
		{Kind: encode.KindRmaGet, Win: 7, Remote: 0, Bytes: 8, Request: 5}, // a window not defined
	} {
		mi.RecordAt(l, r, m.Now())
	}
	l.Leave(fence)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rma.0.hmb")
	var out, errOut bytes.Buffer
	if rc := run([]string{"dump", path}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Split(line, "\t")
		f[1] = "T"
		got = append(got, strings.Join(f, " "))
	}
	want := []string{
		"main T ENTER MPI_Win_fence 1",
		"main T RMA_COLLECTIVE_BEGIN MPI_Win_fence 1",
		"main T RMA_PUT MPI_Win_fence 1 win=1 target=1 bytes=64 id=3",
		"main T RMA_ATOMIC MPI_Win_fence 1 win=1 target=1 bytes=8 received=8 id=4 type=3",
		"main T RMA_REQUEST_LOCK MPI_Win_fence 1 win=1 target=all id=0 type=1",
		"main T RMA_GROUP_SYNC MPI_Win_fence 1 win=1 level=1 group=1",
		"main T RMA_OP_COMPLETE_REMOTE MPI_Win_fence 1 win=1 id=3",
		"main T RMA_COLLECTIVE_END MPI_Win_fence 1 win=1 root=-1 bytes=0 received=0 type=0 level=3",
		"main T RMA_GET MPI_Win_fence 1 win=7 target=0 bytes=8 id=5",
		"main T LEAVE MPI_Win_fence 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dump:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out.Reset()
	if rc := run([]string{"export", "-format", "otf2", "-o", filepath.Join(t.TempDir(), "otf2"), path}, &out, &errOut); rc != 0 {
		t.Fatalf("export: exit %d: %s", rc, errOut.String())
	}
	// Rank 1 has no file: the put and the atomic to it are left out with
	// the get on the undefined window.
	if !strings.Contains(out.String(), "note: left out 3 one-sided communication records:") {
		t.Errorf("export says:\n%s", out.String())
	}
}
