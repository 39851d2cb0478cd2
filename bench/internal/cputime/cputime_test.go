package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestCPUTimeAdvances checks that both clocks count a busy loop and that
// the thread's time does not run ahead of the process's. The goroutine
// stays on its thread: otherwise the two readings may be two threads'.
func TestCPUTimeAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0, t0 := Process(), Thread()
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	p1, t1 := Process(), Thread()
	if t1 <= t0 || p1 <= p0 {
		t.Errorf("after 50 ms of spinning (%d loops): thread %d -> %d ns, process %v -> %v", x, t0, t1, p0, p1)
	}
}
