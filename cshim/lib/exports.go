// Command lib is libhmbtrace, built with -buildmode=c-shared and
// -buildmode=c-archive (see cshim/Makefile): the C probes, staging and
// finalize in C (runtime.c, probes.c, fortran.c), and the calls they make
// into Go, exported here, which hand over to package cshim.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "hmbtrace.h"
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/cshim"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The C and Go views of a staged record must agree, and so must the kinds
// of an MPI record (each index is 0 only when the two are equal).
var (
	_ = [1]struct{}{}[unsafe.Sizeof(cshim.Record{})-C.sizeof_hmb_record]
	_ = [1]struct{}{}[C.HMB_KIND_MPI-cshim.KindMPI]
	_ = [1]struct{}{}[C.HMB_MPI_RECORDS-cshim.MPIRecords]
	_ = [1]struct{}{}[(C.HMB_ENC_SEND-int(encode.KindSend))|(C.HMB_ENC_RECV-int(encode.KindRecv))|
		(C.HMB_ENC_COLLECTIVE-int(encode.KindCollective))|(C.HMB_ENC_ISEND-int(encode.KindIsend))|
		(C.HMB_ENC_ISEND_COMPLETE-int(encode.KindIsendComplete))|(C.HMB_ENC_IRECV_REQUEST-int(encode.KindIrecvRequest))|
		(C.HMB_ENC_IRECV-int(encode.KindIrecv))|(C.HMB_ENC_REQUEST_CANCELLED-int(encode.KindRequestCancelled))|
		(C.HMB_ENC_COLL_REQUEST-int(encode.KindCollRequest))|(C.HMB_ENC_COLL_COMPLETE-int(encode.KindCollComplete))|
		(C.HMB_ENC_TASK_CREATE-int(encode.KindTaskCreate))|(C.HMB_ENC_TASK_SWITCH-int(encode.KindTaskSwitch))|
		(C.HMB_ENC_TASK_COMPLETE-int(encode.KindTaskComplete))|(C.HMB_ENC_TASK_SUSPEND-int(encode.KindTaskSuspend))]
	// The RMA kinds and types of hmbtrace.h are encode's.
	_ = [1]struct{}{}[(C.HMB_RMA_WIN_CREATE-int(encode.KindRmaWinCreate))|(C.HMB_RMA_OP_COMPLETE_REMOTE-int(encode.KindRmaOpCompleteRemote))|
		(C.HMB_RMA_PUT-int(encode.KindRmaPut))|(C.HMB_RMA_ATOMIC-int(encode.KindRmaAtomic))|(C.HMB_RMA_GROUP_SYNC-int(encode.KindRmaGroupSync))|
		(C.HMB_RMA_LOCK_SHARED-encode.RmaLockShared)|(C.HMB_RMA_ATOMIC_FETCH_AND_ACCUMULATE-encode.RmaAtomicFetchAndAccumulate)|
		(C.HMB_RMA_ATOMIC_COMPARE_AND_SWAP-encode.RmaAtomicCompareAndSwap)|(C.HMB_RMA_LEVEL_MEMORY-encode.RmaLevelMemory)|
		(C.HMB_RMA_COLL_DESTROY_HANDLE_AND_DEALLOCATE-encode.RmaCollDestroyHandleAndDeallocate)|(C.HMB_RMA_COLL_CREATE_HANDLE-encode.RmaCollCreateHandle)]
)

var rt cshim.Runtime

func init() {
	// A signal writes the trace as hmb_finalize does, staged records included.
	rt.OnSignal = func() {
		if C.hmb_finalize() != 0 {
			fmt.Fprintln(os.Stderr, C.GoString(C.hmb_last_error()))
		}
	}
	// From here on, calls from C into Go return: probes may flush.
	C.hmb_shim_go_ready()
}

func main() {}

var panicOnce sync.Once

// contain keeps a panic of the Go side from crossing into C, where it would
// kill the program: it is told on stderr, once, and the export returns its
// failure value. Deferred by every export.
func contain(what string, onPanic func()) {
	if p := recover(); p != nil {
		panicOnce.Do(func() {
			fmt.Fprintf(os.Stderr, "hmbtrace: internal error in %s: %v\n%s", what, p, debug.Stack())
		})
		onPanic()
	}
}

