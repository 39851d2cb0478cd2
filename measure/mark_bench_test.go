package measure

import (
	"runtime"
	"testing"
)

// BenchmarkAnnotations times each annotation record on its own, as
// benchNested times enters and leaves, in 64 MiB measurements made new every
// 2^21 iterations so that the buffer never fills: a mark; EnterInt and
// Leave (three records: enter, parameter, leave); EnterString and Leave;
// a channel Send and Recv on one lane (two records).
func BenchmarkAnnotations(b *testing.B) {
	for _, c := range []struct {
		name    string
		records int
		run     func(loc *Location, m *Measurement) func()
	}{
		{"mark", 1, func(loc *Location, m *Measurement) func() {
			k := m.Mark("k")
			return func() { loc.Mark(k) }
		}},
		{"enter-int", 3, func(loc *Location, m *Measurement) func() {
			r, p := m.Region("r"), m.IntParam("p")
			return func() { loc.EnterInt(r, p, 42); loc.Leave(r) }
		}},
		{"enter-string", 3, func(loc *Location, m *Measurement) func() {
			r, p := m.Region("r"), m.StringParam("p")
			return func() { loc.EnterString(r, p, "fast"); loc.Leave(r) }
		}},
		{"channel", 2, func(loc *Location, m *Measurement) func() {
			ch := m.Channel("c")
			return func() { ch.Recv(loc, ch.Send(loc, 64), 64) }
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			const round = 1 << 21
			var m *Measurement
			var step func()
			var kept uint64
			rotate := func() {
				b.StopTimer()
				if m != nil {
					m.Close()
					kept += m.Stats().Kept
				}
				m = startTest(b, Config{BufferSize: 64 << 20, NoThrottle: true})
				step = c.run(m.Location("bench"), m)
				b.StartTimer()
			}
			rotate()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU()
			for i := 0; i < b.N; i++ {
				if i%round == round-1 {
					rotate()
				}
				step()
			}
			records := float64(c.records * b.N)
			ns := float64(b.Elapsed().Nanoseconds()) / records
			cpuNs := float64(threadCPU()-cpu) / records // rotations included: a few per million iterations
			b.StopTimer()
			m.Close()
			if kept += m.Stats().Kept; kept != uint64(c.records*b.N) {
				b.Fatalf("kept %d of %d records", kept, c.records*b.N)
			}
			b.ReportMetric(ns, "ns/record")
			b.ReportMetric(cpuNs, "cpu-ns/record")
			b.ReportMetric(0, "ns/op")
		})
	}
}
