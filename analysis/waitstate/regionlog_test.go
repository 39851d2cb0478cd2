package waitstate

import (
	"math"
	"testing"
)

// TestRegionLog: what the forward pass logs reads back in order, with
// large regions, removed ancestors' depths and timestamps that go back.
func TestRegionLog(t *testing.T) {
	want := []logRecord{
		{enter: true, region: 1, tick: 100},
		{enter: true, region: 70000, depth: 5, tick: 100},
		{tick: 1 << 40},
		{enter: true, region: math.MaxUint32, tick: 1<<40 - 3}, // backwards
		{tick: math.MaxUint64},
		{enter: true, region: 0, depth: 1 << 20, tick: 0},
		{tick: 1},
		// Differences at the one-, two- and three-byte bounds of their
		// zigzag: +64, -64, +8191, -8192, +8192.
		{tick: 65},
		{enter: true, region: 2, tick: 1},
		{tick: 8192},
		{tick: 0},
		{enter: true, region: 3, tick: 8192},
		// Tokens at their one-, two- and three-byte bounds: regions 31,
		// 32, 4095 and 4096, and a two-byte token with a depth.
		{enter: true, region: 31, tick: 8200},
		{enter: true, region: 32, tick: 8300},
		{enter: true, region: 4095, tick: 8400},
		{enter: true, region: 4096, tick: 8500},
		{enter: true, region: 100, depth: 3, tick: 8600},
	}
	var l regionLog
	for _, r := range want {
		if r.enter {
			l.enter(r.region, r.tick, r.depth)
		} else {
			l.leave(r.tick)
		}
	}
	lr := logReader{buf: l.buf}
	var got logRecord
	for i, w := range want {
		if !lr.next(&got) {
			t.Fatalf("record %d: the log ended early", i)
		}
		if got != w {
			t.Fatalf("record %d: got %+v, want %+v", i, got, w)
		}
	}
	if lr.next(&got) {
		t.Fatalf("a record after the end: %+v", got)
	}
	// A truncated log ends, never reads past its end.
	lr = logReader{buf: l.buf[:len(l.buf)-1]}
	n := 0
	for lr.next(&got) {
		n++
	}
	if n != len(want)-1 {
		t.Errorf("a log cut in its last record read %d records, want %d", n, len(want)-1)
	}
}

// BenchmarkRegionLog reads a log of enters and leaves: the second pass's
// cost per event instead of the trace reader's.
func BenchmarkRegionLog(b *testing.B) {
	var l regionLog
	tick := uint64(1000)
	const n = 1 << 16
	for i := range n / 2 {
		tick += uint64(40 + i%200)
		l.enter(uint32(1+i%12), tick, 0)
		tick += uint64(100 + i%3000)
		l.leave(tick)
	}
	var r logRecord
	for b.Loop() {
		lr := logReader{buf: l.buf}
		for lr.next(&r) {
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
	b.ReportMetric(float64(len(l.buf))/n, "B/event")
}