//export hmbgo_start
func hmbgo_start(env **C.char, n C.int, tsc C.int, fn C.uint64_t, errOut **C.char, direct, early *C.int) (rc C.int) {
	defer contain("hmb_init", func() {
		*errOut = C.CString("hmbtrace: hmb_init: internal error")
		rc = -1
	})
	vars := make([]string, 0, int(n))
	for _, p := range unsafe.Slice(env, int(n)) {
		vars = append(vars, C.GoString(p))
	}
	name := "monotonic"
	if tsc != 0 {
		name = "tsc"
	}
	enabled, err := rt.StartFrom(vars, name, uint64(fn))
	switch {
	case err != nil:
		*errOut = C.CString(err.Error())
		return -1
	case enabled:
		if rt.ProbeMode() == cshim.ProbeDirect {
			*direct = 1
		}
		if rt.LocateEarly() {
			*early = 1
		}
		return 1
	}
	return 0
}

//export hmbgo_region
func hmbgo_region(name *C.char, nlen C.size_t, file *C.char, flen C.size_t, line C.int, paradigm C.int) (id C.uint32_t) {
	defer contain("hmb_region", func() { id = 0 })
	return C.uint32_t(rt.RegionParadigm(C.GoStringN(name, C.int(nlen)), C.GoStringN(file, C.int(flen)), int(line), tracefile.Paradigm(paradigm)))
}

//export hmbgo_comm_define
func hmbgo_comm_define(name *C.char, nlen C.size_t, parent C.uint32_t, members *C.int32_t, nmembers C.size_t,
	remote *C.int32_t, nremote C.size_t, errOut **C.char) (id C.uint32_t) {
	defer contain("hmb_comm_define", func() { id = 0 })
	group := func(p *C.int32_t, n C.size_t) []int32 {
		if n == 0 {
			return nil
		}
		return unsafe.Slice((*int32)(unsafe.Pointer(p)), int(n))
	}
	var rem []int32
	if nremote > 0 {
		rem = group(remote, nremote)
	}
	c, err := rt.Measurement().DefineComm(C.GoStringN(name, C.int(nlen)), measure.CommID(parent), group(members, nmembers), rem)
	if err != nil {
		*errOut = C.CString("hmbtrace: hmb_comm_define: " + err.Error())
		return 0
	}
	return C.uint32_t(c)
}

//export hmbgo_win_define
func hmbgo_win_define(comm C.uint32_t, errOut **C.char) (id C.uint32_t) {
	defer contain("hmb_win_define", func() { id = 0 })
	w, err := rt.DefineWin(measure.CommID(comm))
	if err != nil {
		*errOut = C.CString("hmbtrace: hmb_win_define: " + err.Error())
		return 0
	}
	return C.uint32_t(w)
}

//export hmbgo_win_name
func hmbgo_win_name(win C.uint32_t, name *C.char, nlen C.size_t, errOut **C.char) {
	defer contain("hmb_win_name", func() {})
	if err := rt.NameWin(uint32(win), C.GoStringN(name, C.int(nlen))); err != nil {
		*errOut = C.CString("hmbtrace: hmb_win_name: " + err.Error())
	}
}

//export hmbgo_rma_group_define
func hmbgo_rma_group_define(members *C.int32_t, n C.size_t, errOut **C.char) (id C.uint32_t) {
	defer contain("hmb_rma_group_define", func() { id = 0 })
	var g []int32
	if n > 0 {
		g = unsafe.Slice((*int32)(unsafe.Pointer(members)), int(n))
	}
	gid, err := rt.DefineRmaGroup(g)
	if err != nil {
		*errOut = C.CString("hmbtrace: hmb_rma_group_define: " + err.Error())
		return 0
	}
	return C.uint32_t(gid)
}

//export hmbgo_thread
func hmbgo_thread(tid C.long, name *C.char, n C.size_t, direct C.int, busy *C.int, loc, epoch *unsafe.Pointer) (index C.uint32_t) {
	defer contain("a thread's first probe", func() { index = C.uint32_t(cshim.NoThread) })
	i := rt.NewThread(int64(tid), C.GoStringN(name, C.int(n)))
	if i != cshim.NoThread && direct != 0 {
		// Pinned until the measurement closes: C may keep them.
		*loc, *epoch = rt.PinForC(i, (*int32)(unsafe.Pointer(busy)))
	}
	return C.uint32_t(i)
}

