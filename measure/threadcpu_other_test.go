//go:build !linux

package measure

import "time"

var processStart = time.Now()

// threadCPU returns the time since the test binary started: a thread's CPU
// time is read on Linux only, so elsewhere the benchmarks' CPU figures are
// wall time and count whatever waited for a CPU.
func threadCPU() time.Duration { return time.Since(processStart) }
