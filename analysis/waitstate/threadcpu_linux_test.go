package waitstate

import (
	"syscall"
	"testing"
	"unsafe"
)

// threadCPUTime returns the calling thread's CPU time so far, ns (-1: not
// known). With the benchmark locked to its thread and one worker, it is
// the replay's own work, GC assists included, without the collector's
// background threads or the scheduler's idle spinning, which a loaded
// machine inflates.
func threadCPUTime(*testing.B) int64 {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return -1
	}
	return ts.Nano()
}
