package measure

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the calling OS thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
