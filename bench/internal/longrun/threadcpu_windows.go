package longrun

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// getThreadTimes is kernel32's GetThreadTimes, which x/sys/windows does
// not wrap.
var getThreadTimes = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetThreadTimes")

// threadCPU returns the CPU time of the calling OS thread, in ns: its
// kernel and user times, which Windows counts in 100 ns units and
// advances at the scheduler's tick. See the Unix version for why the
// drivers time their blocks with it.
func threadCPU() int64 {
	var creation, exit, kernel, user windows.Filetime
	ok, _, _ := getThreadTimes.Call(uintptr(windows.CurrentThread()),
		uintptr(unsafe.Pointer(&creation)), uintptr(unsafe.Pointer(&exit)),
		uintptr(unsafe.Pointer(&kernel)), uintptr(unsafe.Pointer(&user)))
	if ok == 0 {
		return 0
	}
	ticks := func(t windows.Filetime) int64 { return int64(t.HighDateTime)<<32 | int64(t.LowDateTime) }
	return (ticks(kernel) + ticks(user)) * 100
}