//export hmbgo_interrupt
func hmbgo_interrupt(index C.uint32_t) {
	defer contain("hmb_finalize", func() {})
	rt.Interrupt(uint32(index))
}

//export hmbgo_func_region
func hmbgo_func_region(index C.uint32_t, addr C.uint64_t) (region C.uint32_t) {
	defer contain("a function's first probe", func() { region = 0 })
	if t := rt.Thread(uint32(index)); t != nil {
		return C.uint32_t(t.FuncRegion(uint64(addr)))
	}
	return 0
}

//export hmbgo_thread_name
func hmbgo_thread_name(index C.uint32_t, name *C.char, n C.size_t) {
	defer contain("hmb_thread_name", func() {})
	if t := rt.Thread(uint32(index)); t != nil {
		t.Location().SetName(C.GoStringN(name, C.int(n)))
	}
}

//export hmbgo_thread_team
func hmbgo_thread_team(index C.uint32_t, levels C.int, numbers *C.int) {
	defer contain("hmb_thread_team", func() {})
	t := rt.Thread(uint32(index))
	if t == nil || levels <= 0 {
		return
	}
	team := make([]int, levels)
	for i, n := range unsafe.Slice(numbers, int(levels)) {
		team[i] = int(n)
	}
	t.SetTeam(team)
}

//export hmbgo_replay
func hmbgo_replay(index C.uint32_t, recs *C.hmb_record, n C.size_t, drops, mdrops, cdrops *C.uint64_t, ndrops C.size_t) (malformed C.uint64_t) {
	batch := unsafe.Slice((*cshim.Record)(unsafe.Pointer(recs)), int(n))
	// A panic loses the batch: the C side counts it as dropped.
	defer contain("a replay", func() { malformed = C.uint64_t(cshim.Probes(batch)) })
	t := rt.Thread(uint32(index))
	if t == nil {
		return C.uint64_t(cshim.Probes(batch))
	}
	// The direct probes' drops came before the staged records.
	counts := func(p *C.uint64_t) []uint64 { return unsafe.Slice((*uint64)(unsafe.Pointer(p)), int(ndrops)) }
	t.AddDropped(counts(drops), counts(mdrops), counts(cdrops))
	return C.uint64_t(t.Replay(batch))
}

//export hmbgo_thread_done
func hmbgo_thread_done(index C.uint32_t) {
	defer contain("a thread's exit", func() {})
	if t := rt.Thread(uint32(index)); t != nil {
		t.Location().Done()
	}
}

//export hmbgo_finalize
func hmbgo_finalize(atExit C.int) (msg *C.char) {
	defer contain("hmb_finalize", func() { msg = C.CString("hmbtrace: hmb_finalize: internal error") })
	if err := rt.CloseAt(atExit != 0); err != nil {
		return C.CString(err.Error())
	}
	return nil
}

//export hmbgo_phase
func hmbgo_phase(region C.uint32_t) {
	defer contain("hmb_phase", func() {})
	rt.Measurement().SetPhase(measure.Region(region))
}

//export hmbgo_set_rank
func hmbgo_set_rank(rank C.int) {
	defer contain("hmb_set_rank", func() {})
	rt.Measurement().SetRank(int(rank))
}

//export hmbgo_start_ticks
func hmbgo_start_ticks() (t C.uint64_t) {
	defer contain("hmb_start_ticks", func() { t = 0 })
	if m := rt.Measurement(); m.Enabled() {
		return C.uint64_t(m.StartTicks())
	}
	return 0
}

//export hmbgo_clock_sync
func hmbgo_clock_sync(ticks C.uint64_t, offset C.int64_t, ref C.uint64_t) {
	defer contain("hmb_clock_sync", func() {})
	rt.Measurement().SyncClock(uint64(ticks), int64(offset), uint64(ref))
}

//export hmbgo_synced_ns
func hmbgo_synced_ns(ticks C.uint64_t, ns *C.int64_t) (ok C.int) {
	defer contain("hmb_synced_ns", func() { ok = 0 })
	v, synced := rt.SyncedNanos(uint64(ticks))
	if !synced {
		return 0
	}
	*ns = C.int64_t(v)
	return 1
}

