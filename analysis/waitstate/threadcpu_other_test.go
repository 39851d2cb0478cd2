//go:build !linux

package waitstate

import "testing"

// threadCPUTime returns -1: the benchmarks report the thread's CPU time
// per event on Linux.
func threadCPUTime(*testing.B) int64 { return -1 }
