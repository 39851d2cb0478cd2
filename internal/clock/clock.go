// Package clock owns the probes' time source: RDTSC on amd64 when the CPU
// reports an invariant TSC (CPUID leaf 0x80000007, EDX bit 8), calibrated
// against CLOCK_MONOTONIC, and the runtime's monotonic nanotime elsewhere.
// Both are read without a system call.
package clock

import (
	"fmt"
	"sync/atomic"
	"time"
	_ "unsafe" // for go:linkname
)

// Source is a kind of clock.
type Source uint8

const (
	// SourceMonotonic is CLOCK_MONOTONIC in nanoseconds, as the Go runtime reads it.
	SourceMonotonic Source = iota
	// SourceTSC is the CPU's invariant time-stamp counter.
	SourceTSC
)

func (s Source) String() string {
	if s == SourceTSC {
		return "tsc"
	}
	return "monotonic"
}

// ParseSource reads "tsc" or "monotonic".
func ParseSource(s string) (Source, error) {
	switch s {
	case "tsc":
		return SourceTSC, nil
	case "monotonic":
		return SourceMonotonic, nil
	}
	return 0, fmt.Errorf("unknown clock %q (want tsc or monotonic)", s)
}

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// useTSC selects the source Now reads. It changes only through Use, which
// callers run before any probe; atomic so that a late Use is not a data race.
var useTSC atomic.Bool

func init() { useTSC.Store(InvariantTSC()) }

// Now returns the current time in ticks of the active source.
func Now() uint64 {
	if useTSC.Load() {
		return rdtsc()
	}
	return uint64(nanotime())
}

// TSCActive reports whether Now reads the TSC. Probes test it and call TSC
// or Monotonic themselves: Now makes two calls and cannot be inlined.
func TSCActive() bool { return useTSC.Load() }

// TSC reads the time-stamp counter (0 off amd64).
func TSC() uint64 { return rdtsc() }

// Monotonic reads CLOCK_MONOTONIC in nanoseconds.
func Monotonic() uint64 { return uint64(nanotime()) }

// Active returns the source Now reads.
func Active() Source {
	if useTSC.Load() {
		return SourceTSC
	}
	return SourceMonotonic
}

// Use makes Now read src. TSC is refused where it is not invariant.
func Use(src Source) error {
	if src == SourceTSC && !InvariantTSC() {
		return fmt.Errorf("clock: the TSC is not invariant on this CPU (CPUID 0x80000007 EDX bit 8 clear, or not amd64)")
	}
	useTSC.Store(src == SourceTSC)
	return nil
}

// Best returns the preferred source on this machine.
func Best() Source {
	if InvariantTSC() {
		return SourceTSC
	}
	return SourceMonotonic
}

// Pair is a simultaneous reading of the active source and CLOCK_MONOTONIC.
type Pair struct {
	Ticks uint64 // active source
	Nanos uint64 // CLOCK_MONOTONIC, ns
}

// ReadPair reads both clocks as close together as it can: the tick reading
// is bracketed by two monotonic readings, and the tightest of a few tries wins.
func ReadPair() Pair {
	best := Pair{}
	bestWidth := int64(-1)
	for i := 0; i < 7; i++ {
		a := nanotime()
		t := Now()
		b := nanotime()
		if w := b - a; bestWidth < 0 || w < bestWidth {
			bestWidth = w
			best = Pair{Ticks: t, Nanos: uint64(a + w/2)}
		}
	}
	return best
}

// TicksPerSecond computes the rate between two pairs, or 0 if they are too
// close together to say.
func TicksPerSecond(from, to Pair) float64 {
	if to.Nanos <= from.Nanos || to.Ticks <= from.Ticks {
		return 0
	}
	return float64(to.Ticks-from.Ticks) * 1e9 / float64(to.Nanos-from.Nanos)
}

// Calibrate measures the active source's rate over about d, spinning.
// For the monotonic source the rate is exactly 1e9.
func Calibrate(d time.Duration) float64 {
	if Active() == SourceMonotonic {
		return 1e9
	}
	a := ReadPair()
	for time.Duration(uint64(nanotime())-a.Nanos) < d {
	}
	return TicksPerSecond(a, ReadPair())
}
