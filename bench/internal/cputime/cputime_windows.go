package cputime

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// getThreadTimes is kernel32's GetThreadTimes, which x/sys/windows does
// not wrap.
var getThreadTimes = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetThreadTimes")

// ns converts a duration Windows counts in 100 ns units.
func ns(t windows.Filetime) int64 { return (int64(t.HighDateTime)<<32 | int64(t.LowDateTime)) * 100 }

// Thread returns the calling OS thread's CPU time in ns, 0 if unknown.
// Two readings compare only on one thread: the caller locks its goroutine
// to it (runtime.LockOSThread).
func Thread() int64 {
	var creation, exit, kernel, user windows.Filetime
	ok, _, _ := getThreadTimes.Call(uintptr(windows.CurrentThread()),
		uintptr(unsafe.Pointer(&creation)), uintptr(unsafe.Pointer(&exit)),
		uintptr(unsafe.Pointer(&kernel)), uintptr(unsafe.Pointer(&user)))
	if ok == 0 {
		return 0
	}
	return ns(kernel) + ns(user)
}

// Process returns the user and system time of the process so far.
func Process() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	return time.Duration(ns(kernel) + ns(user))
}
