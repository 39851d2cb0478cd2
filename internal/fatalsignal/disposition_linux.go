package fatalsignal

import (
	"syscall"
	"unsafe"
)

// Ignored reports whether the process ignores sig now. It asks the kernel,
// not the Go runtime, whose view of a C program's dispositions dates from
// when the library was loaded.
func Ignored(sig syscall.Signal) bool {
	// The kernel's struct sigaction begins with the handler; the rest is
	// room for the flags, the restorer and the mask.
	var old [4]uintptr
	const sigIgn = 1
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), 0,
		uintptr(unsafe.Pointer(&old[0])), 8, 0, 0)
	return errno == 0 && old[0] == sigIgn
}