//export hmbgo_run_end
func hmbgo_run_end(archive, aggregate *C.int, timeoutNs *C.int64_t) {
	defer contain("hmb_run_end", func() { *archive = 0 })
	a, n, d := rt.RunEnd()
	if a {
		*archive = 1
	}
	*aggregate = C.int(min(n, math.MaxInt32))
	*timeoutNs = C.int64_t(d.Nanoseconds())
}

//export hmbgo_slot_capacity
func hmbgo_slot_capacity(world C.int) (n C.int64_t) {
	defer contain("hmb_slot_capacity", func() { n = 0 })
	return C.int64_t(rt.SlotCapacity(int(world)))
}

//export hmbgo_archive_create
func hmbgo_archive_create(group, groups, world C.int, ranks *C.int32_t, capacity *C.int64_t, n C.int, offsets *C.int64_t) (msg *C.char) {
	defer contain("hmb_archive_create", func() { msg = C.CString("hmbtrace: hmb_archive_create: internal error") })
	// No ranks: the archive of the run's results only (results_end).
	if n < 0 || n > 0 && (ranks == nil || capacity == nil || offsets == nil) {
		return C.CString("hmbtrace: hmb_archive_create: no ranks")
	}
	rs := make([]int, int(n))
	caps := make([]int64, int(n))
	if n > 0 {
		for i, r := range unsafe.Slice(ranks, int(n)) {
			rs[i] = int(r)
		}
		for i, c := range unsafe.Slice(capacity, int(n)) {
			caps[i] = int64(c)
		}
	}
	off, err := rt.CreateArchive(int(group), int(groups), int(world), rs, caps)
	if err != nil {
		return C.CString(err.Error())
	}
	out := unsafe.Slice(offsets, int(n))
	if len(off) != len(out) {
		return C.CString(fmt.Sprintf("hmbtrace: hmb_archive_create: %d slot offsets for %d ranks", len(off), len(out)))
	}
	for i := range out {
		out[i] = C.int64_t(off[i])
	}
	return nil
}

//export hmbgo_archive_slot
func hmbgo_archive_slot(group, groups, world C.int, off, capacity C.int64_t) {
	defer contain("hmb_archive_slot", func() {})
	rt.SetArchiveSlot(int(group), int(groups), int(world), int64(off), int64(capacity))
}

// The passes of the collective end (cshim/runresults.go), numbered by
// shim.h's enum hmb_pass. The buffers given back are C's malloc'd memory,
// for the caller to free.

// The pass numbers are cshim's: a mismatch fails the build.
var (
	_ = [1]int{}[cshim.PassProfile-C.HMB_PASS_PROFILE]
	_ = [1]int{}[cshim.PassComm-C.HMB_PASS_COMM]
	_ = [1]int{}[cshim.PassChoice-C.HMB_PASS_CHOICE]
	_ = [1]int{}[cshim.PassSegments-C.HMB_PASS_SEGMENTS]
	_ = [1]int{}[cshim.PassPhases-C.HMB_PASS_PHASES]
	_ = [1]int{}[cshim.PassReplay-C.HMB_PASS_REPLAY]
	_ = [1]int{}[cshim.PassWaitStates-C.HMB_PASS_WAITSTATES]
)

// goBytes copies n bytes at p; none for a NULL p.
func goBytes(p *C.char, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(p), C.int(n))
}

//export hmbgo_pass_make
func hmbgo_pass_make(pass, rank C.int, in *C.char, inN C.size_t, out **C.char, n *C.size_t) (msg *C.char) {
	defer contain("hmb_pass_make", func() { msg = C.CString("hmbtrace: hmb_pass_make: internal error") })
	b, err := rt.PassMake(int(pass), int(rank), goBytes(in, inN))
	if err != nil {
		return C.CString(err.Error())
	}
	*out, *n = (*C.char)(C.CBytes(b)), C.size_t(len(b))
	return nil
}

//export hmbgo_pass_merge
func hmbgo_pass_merge(pass C.int, a *C.char, an C.size_t, isHeld C.int, b *C.char, bn C.size_t) (msg *C.char) {
	defer contain("hmb_pass_merge", func() { msg = C.CString("hmbtrace: hmb_pass_merge: internal error") })
	if err := cshim.PassMerge(int(pass), goBytes(a, an), isHeld != 0, goBytes(b, bn)); err != nil {
		return C.CString(err.Error())
	}
	return nil
}

