package waitstate

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestTickClockSame: the in-situ clock gives run.nanos's nanoseconds to
// the bit, and below bounds ticks correctly, for files with and without
// sync points, drifting either way, at several timer shifts and rates.
func TestTickClockSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	headers := []tracefile.Header{
		{TicksPerSecond: 2.4e9, ReferenceStart: 5e12, ClockSync: []tracefile.ClockSync{{Ticks: 4e12, Offset: 1e12}, {Ticks: 9e12, Offset: 1e12 + 37_000}}},
		{TicksPerSecond: 1e9, TimerShift: 3, ReferenceStart: 1000, ClockSync: []tracefile.ClockSync{{Ticks: 1 << 40, Offset: -5e9}, {Ticks: 1<<40 + 1e10, Offset: -5e9 - 81_000}, {Ticks: 1<<40 + 3e10, Offset: -5e9 - 250_000}}},
		{TicksPerSecond: 3e9, ClockSync: []tracefile.ClockSync{{Ticks: 7e12, Offset: 42}}},
		{TicksPerSecond: 0, StartTicks: 1 << 35, StartWall: time.Unix(1700000000, 123)},
	}
	for hi, h := range headers {
		f := &tracefile.File{Trace: tracefile.Trace{Header: h}}
		insitu := &run{insitu: true}
		c := insitu.clockOf(0, f)
		if c.rate <= 0 {
			t.Errorf("header %d: no rate bound", hi)
		}
		base := uint64(1<<40) >> h.TimerShift
		for range 20000 {
			tick := base + rng.Uint64N(1<<36)
			want := insitu.nanos(0, f, tick)
			if got := c.nanos(tick); got != want {
				t.Fatalf("header %d, tick %d: %d ns, run.nanos gives %d", hi, tick, got, want)
			}
			ns := want + rng.Int64N(1e7)
			b := c.below(tick, want, ns)
			if b == 0 {
				continue
			}
			// The last tick below the bound, and one between.
			for _, k := range []uint64{b - 1, tick + (b-tick)/2} {
				if got := c.nanos(k); got >= ns {
					t.Fatalf("header %d: tick %d below %d (from tick %d at %d ns) converts to %d ns, not before %d", hi, k, b, tick, want, got, ns)
				}
			}
		}
	}
}

// TestTickClockAxis: the post-mortem clock gives the run's axis to the
// bit, and below bounds ticks correctly on it: synced files drifting
// either way (the axis's origin clips early times to 0), files placed by
// their wall-clock starts, and one file alone.
func TestTickClockAxis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	synced := func(tps float64, shift uint8, off0, off1 int64) tracefile.Header {
		return tracefile.Header{TicksPerSecond: tps, TimerShift: shift, ReferenceStart: 5e12, StartTicks: 4e12,
			ClockSync: []tracefile.ClockSync{{Ticks: 4e12, Offset: off0}, {Ticks: 9e12, Offset: off1}}}
	}
	wall := func(tps float64, shift uint8, start uint64, wall int64) tracefile.Header {
		return tracefile.Header{TicksPerSecond: tps, TimerShift: shift, StartTicks: start, StartWall: time.Unix(1700000000, wall)}
	}
	for ri, headers := range [][]tracefile.Header{
		{synced(2.4e9, 0, 1e12, 1e12+37_000), synced(1e9, 3, -5e9, -5e9-81_000), synced(3e9, 0, 42, 42)},
		{wall(2.4e9, 0, 1<<35, 123), wall(0, 2, 1<<33, 9_000_000)},
		{wall(1e9, 0, 0, 0)},
	} {
		var files []*tracefile.File
		for _, h := range headers {
			files = append(files, &tracefile.File{Trace: tracefile.Trace{Header: h}})
		}
		r := &run{axis: tracefile.NewAxis(files)}
		if ri == 0 && !r.axis.Synced() {
			t.Fatal("the synced files' axis is not synced")
		}
		for i, f := range files {
			c := r.clockOf(i, f)
			if c.rate <= 0 {
				t.Errorf("run %d, file %d: no rate bound", ri, i)
			}
			base := uint64(4e12) >> f.Header.TimerShift
			for range 20000 {
				tick := base + rng.Uint64N(1<<36) - 1<<30
				want := r.nanos(i, f, tick)
				if got := c.nanos(tick); got != want {
					t.Fatalf("run %d, file %d, tick %d: %d ns, run.nanos gives %d", ri, i, tick, got, want)
				}
				ns := want + rng.Int64N(1e7)
				b := c.below(tick, want, ns)
				if b == 0 {
					continue
				}
				for _, k := range []uint64{b - 1, tick + (b-tick)/2} {
					if got := c.nanos(k); got >= ns {
						t.Fatalf("run %d, file %d: tick %d below %d (from tick %d at %d ns) converts to %d ns, not before %d", ri, i, k, b, tick, want, got, ns)
					}
				}
			}
		}
	}
}
