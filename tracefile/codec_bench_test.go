package tracefile

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkReadDefinitions reads a trace file of definitions and
// statistics (and the sample's five small bins): 2000 regions, 64 locations with a profile of
// 100 regions and 8 levels each, so that the sections' field decoding is
// what is measured, not the events.
func BenchmarkReadDefinitions(b *testing.B) {
	tr, bins := sample(b)
	for i := range 2000 {
		tr.Regions = append(tr.Regions, Region{ID: uint32(3 + i), Name: fmt.Sprintf("app::kernel_%07d(double*, int)", i), File: "src/kernel.cpp", Line: 10 + i})
	}
	for l := range 64 {
		loc := Location{ID: uint32(2 + l), Name: fmt.Sprintf("thread %d", l), Recorded: uint64(1000 * l)}
		for r := range 100 {
			loc.Profile = append(loc.Profile, ProfileEntry{Region: uint32(3 + r*7), Visits: uint64(r + 1), Inclusive: uint64(1e6 + r), Exclusive: uint64(5e5 + r)})
		}
		for d := range 8 {
			loc.Levels = append(loc.Levels, LevelStats{Depth: d + 1, Class: ClassRegion, Dropped: ByReason{ByDepth: uint64(100 * d)}})
		}
		tr.Locations = append(tr.Locations, loc)
	}
	data := encodeTrace(b, tr, bins)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Regions)+len(tr.Locations)*108), "ns/field-group")
}
