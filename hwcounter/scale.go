package hwcounter

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// Scaling is how long a group was enabled and how long it actually counted on
// the PMU, in nanoseconds since Open. Running < Enabled means the kernel
// multiplexed the group with other events, and the counts were extrapolated
// (count * Enabled / Running). Software events always run while enabled.
type Scaling struct {
	Enabled uint64
	Running uint64
}

// Multiplexed reports whether the counts were extrapolated.
func (s Scaling) Multiplexed() bool { return s.Running < s.Enabled }

// scaleCount extrapolates a count measured during running ns to enabled ns,
// as the kernel documents: count * enabled / running, in 128 bits so that
// neither the product nor the quotient loses precision. A counter that never
// ran reads 0; a result beyond 64 bits saturates.
func scaleCount(count, enabled, running uint64) uint64 {
	if running >= enabled {
		return count
	}
	if running == 0 {
		return 0
	}
	hi, lo := bits.Mul64(count, enabled)
	if hi >= running { // quotient does not fit in 64 bits (bits.Div64 would panic)
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, running)
	return q
}

// groupReadHeader is the size of nr, time_enabled and time_running at the head
// of a PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING read.
const groupReadHeader = 3 * 8

// groupReadSize is the size of one read() of a group of n events.
func groupReadSize(n int) int { return groupReadHeader + 8*n }

// decodeGroupRead decodes one read() of a group leader opened with
// PERF_FORMAT_GROUP|PERF_FORMAT_TOTAL_TIME_ENABLED|PERF_FORMAT_TOTAL_TIME_RUNNING:
//
//	u64 nr; u64 time_enabled; u64 time_running; u64 value[nr];
//
// into dst (one scaled count per event, len(dst) events expected). It
// allocates only when it reports an error.
func decodeGroupRead(buf []byte, dst []uint64) (Scaling, error) {
	if len(buf) < groupReadHeader {
		return Scaling{}, fmt.Errorf("hwcounter: group read of %d bytes is shorter than its %d-byte header", len(buf), groupReadHeader)
	}
	nr := binary.NativeEndian.Uint64(buf[0:])
	if nr != uint64(len(dst)) {
		return Scaling{}, fmt.Errorf("hwcounter: group read reports %d events, the group has %d", nr, len(dst))
	}
	if len(buf) != groupReadSize(len(dst)) {
		return Scaling{}, fmt.Errorf("hwcounter: group read of %d events is %d bytes, want %d", nr, len(buf), groupReadSize(len(dst)))
	}
	s := Scaling{
		Enabled: binary.NativeEndian.Uint64(buf[8:]),
		Running: binary.NativeEndian.Uint64(buf[16:]),
	}
	for i := range dst {
		dst[i] = scaleCount(binary.NativeEndian.Uint64(buf[groupReadHeader+8*i:]), s.Enabled, s.Running)
	}
	return s, nil
}
