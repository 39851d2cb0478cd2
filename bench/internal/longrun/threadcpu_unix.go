//go:build linux || darwin

package longrun

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time of the calling OS thread, in ns. The
// drivers time their blocks with it, locked to their threads: on a shared
// machine the wall time of a block counts the time the thread waited for a
// CPU, which made the probe look five times dearer after the reductions
// than before on a loaded run and says nothing about the probe.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
