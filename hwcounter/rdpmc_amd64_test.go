//go:build linux && amd64

package hwcounter

import "testing"

// RDTSC is safe to execute anywhere (RDPMC is not: it faults unless the
// kernel enabled it for this process, so it runs only where a PMU exists).
func TestRDTSCAdvances(t *testing.T) {
	a := cpuCounters{}.rdtsc()
	b := cpuCounters{}.rdtsc()
	if b < a {
		t.Errorf("RDTSC went backwards: %d then %d", a, b)
	}
	if a == 0 {
		t.Error("RDTSC returned 0")
	}
}
