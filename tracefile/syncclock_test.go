package tracefile

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestSyncClockExact: SyncClock.Nanos is the reference clock's time by
// the sync points' linear interpolation, rounded: checked against the
// same interpolation in exact rational arithmetic, for drifts, offsets,
// shifts and rates of both signs and sizes, ticks from a machine up for
// days (2^50 ticks) and before and after the sync points. It may differ
// from the exact rounding only where the exact value lies within a
// thousandth of a nanosecond of a half, and never by more than one; it
// never goes backwards.
func TestSyncClockExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		start := uint64(1)<<50 + rng.Uint64N(1<<40)
		h := Header{StartTicks: start, ReferenceStart: start - 1e6 + rng.Uint64N(2e6),
			TicksPerSecond: []float64{1e9, 2.4e9, 3.1e9, 0}[trial%4], TimerShift: uint8(trial % 5)}
		off0 := rng.Int64N(2e9) - 1e9
		s0 := start + rng.Uint64N(1e6)
		h.ClockSync = []ClockSync{{s0, off0}}
		if trial%3 != 0 {
			h.ClockSync = append(h.ClockSync, ClockSync{s0 + 1e9 + rng.Uint64N(1e12), off0 + rng.Int64N(2e6) - 1e6})
		}
		tr := &Trace{Header: h}
		c, ok := tr.SyncClock()
		if !ok {
			t.Fatal("no SyncClock with sync points")
		}
		exact := func(reduced uint64) *big.Rat {
			x := new(big.Rat).SetInt(new(big.Int).SetUint64(reduced << h.TimerShift))
			s := h.ClockSync
			off := new(big.Rat).SetInt64(s[0].Offset)
			if n := len(s); n > 1 {
				d := new(big.Rat).Sub(x, new(big.Rat).SetInt(new(big.Int).SetUint64(s[0].Ticks)))
				d.Mul(d, big.NewRat(s[n-1].Offset-s[0].Offset, 1))
				d.Quo(d, new(big.Rat).SetInt(new(big.Int).SetUint64(s[n-1].Ticks-s[0].Ticks)))
				off.Add(off, d)
			}
			x.Add(x, off)
			x.Sub(x, new(big.Rat).SetInt(new(big.Int).SetUint64(h.ReferenceStart)))
			tps := h.TicksPerSecond
			if tps <= 0 {
				tps = 1e9
			}
			x.Mul(x, big.NewRat(1e9, 1))
			return x.Quo(x, new(big.Rat).SetFloat64(tps))
		}
		last := int64(math.MinInt64)
		r := (start - 1e6) >> h.TimerShift
		for range 2000 {
			r += rng.Uint64N(1e9)>>h.TimerShift + 1
			got := c.Nanos(r)
			want, _ := exact(r).Float64()
			if got < last {
				t.Fatalf("trial %d: Nanos(%d) = %d, before the earlier tick's %d", trial, r, got, last)
			}
			last = got
			frac := math.Abs(want - math.Trunc(want))
			nearHalf := math.Abs(frac-0.5) < 1e-3
			if w := int64(math.Round(want)); got != w && (!nearHalf || got-w > 1 || w-got > 1) {
				t.Fatalf("trial %d: Nanos(%d) = %d, exactly %.4f", trial, r, got, want)
			}
		}
	}
}
