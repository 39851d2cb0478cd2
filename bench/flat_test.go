package main

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/buffer"
)

func TestFlatReduceDepth(t *testing.T) {
	f := newFlat(100 * flatRecordSize)
	for i := 0; !f.Full(); i++ {
		f.Put(1, buffer.ClassRegion, 1+i%4, uint32(i), uint64(i))
	}
	if f.Len() != 100 {
		t.Fatalf("%d records", f.Len())
	}
	if n := f.ReduceDepth(); n != 25 {
		t.Fatalf("removed %d records, want the 25 at depth 4", n)
	}
	for i := 0; i < f.Len(); i++ {
		r := f.buf[i*flatRecordSize:]
		if depth := int(r[2]); depth >= 4 {
			t.Fatalf("record %d at depth %d survived", i, depth)
		}
	}
	// Order is kept: regions (the original indices) still increase.
	prev := -1
	for i := 0; i < f.Len(); i++ {
		r := f.buf[i*flatRecordSize:]
		region := int(uint32(r[4]) | uint32(r[5])<<8)
		if region <= prev {
			t.Fatalf("order broken at %d", i)
		}
		prev = region
	}
}

func TestReductionCost(t *testing.T) {
	hmb, flat, err := reductionCost(1<<20, 8<<10)
	if err != nil {
		t.Fatal(err)
	}
	if hmb <= 0 || flat <= 0 {
		t.Fatalf("times %v, %v", hmb, flat)
	}
	t.Logf("1 MiB: HMB %v, flat %v", hmb, flat)
}

// BenchmarkReduction times one depth reduction of a full buffer, HMB and
// flat side by side, and reports their ratio.
func BenchmarkReduction(b *testing.B) {
	for _, mib := range []int{8, 64, 256} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			var hmbNs, flatNs float64
			for i := 0; i < b.N; i++ {
				hmb, flat, err := reductionCost(mib<<20, 8<<10)
				if err != nil {
					b.Fatal(err)
				}
				hmbNs += float64(hmb.Nanoseconds())
				flatNs += float64(flat.Nanoseconds())
			}
			b.ReportMetric(hmbNs/float64(b.N), "hmb-ns/reduction")
			b.ReportMetric(flatNs/float64(b.N), "flat-ns/reduction")
			b.ReportMetric(flatNs/hmbNs, "flat/hmb")
			b.ReportMetric(0, "ns/op")
		})
	}
}
