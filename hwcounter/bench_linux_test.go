//go:build linux

package hwcounter

import (
	"runtime"
	"testing"
)

// BenchmarkRead measures one Read of a group, the cost a probe pays per
// enter or leave. Software groups always take the read() path; hardware
// groups run where a PMU exists and log which path they took.
//
//	go test -run '^$' -bench BenchmarkRead -benchtime 2s ./hwcounter/
func BenchmarkRead(b *testing.B) {
	software := map[int][]string{1: {"task-clock"}, 3: {"task-clock", "page-faults", "minor-faults"}}
	hardware := map[int][]string{1: {"cycles"}, 3: {"cycles", "instructions", "branch-misses"}}
	for _, n := range []int{1, 3} {
		b.Run("software/"+string(rune('0'+n)), func(b *testing.B) { benchmarkRead(b, software[n]) })
	}
	has, err := HasHardwarePMU()
	for _, n := range []int{1, 3} {
		b.Run("hardware/"+string(rune('0'+n)), func(b *testing.B) {
			if !has {
				b.Skipf("no hardware PMU on this machine (HasHardwarePMU: %v, %v)", has, err)
			}
			benchmarkRead(b, hardware[n])
		})
	}
}

func benchmarkRead(b *testing.B, names []string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, err := Open(names)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	if b.N == 1 { // once per sub-benchmark, not once per round
		b.Logf("%v: read path %q (%s)", names, g.ReadPath(), g.ReadPathReason())
	}
	dst := make([]uint64, g.Len())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.Read(dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/read")
}
