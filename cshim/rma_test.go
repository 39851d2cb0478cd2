package cshim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The RMA records, staged in hmb_rma's layout, replay with every field, a
// target of -1 included.
func TestReplayRma(t *testing.T) {
	rt := startRuntime(t)
	fence := rt.Region("MPI_Win_fence", "", 0)
	th := rt.Thread(rt.NewThread(44, ""))
	m := rt.Measurement()
	comm, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
	win, err := rt.DefineWin(comm)
	if err != nil {
		t.Fatal(err)
	}
	t0 := m.Now()
	var recs []Record
	add := func(dt uint64, r encode.Record) {
		mr := MakeMPIRecord(t0+dt, r)
		recs = append(recs, mr[:]...)
	}
	recs = append(recs, MakeRecord(KindEnter, t0, uint64(fence)))
	add(10, encode.Record{Kind: encode.KindRmaCollectiveBegin, Remote: -1})
	add(20, encode.Record{Kind: encode.KindRmaAtomic, Win: uint32(win), Remote: 2, Aux: encode.RmaAtomicCompareAndSwap, Bytes: 8, Received: 8, Request: 1 << 40})
	add(30, encode.Record{Kind: encode.KindRmaRequestLock, Win: uint32(win), Remote: -1, Request: 5, Aux: encode.RmaLockShared})
	add(40, encode.Record{Kind: encode.KindRmaGroupSync, Win: uint32(win), Remote: -1, Level: encode.RmaLevelMemory, Group: 3})
	add(50, encode.Record{Kind: encode.KindRmaCollectiveEnd, Win: uint32(win), Remote: -1, Aux: encode.RmaCollBarrier, Level: 3})
	recs = append(recs, MakeRecord(KindLeave, t0+60, uint64(fence)))
	if bad := th.Replay(recs); bad != 0 {
		t.Errorf("Replay: %d malformed", bad)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	f := tracetest.Open(t, m.Path())
	var got []string
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		got = append(got, fmt.Sprintf("%v w%d to%d b%d rcv%d id%d aux%d lv%d g%d", e.Kind, e.Win, e.Remote, e.Bytes, e.Received, e.Request, e.Aux, e.Level, e.Group))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ENTER w0 to0 b0 rcv0 id0 aux0 lv0 g0",
		"RMA_COLLECTIVE_BEGIN w0 to-1 b0 rcv0 id0 aux0 lv0 g0",
		"RMA_ATOMIC w1 to2 b8 rcv8 id1099511627776 aux3 lv0 g0",
		"RMA_REQUEST_LOCK w1 to-1 b0 rcv0 id5 aux1 lv0 g0",
		"RMA_GROUP_SYNC w1 to-1 b0 rcv0 id0 aux0 lv2 g3",
		"RMA_COLLECTIVE_END w1 to-1 b0 rcv0 id0 aux0 lv3 g0",
		"LEAVE w0 to0 b0 rcv0 id0 aux0 lv0 g0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
