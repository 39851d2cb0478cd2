// Command lib is libhmbtrace, built with -buildmode=c-shared and
// -buildmode=c-archive (see cshim/Makefile): the C probes, staging and
// finalize in C (runtime.c, probes.c, fortran.c), and the calls they make
// into Go, exported here, which hand over to package cshim.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/hmbtrace/hmbtrace/cshim"
)

// The C and Go views of a staged record must agree.
var _ = [1]struct{}{}[unsafe.Sizeof(cshim.Record{})-C.sizeof_hmb_record]

var rt cshim.Runtime

func init() {
	// From here on, calls from C into Go return: probes may flush.
	C.hmb_shim_go_ready()
}

func main() {}

//export hmbgo_start
func hmbgo_start(env **C.char, n C.int, tsc C.int, errOut **C.char) C.int {
	vars := make([]string, 0, int(n))
	for _, p := range unsafe.Slice(env, int(n)) {
		vars = append(vars, C.GoString(p))
	}
	name := "monotonic"
	if tsc != 0 {
		name = "tsc"
	}
	enabled, err := rt.Start(vars, name)
	switch {
	case err != nil:
		*errOut = C.CString(err.Error())
		return -1
	case enabled:
		return 1
	}
	return 0
}

//export hmbgo_region
func hmbgo_region(name *C.char, nlen C.size_t, file *C.char, flen C.size_t, line C.int) C.uint32_t {
	return C.uint32_t(rt.Region(C.GoStringN(name, C.int(nlen)), C.GoStringN(file, C.int(flen)), int(line)))
}

//export hmbgo_thread
func hmbgo_thread(tid C.long, name *C.char, n C.size_t) C.uint32_t {
	return C.uint32_t(rt.NewThread(int64(tid), C.GoStringN(name, C.int(n))))
}

//export hmbgo_thread_name
func hmbgo_thread_name(index C.uint32_t, name *C.char, n C.size_t) {
	if t := rt.Thread(uint32(index)); t != nil {
		t.Location().SetName(C.GoStringN(name, C.int(n)))
	}
}

//export hmbgo_replay
func hmbgo_replay(index C.uint32_t, recs *C.hmb_record, n C.size_t) C.uint64_t {
	t := rt.Thread(uint32(index))
	if t == nil {
		return C.uint64_t(n)
	}
	return C.uint64_t(t.Replay(unsafe.Slice((*cshim.Record)(unsafe.Pointer(recs)), int(n))))
}

//export hmbgo_finalize
func hmbgo_finalize() *C.char {
	if err := rt.Close(); err != nil {
		return C.CString(err.Error())
	}
	return nil
}
