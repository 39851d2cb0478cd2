//go:build unix

package waitstate

import (
	"syscall"
	"testing"
)

// cpuTime returns the process's user and system time so far, ns: on a
// loaded machine a benchmark's wall time says little.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