//export hmbgo_pass_held
func hmbgo_pass_held(pass C.int, out **C.char, n *C.size_t) (msg *C.char) {
	defer contain("hmb_pass_held", func() { msg = C.CString("hmbtrace: hmb_pass_held: internal error") })
	m, err := cshim.PassHeld(int(pass))
	if err != nil {
		return C.CString(err.Error())
	}
	*out, *n = (*C.char)(C.CBytes(m)), C.size_t(len(m))
	return nil
}

//export hmbgo_last_usage
func hmbgo_last_usage(at *C.uint64_t) (msg *C.char) {
	defer contain("hmb_last_error", func() { msg = nil })
	s, ns := rt.LastUsage()
	if s == "" {
		return nil
	}
	*at = C.uint64_t(ns)
	return C.CString(s)
}

//export hmbgo_pass_set
func hmbgo_pass_set(pass C.int, p *C.char, n C.size_t, isHeld C.int, next **C.char, nextN *C.size_t) (msg *C.char) {
	defer contain("hmb_pass_set", func() { msg = C.CString("hmbtrace: hmb_pass_set: internal error") })
	b, err := rt.PassSet(int(pass), goBytes(p, n), isHeld != 0)
	if err != nil {
		return C.CString(err.Error())
	}
	if len(b) > 0 {
		*next, *nextN = (*C.char)(C.CBytes(b)), C.size_t(len(b))
	}
	return nil
}

//export hmbgo_results_only
func hmbgo_results_only() (only C.int) {
	defer contain("hmb_results_only", func() { only = 0 })
	if rt.ResultsOnly() {
		return 1
	}
	return 0
}

//export hmbgo_results_written
func hmbgo_results_written(world C.int) {
	defer contain("hmb_results_written", func() {})
	rt.ResultsWritten(int(world))
}

//export hmbgo_pass_end
func hmbgo_pass_end() {
	defer contain("hmb_pass_end", func() {})
	rt.PassEnd()
}

// The unification of the run's definitions (cshim/rundefs.go), as the run
// profile's reduction above.

//export hmbgo_run_definitions
func hmbgo_run_definitions(out **C.char, n *C.size_t) (msg *C.char) {
	defer contain("hmb_run_definitions", func() { msg = C.CString("hmbtrace: hmb_run_definitions: internal error") })
	b, err := rt.RunDefinitions()
	if err != nil {
		return C.CString(err.Error())
	}
	*out, *n = (*C.char)(C.CBytes(b)), C.size_t(len(b))
	return nil
}

//export hmbgo_run_defs_merge
func hmbgo_run_defs_merge(a *C.char, an C.size_t, isHeld C.int, b *C.char, bn C.size_t) (msg *C.char) {
	defer contain("hmb_run_defs_merge", func() { msg = C.CString("hmbtrace: hmb_run_defs_merge: internal error") })
	if err := cshim.MergeRunDefinitions(goBytes(a, an), isHeld != 0, goBytes(b, bn)); err != nil {
		return C.CString("hmbtrace: hmb_run_defs_merge: " + err.Error())
	}
	return nil
}

//export hmbgo_run_defs_held
func hmbgo_run_defs_held(out **C.char, n *C.size_t) (msg *C.char) {
	defer contain("hmb_run_defs_held", func() { msg = C.CString("hmbtrace: hmb_run_defs_held: internal error") })
	m, err := cshim.RunDefinitionsHeld()
	if err != nil {
		return C.CString("hmbtrace: hmb_run_defs_held: " + err.Error())
	}
	*out, *n = (*C.char)(C.CBytes(m)), C.size_t(len(m))
	return nil
}

//export hmbgo_run_set_definitions
func hmbgo_run_set_definitions(p *C.char, n C.size_t, isHeld C.int) (msg *C.char) {
	defer contain("hmb_run_set_definitions", func() { msg = C.CString("hmbtrace: hmb_run_set_definitions: internal error") })
	if err := rt.SetRunDefinitions(goBytes(p, n), isHeld != 0); err != nil {
		return C.CString("hmbtrace: hmb_run_set_definitions: " + err.Error())
	}
	return nil
}
