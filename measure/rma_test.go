package measure

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Windows, RMA groups and every RMA record come back from the file with
// their fields, in recorded order, inside the regions they happened in.
func TestRmaRoundTrip(t *testing.T) {
	m := startTest(t, Config{})
	world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2, 3}, nil)
	split, _ := m.DefineComm("", world, []int32{3, 1}, nil)
	w1, err := m.defineWin(world)
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := m.defineWin(split)
	if w1 != 1 || w2 != 2 {
		t.Fatalf("window ids %d %d", w1, w2)
	}
	if err := m.nameWin(w2, "halo"); err != nil {
		t.Fatal(err)
	}
	g1, _ := m.defineRmaGroup([]int32{0, 2})
	g2, _ := m.defineRmaGroup([]int32{2, 0})
	if again, _ := m.defineRmaGroup([]int32{0, 2}); g1 != 1 || g2 != 2 || again != g1 {
		t.Fatalf("group ids %d %d %d", g1, g2, again)
	}
	create, put, fence := m.RegionParadigm("MPI_Win_create", tracefile.ParadigmMPI), m.RegionParadigm("MPI_Put", tracefile.ParadigmMPI),
		m.RegionParadigm("MPI_Win_fence", tracefile.ParadigmMPI)
	loc := m.Location("rank 1")
	recs := []encode.Record{
		{Kind: encode.KindRmaCollectiveBegin},
		{Kind: encode.KindRmaWinCreate, Win: uint32(w1)},
		{Kind: encode.KindRmaCollectiveEnd, Win: uint32(w1), Remote: -1, Aux: encode.RmaCollCreateHandle, Level: encode.RmaLevelProcess},
		{Kind: encode.KindRmaPut, Win: uint32(w1), Remote: 3, Bytes: 800, Request: 1},
		{Kind: encode.KindRmaAtomic, Win: uint32(w2), Remote: 1, Aux: encode.RmaAtomicFetchAndAccumulate, Bytes: 8, Received: 8, Request: 2},
		{Kind: encode.KindRmaRequestLock, Win: uint32(w2), Remote: -1, Request: 3, Aux: encode.RmaLockShared},
		{Kind: encode.KindRmaGroupSync, Win: uint32(w1), Level: encode.RmaLevelProcess, Group: uint32(g2)},
		{Kind: encode.KindRmaOpCompleteRemote, Win: uint32(w1), Request: 1},
	}
	loc.Enter(create)
	for _, r := range recs[:3] {
		loc.rma(r)
	}
	loc.Leave(create)
	loc.Enter(put)
	loc.rma(recs[3])
	loc.Leave(put)
	loc.Enter(fence)
	for _, r := range recs[4:] {
		loc.rma(r)
	}
	loc.rma(encode.Record{Kind: encode.KindSend}) // not an RMA kind: a usage error
	loc.Leave(fence)
	m.Close()
	f := openTrace(t, m)
	wantWins := []tracefile.Win{{ID: 1, Comm: 1}, {ID: 2, Comm: 2, Name: "halo"}}
	wantGroups := []tracefile.RmaGroup{{ID: 1, Members: []int32{0, 2}}, {ID: 2, Members: []int32{2, 0}}}
	if !reflect.DeepEqual(f.Wins, wantWins) || !reflect.DeepEqual(f.RmaGroups, wantGroups) {
		t.Errorf("windows %+v, groups %+v", f.Wins, f.RmaGroups)
	}
	if u := f.Locations[0].Usage.UnknownRegion; u != 1 {
		t.Errorf("usage errors: %d unknown, want 1", u)
	}
	var got []string
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		got = append(got, fmt.Sprintf("%v %s w%d to%d b%d rcv%d id%d aux%d lv%d g%d %v", e.Kind, f.RegionName(e.Region), e.Win, e.Remote,
			e.Bytes, e.Received, e.Request, e.Aux, e.Level, e.Group, e.Class))
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	want := []string{
		"ENTER MPI_Win_create w0 to0 b0 rcv0 id0 aux0 lv0 g0 paradigm",
		"RMA_COLLECTIVE_BEGIN MPI_Win_create w0 to-1 b0 rcv0 id0 aux0 lv0 g0 collective",
		"RMA_WIN_CREATE MPI_Win_create w1 to-1 b0 rcv0 id0 aux0 lv0 g0 collective",
		"RMA_COLLECTIVE_END MPI_Win_create w1 to-1 b0 rcv0 id0 aux17 lv1 g0 collective",
		"LEAVE MPI_Win_create w0 to0 b0 rcv0 id0 aux0 lv0 g0 paradigm",
		"ENTER MPI_Put w0 to0 b0 rcv0 id0 aux0 lv0 g0 paradigm",
		"RMA_PUT MPI_Put w1 to3 b800 rcv0 id1 aux0 lv0 g0 message",
		"LEAVE MPI_Put w0 to0 b0 rcv0 id0 aux0 lv0 g0 paradigm",
		"ENTER MPI_Win_fence w0 to0 b0 rcv0 id0 aux0 lv0 g0 paradigm",
		"RMA_ATOMIC MPI_Win_fence w2 to1 b8 rcv8 id2 aux7 lv0 g0 message",
		"RMA_REQUEST_LOCK MPI_Win_fence w2 to-1 b0 rcv0 id3 aux1 lv0 g0 message",
		"RMA_GROUP_SYNC MPI_Win_fence w1 to-1 b0 rcv0 id0 aux0 lv1 g2 collective",
		"RMA_OP_COMPLETE_REMOTE MPI_Win_fence w1 to-1 b0 rcv0 id1 aux0 lv0 g0 message",
		"LEAVE MPI_Win_fence w0 to0 b0 rcv0 id0 aux0 lv0 g0 paradigm",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRmaDefinitionErrors(t *testing.T) {
	m := startTest(t, Config{})
	if _, err := m.defineWin(1); err == nil || !strings.Contains(err.Error(), "communicator 1 is not defined") {
		t.Errorf("a window on no communicator: %v", err)
	}
	if err := m.nameWin(1, "x"); err == nil || !strings.Contains(err.Error(), "window 1 is not defined") {
		t.Errorf("naming an undefined window: %v", err)
	}
	if _, err := m.defineRmaGroup([]int32{1, -2}); err == nil || !strings.Contains(err.Error(), "world rank -2") {
		t.Errorf("a negative rank: %v", err)
	}
	var off *Measurement
	if w, err := off.defineWin(1); w != 0 || err != nil {
		t.Errorf("disabled: %d %v", w, err)
	}
	var nl *Location
	nl.rma(encode.Record{Kind: encode.KindRmaPut}) // a nil location records nothing
	m.Close()
}

// RMA records at depth 7, under compute calls down to depth 8, in a buffer
// far too small for the compute events: like messages, they outlive every
// compute depth the policy can close.
func TestRmaKeptLongest(t *testing.T) {
	m := startTest(t, Config{BufferSize: 128 << 10, BinSize: 512, NoThrottle: true})
	world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
	win, _ := m.defineWin(world)
	var compute []Region
	for d := 1; d <= 8; d++ {
		compute = append(compute, m.Region(fmt.Sprintf("compute %d", d)))
	}
	put := m.RegionParadigm("MPI_Put", tracefile.ParadigmMPI)
	fence := m.RegionParadigm("MPI_Win_fence", tracefile.ParadigmMPI)
	loc := m.Location("rank 0")
	const steps = 2000
	for s := 0; s < steps; s++ {
		for d := 0; d < 6; d++ {
			loc.Enter(compute[d])
		}
		for k := 0; k < 20; k++ {
			loc.Enter(compute[6])
			loc.Enter(compute[7])
			loc.Leave(compute[7])
			loc.Leave(compute[6])
		}
		loc.Enter(put)
		loc.rma(encode.Record{Kind: encode.KindRmaPut, Win: uint32(win), Remote: 1, Bytes: 8, Request: uint64(s)})
		loc.Leave(put)
		loc.Enter(fence)
		loc.rma(encode.Record{Kind: encode.KindRmaCollectiveBegin})
		loc.rma(encode.Record{Kind: encode.KindRmaOpCompleteRemote, Win: uint32(win), Request: uint64(s)})
		loc.rma(encode.Record{Kind: encode.KindRmaCollectiveEnd, Win: uint32(win), Remote: -1, Level: encode.RmaLevelMemory | encode.RmaLevelProcess})
		loc.Leave(fence)
		for d := 5; d >= 0; d-- {
			loc.Leave(compute[d])
		}
	}
	m.Close()
	f := openTrace(t, m)
	reduced := false
	for _, r := range f.Reductions {
		if r.Reason == tracefile.ByDepth && r.Class != tracefile.ClassParadigm && r.Depth <= 7 {
			reduced = true
		}
		if r.Reason == tracefile.ByDepth && r.Class == tracefile.ClassParadigm {
			t.Errorf("communication closed: %+v", r)
		}
	}
	if !reduced {
		t.Fatalf("the buffer closed no compute depth: %+v", f.Reductions)
	}
	counts := map[encode.Kind]int{}
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		counts[e.Kind]++
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	for _, k := range []encode.Kind{encode.KindRmaPut, encode.KindRmaCollectiveBegin, encode.KindRmaOpCompleteRemote, encode.KindRmaCollectiveEnd} {
		if counts[k] != steps {
			t.Errorf("%v: %d kept, want %d", k, counts[k], steps)
		}
	}
	if l := &f.Locations[0]; l.Recorded != l.Accounted() {
		t.Errorf("recorded %d, accounted %d", l.Recorded, l.Accounted())
	}
}
