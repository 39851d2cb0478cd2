//go:build !unix

package waitstate

import "testing"

// cpuTime returns -1: the benchmarks report their CPU time per event
// where getrusage exists.
func cpuTime(*testing.B) int64 { return -1 }
