package measure

import "golang.org/x/sys/unix"

// osThreadID returns the calling OS thread's id, which perf counters are
// opened for.
func osThreadID() int { return unix.Gettid() }
