package main

/*
#include <stdint.h>
#include <string.h>
*/
import "C"

import "unsafe"

// copyC copies s into the C buffer buf of size bytes, cut to fit, with its
// terminating NUL.
func copyC(buf *C.char, size C.size_t, s string) {
	if buf == nil || size == 0 {
		return
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(size))
	n := copy(dst[:len(dst)-1], s)
	dst[n] = 0
}

//export hmbgo_code_at
func hmbgo_code_at(addr C.uint64_t, name *C.char, nsize C.size_t, file *C.char, fsize C.size_t, line *C.int) (found C.int) {
	defer contain("hmb_code_at", func() { found = 0 })
	s, ok := rt.CodeAt(uint64(addr))
	if !ok {
		return 0
	}
	copyC(name, nsize, s.Name)
	copyC(file, fsize, s.File)
	*line = C.int(s.Line)
	return 1
}
