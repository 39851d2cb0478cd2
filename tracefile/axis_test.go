package tracefile

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAxisClock: AxisClock.Nanos (which Axis.Nanos calls) is the axis's
// definition to the bit: the reference clock's nanoseconds (GlobalNanos)
// less the axis's origin, clipped at 0, or the file's own shifted by its
// offset, on axes by
// wall-clock start and by clock-sync points (with drift, an early origin,
// shifted timers and rates other than 1 GHz), over ticks across the runs.
func TestAxisClock(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mk := func(rank int, wall int64, start uint64, shift uint8, tps float64, sync []ClockSync) *File {
		return &File{Trace: Trace{Header: Header{Rank: rank, StartWall: time.Unix(0, wall), TicksPerSecond: tps, TimerShift: shift,
			StartTicks: start, EndTicks: start + 1<<40, ClockSync: sync, ReferenceStart: 5000}}}
	}
	for _, files := range [][]*File{
		{mk(0, 1000, 5000, 0, 1e9, nil), mk(1, 1300, 9000, 4, 2.4e9, nil)},
		{mk(0, 1000, 4800, 0, 1e9, []ClockSync{{5000, 0}, {1 << 39, 77}}), mk(1, 9999, 9000, 3, 2.5e9, []ClockSync{{9000, -4000}, {1 << 38, -3000}})},
		{mk(0, 1000, 5000, 0, 0, []ClockSync{{5000, 0}}), mk(1, 1000, 7000, 0, 3e9, []ClockSync{{7000, 12}})},
		{mk(0, 1000, 5000, 2, 1e9, nil)},
	} {
		ax := NewAxis(files)
		for i, f := range files {
			c := ax.Clock(i, f)
			for range 20000 {
				r := rng.Uint64N(f.Header.EndTicks>>f.Header.TimerShift + 100)
				want := ax.offsets[i] + f.Nanos(r)
				if ax.Synced() {
					want = max(f.GlobalNanos(r)-ax.origin, 0)
				}
				if got := c.Nanos(r); got != want || ax.Nanos(i, f, r) != want {
					t.Fatalf("synced %v, file %d, tick %d: clock %d, axis %d", ax.Synced(), i, r, got, want)
				}
			}
		}
	}
}

// BenchmarkAxisClock converts timestamps of a file of a synced run by
// Axis.Nanos and by its AxisClock: ns per timestamp.
func BenchmarkAxisClock(b *testing.B) {
	mk := func(rank int, start uint64, sync []ClockSync) *File {
		return &File{Trace: Trace{Header: Header{Rank: rank, StartWall: time.Unix(0, 1000), TicksPerSecond: 2.4e9, StartTicks: start,
			EndTicks: start + 1<<40, ClockSync: sync, ReferenceStart: 5000}}}
	}
	files := []*File{mk(0, 5000, []ClockSync{{5000, 0}, {1 << 39, 77}}), mk(1, 9000, []ClockSync{{9000, -4000}, {1 << 38, -3000}})}
	ax := NewAxis(files)
	f := files[1]
	var sink int64
	b.Run("axis", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += ax.Nanos(1, f, 9000+uint64(i)*977)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/timestamp")
	})
	b.Run("clock", func(b *testing.B) {
		c := ax.Clock(1, f)
		for i := 0; b.Loop(); i++ {
			sink += c.Nanos(9000 + uint64(i)*977)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/timestamp")
	})
	if sink == 42 {
		b.Log(sink)
	}
}
