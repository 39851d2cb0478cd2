//go:build linux || darwin

package cputime

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Thread returns the calling OS thread's CPU time in ns, 0 if unknown.
// Two readings compare only on one thread: the caller locks its goroutine
// to it (runtime.LockOSThread).
func Thread() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// Process returns the user and system time of the process so far.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
