package otf2

import "testing"

// Event chunks shrink as locations grow, so that a reader's chunks of all
// locations stay within ReaderChunkBudget, down to the least libotf2
// reads.
func TestEventChunkSizeFor(t *testing.T) {
	for _, c := range []struct{ locations, want int }{
		{0, 1 << 20}, {1, 1 << 20}, {1024, 1 << 20}, {1025, 512 << 10}, {2048, 512 << 10},
		{2049, 256 << 10}, {10000, 256 << 10}, {100000, 256 << 10},
	} {
		got := EventChunkSizeFor(c.locations)
		if got != c.want {
			t.Errorf("EventChunkSizeFor(%d) = %d, want %d", c.locations, got, c.want)
		}
		if got < MinChunkSize || got > DefaultEventChunkSize || (got > MinChunkSize && got*c.locations > ReaderChunkBudget) {
			t.Errorf("EventChunkSizeFor(%d) = %d breaks its bounds", c.locations, got)
		}
	}
}
