package encode

import "testing"

// BenchmarkEncodeLoop encodes the deepest level stream of the bench's
// synthetic stream (compute, compute, compute, exchange, ... with gaps of
// 6-250 ticks, longer across the parent's boundary) with every technique
// on: the probes' encoding work per record, and its bytes.
func BenchmarkEncodeLoop(b *testing.B) {
	const n = 1 << 12
	type rec struct {
		t      uint64
		region uint32 // 0: a leave
	}
	recs := make([]rec, 0, n)
	x := uint64(0x9E3779B97F4A7C15)
	gap := func() uint64 {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		return (50 + x*0x2545F4914F6CDD1D%1951) >> 3
	}
	t := uint64(1 << 30)
	for len(recs) < n {
		t += 2 * gap() // the parent's leave and enter
		for _, r := range []uint32{3, 3, 3, 4} {
			t += gap()
			recs = append(recs, rec{t, r})
			t += gap()
			recs = append(recs, rec{t, 0})
		}
	}
	e := NewEncoder(All)
	bin := make([]byte, 8*n+MaxBinHeaderSize)
	bytes := 0
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		pos := e.StartBin(bin, recs[0].t, 0)
		for _, r := range recs {
			if r.region != 0 {
				pos += e.Enter(bin[pos:], r.t, 0, r.region)
			} else {
				pos += e.Leave(bin[pos:], r.t, 0)
			}
		}
		bytes = pos
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64((b.N+n-1)/n*n), "ns/record")
	b.ReportMetric(float64(bytes)/n, "B/record")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkDecodeLoop decodes the bin BenchmarkEncodeLoop writes: the
// reader's decoding work per record, the floor of every pass over a trace.
func BenchmarkDecodeLoop(b *testing.B) {
	const n = 1 << 12
	x := uint64(0x9E3779B97F4A7C15)
	gap := func() uint64 {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		return (50 + x*0x2545F4914F6CDD1D%1951) >> 3
	}
	e := NewEncoder(All)
	bin := make([]byte, 8*n+MaxBinHeaderSize)
	t := uint64(1 << 30)
	pos := e.StartBin(bin, t, 0)
	for i := 0; i < n; {
		t += 2 * gap()
		for _, r := range []uint32{3, 3, 3, 4} {
			t += gap()
			pos += e.Enter(bin[pos:], t, 0, r)
			t += gap()
			pos += e.Leave(bin[pos:], t, 0)
			i += 2
		}
	}
	bin = bin[:pos]
	d := NewDecoder(All)
	var r Record
	records := 0
	b.ResetTimer()
	for b.Loop() {
		if err := d.Reset(bin); err != nil {
			b.Fatal(err)
		}
		for d.Next(&r) {
			records++
		}
		if err := d.Err(); err != nil {
			b.Fatal(err)
		}
	}
	if records != b.N*n {
		b.Fatalf("decoded %d records, want %d", records, b.N*n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	b.ReportMetric(0, "ns/op")
}
