package measure

import "testing"

// BenchmarkReplay measures EnterAt/LeaveAt with timestamps taken earlier:
// the C shim's replay, without the clock read that Enter overlaps with.
func BenchmarkReplay(b *testing.B) {
	const round = 1 << 20
	var m *Measurement
	var loc *Location
	var r Region
	var now uint64
	rotate := func() {
		b.StopTimer()
		if m != nil {
			m.Close()
		}
		m = startTest(b, Config{BufferSize: 16 << 20})
		r = m.Region("bench")
		loc = m.Location("bench")
		now = m.Now()
		b.StartTimer()
	}
	rotate()
	for i := 0; i < b.N; i++ {
		if i%round == round-1 {
			rotate()
		}
		now += 40
		loc.EnterAt(r, now)
		now += 40
		loc.LeaveAt(r, now)
	}
	b.StopTimer()
	m.Close()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/event")
	b.ReportMetric(0, "ns/op")
}
