//go:build !linux

package measure

// osThreadID returns 0: counters (perf events) are opened on Linux only,
// so no location off Linux has a thread to check.
func osThreadID() int { return 0 }
