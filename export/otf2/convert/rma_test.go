package convert

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/measureinternal"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// RmaCheck is what testdata/check_rma.py prints.
type RmaCheck struct {
	Wins map[string]struct {
		Name    string   `json:"name"`
		Members []uint64 `json:"members"`
	} `json:"wins"`
	Created            map[string][]uint64 `json:"created"`
	Destroyed          map[string][]uint64 `json:"destroyed"`
	Ops                map[string][]string `json:"ops"`
	NoLocal            []string            `json:"no_local"`
	NoRemote           []string            `json:"no_remote"`
	UnknownCompletions []string            `json:"unknown_completions"`
	Locks              map[string][]string `json:"locks"`
	Syncs              map[string][]string `json:"syncs"`
	Balanced           bool                `json:"balanced"`
	Collectives        map[string][]string `json:"collectives"`
}

// CheckRmaPython reads anchor with python3-otf2 through check_rma.py.
func checkRmaPython(t *testing.T, anchor string) RmaCheck {
	t.Helper()
	out := otf2Python(t, filepath.Join("testdata", "check_rma.py"), anchor)
	var res RmaCheck
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

// rmaRun records three ranks that use two windows, one on MPI_COMM_WORLD
// and one on a communicator of ranks 2 and 0 (in that order), as the MPI
// wrappers record them: a fence epoch with a put and a get on the first, a
// lock epoch with an atomic on the second (ranks 0 and 2), a post on the
// first, and both freed.
func rmaRun(t *testing.T) []*tracefile.File {
	dir := t.TempDir()
	var files []*tracefile.File
	// RMA reaches a measurement through the C shim only: its calls.
	mi := measureinternal.Of[*measure.Location, *measure.Measurement]()
	for r := 0; r < 3; r++ {
		rec := newRecorder(t, dir, r, measure.Config{})
		m := rec.m
		world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
		m.DefineComm("MPI_COMM_SELF", 0, []int32{int32(r)}, nil)
		var sub measure.CommID
		if r != 1 {
			sub, _ = m.DefineComm("", world, []int32{2, 0}, nil)
		}
		create, fence, put, get := m.RegionParadigm("MPI_Win_create", tracefile.ParadigmMPI), m.RegionParadigm("MPI_Win_fence", tracefile.ParadigmMPI),
			m.RegionParadigm("MPI_Put", tracefile.ParadigmMPI), m.RegionParadigm("MPI_Get", tracefile.ParadigmMPI)
		lock, unlock, fop := m.RegionParadigm("MPI_Win_lock", tracefile.ParadigmMPI), m.RegionParadigm("MPI_Win_unlock", tracefile.ParadigmMPI),
			m.RegionParadigm("MPI_Fetch_and_op", tracefile.ParadigmMPI)
		post, free := m.RegionParadigm("MPI_Win_post", tracefile.ParadigmMPI), m.RegionParadigm("MPI_Win_free", tracefile.ParadigmMPI)
		loc := m.Location(fmt.Sprintf("rank %d", r))
		now := rec.t0
		tick := func() uint64 { now += 10; return now }
		rma := func(rc encode.Record) { mi.RecordAt(loc, rc, tick()) }
		call := func(region measure.Region, recs ...encode.Record) {
			loc.EnterAt(region, tick())
			for _, rc := range recs {
				rma(rc)
			}
			loc.LeaveAt(region, tick())
		}
		begin := encode.Record{Kind: encode.KindRmaCollectiveBegin}
		w1, _ := mi.DefineWin(m, uint32(world))
		call(create, begin, encode.Record{Kind: encode.KindRmaWinCreate, Win: uint32(w1)},
			encode.Record{Kind: encode.KindRmaCollectiveEnd, Win: uint32(w1), Remote: -1, Aux: encode.RmaCollCreateHandle, Level: encode.RmaLevelProcess})
		var w2 uint32
		if r != 1 {
			w2, _ = mi.DefineWin(m, uint32(sub))
			if err := mi.NameWin(m, w2, "sub"); err != nil {
				t.Fatal(err)
			}
			call(create, begin, encode.Record{Kind: encode.KindRmaWinCreate, Win: uint32(w2)},
				encode.Record{Kind: encode.KindRmaCollectiveEnd, Win: uint32(w2), Remote: -1, Aux: encode.RmaCollCreateHandle, Level: encode.RmaLevelProcess})
		}
		fenceEnd := encode.Record{Kind: encode.KindRmaCollectiveEnd, Win: uint32(w1), Remote: -1, Aux: encode.RmaCollBarrier, Level: 3}
		call(fence, begin, fenceEnd)
		call(put, encode.Record{Kind: encode.KindRmaPut, Win: uint32(w1), Remote: int64((r + 1) % 3), Bytes: 80, Request: 1})
		call(get, encode.Record{Kind: encode.KindRmaGet, Win: uint32(w1), Remote: int64((r + 2) % 3), Bytes: 16, Request: 2})
		call(fence, begin,
			encode.Record{Kind: encode.KindRmaOpCompleteNonBlock, Win: uint32(w1), Request: 1},
			encode.Record{Kind: encode.KindRmaOpCompleteRemote, Win: uint32(w1), Request: 1},
			encode.Record{Kind: encode.KindRmaOpCompleteNonBlock, Win: uint32(w1), Request: 2},
			encode.Record{Kind: encode.KindRmaOpCompleteRemote, Win: uint32(w1), Request: 2},
			fenceEnd)
		if r != 1 {
			other := int64(2 - r)
			call(lock, encode.Record{Kind: encode.KindRmaRequestLock, Win: uint32(w2), Remote: other, Aux: encode.RmaLockShared})
			call(fop, encode.Record{Kind: encode.KindRmaAtomic, Win: uint32(w2), Remote: other, Aux: encode.RmaAtomicFetchAndAccumulate,
				Bytes: 8, Received: 8, Request: 3})
			call(unlock,
				encode.Record{Kind: encode.KindRmaOpCompleteNonBlock, Win: uint32(w2), Request: 3},
				encode.Record{Kind: encode.KindRmaOpCompleteRemote, Win: uint32(w2), Request: 3},
				encode.Record{Kind: encode.KindRmaReleaseLock, Win: uint32(w2), Remote: other})
		}
		g, _ := mi.DefineRmaGroup(m, []int32{int32((r + 1) % 3)})
		call(post, encode.Record{Kind: encode.KindRmaGroupSync, Win: uint32(w1), Level: encode.RmaLevelProcess, Group: uint32(g)})
		call(post, encode.Record{Kind: encode.KindRmaPut, Win: 9, Remote: 0, Bytes: 1, Request: 9}) // an undefined window: left out
		for _, w := range []uint32{w2, w1} {
			if w == 0 {
				continue
			}
			call(free, begin, encode.Record{Kind: encode.KindRmaWinDestroy, Win: uint32(w)},
				encode.Record{Kind: encode.KindRmaCollectiveEnd, Win: uint32(w), Remote: -1, Aux: encode.RmaCollDestroyHandle, Level: encode.RmaLevelProcess})
		}
		files = append(files, tracetest.Finish(t, m))
	}
	return files
}

func TestRmaExport(t *testing.T) {
	files := rmaRun(t)
	anchor, st := export(t, files, otf2.Options{})
	if st.RmaOperations != 8 || st.RmaLeftOut != 3 {
		t.Errorf("stats: %d RMA operations, %d left out; want 8 and 3", st.RmaOperations, st.RmaLeftOut)
	}
	tracetest.RequireTool(t, "otf2-print", otf2print.DebianPackage)
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	res := checkRmaPython(t, anchor)
	wins := map[string]string{}
	for ref, w := range res.Wins {
		wins[ref] = fmt.Sprintf("%s %v", w.Name, w.Members)
	}
	if want := map[string]string{"0": "MPI window 0 [0 1 2]", "1": "sub [2 0]"}; !reflect.DeepEqual(wins, want) {
		t.Errorf("windows %v, want %v", wins, want)
	}
	if want := map[string][]uint64{"0": {0, 1, 2}, "1": {0, 2}}; !reflect.DeepEqual(res.Created, want) || !reflect.DeepEqual(res.Destroyed, want) {
		t.Errorf("created %v, destroyed %v, want %v", res.Created, res.Destroyed, want)
	}
	wantOps := map[string][]string{
		"0": {"RmaPut 0 1 80 0", "RmaGet 0 2 16 0", "RmaAtomic:FETCH_AND_ACCUMULATE 1 2 8 8"},
		"1": {"RmaPut 0 2 80 0", "RmaGet 0 0 16 0"},
		"2": {"RmaPut 0 0 80 0", "RmaGet 0 1 16 0", "RmaAtomic:FETCH_AND_ACCUMULATE 1 0 8 8"},
	}
	if !reflect.DeepEqual(res.Ops, wantOps) {
		t.Errorf("operations %v, want %v", res.Ops, wantOps)
	}
	if len(res.NoLocal)+len(res.NoRemote)+len(res.UnknownCompletions) != 0 || !res.Balanced {
		t.Errorf("no local completion %v, no remote %v, unknown %v, collectives balanced %v", res.NoLocal, res.NoRemote, res.UnknownCompletions, res.Balanced)
	}
	if want := map[string][]string{"0": {"request 1 2 SHARED", "release 1 2"}, "2": {"request 1 0 SHARED", "release 1 0"}}; !reflect.DeepEqual(res.Locks, want) {
		t.Errorf("locks %v, want %v", res.Locks, want)
	}
	if got := strings.Join(res.Syncs["1"], ","); got != "group 1 0 2" {
		t.Errorf("rank 1's group syncs %q, want the post with rank 2", got)
	}
	if got := strings.Join(res.Collectives["1"], ","); got != "CREATE_HANDLE 1 0,BARRIER 3 0,BARRIER 3 0,DESTROY_HANDLE 1 0" {
		t.Errorf("rank 1's RMA collectives %q", got)
	}
}
