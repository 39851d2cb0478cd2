package hwcounter

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"
	"testing"
)

// bigScale is scaleCount's definition in arbitrary precision.
func bigScale(count, enabled, running uint64) uint64 {
	if running >= enabled {
		return count
	}
	if running == 0 {
		return 0
	}
	q := new(big.Int).Mul(new(big.Int).SetUint64(count), new(big.Int).SetUint64(enabled))
	q.Quo(q, new(big.Int).SetUint64(running))
	if !q.IsUint64() {
		return math.MaxUint64
	}
	return q.Uint64()
}

func TestScaleCount(t *testing.T) {
	cases := []struct{ count, enabled, running, want uint64 }{
		{1000, 50, 50, 1000},                   // never multiplexed
		{1000, 100, 50, 2000},                  // ran half the time
		{1000, 300, 100, 3000},                 //
		{7, 3, 2, 10},                          // 10.5 truncates
		{1000, 100, 0, 0},                      // never ran: no count to extrapolate
		{0, 0, 0, 0},                           // just opened
		{1 << 62, 1 << 40, 1 << 39, 1 << 63},   // product needs 128 bits
		{math.MaxUint64, 4, 1, math.MaxUint64}, // saturates instead of wrapping or panicking
		{1000, 50, 60, 1000},                   // running > enabled (rounding in the page times)
	}
	for _, c := range cases {
		if got := scaleCount(c.count, c.enabled, c.running); got != c.want {
			t.Errorf("scaleCount(%d, %d, %d) = %d, want %d", c.count, c.enabled, c.running, got, c.want)
		}
		if got := bigScale(c.count, c.enabled, c.running); got != c.want {
			t.Errorf("bigScale disagrees with the table for %+v: %d", c, got)
		}
	}
	if (Scaling{Enabled: 10, Running: 5}).Multiplexed() != true || (Scaling{Enabled: 10, Running: 10}).Multiplexed() {
		t.Error("Multiplexed must be Running < Enabled")
	}
}

func groupReadBytes(nr, enabled, running uint64, values ...uint64) []byte {
	b := binary.NativeEndian.AppendUint64(nil, nr)
	b = binary.NativeEndian.AppendUint64(b, enabled)
	b = binary.NativeEndian.AppendUint64(b, running)
	for _, v := range values {
		b = binary.NativeEndian.AppendUint64(b, v)
	}
	return b
}

func TestDecodeGroupRead(t *testing.T) {
	dst := make([]uint64, 3)
	s, err := decodeGroupRead(groupReadBytes(3, 200, 100, 10, 20, 30), dst)
	if err != nil {
		t.Fatal(err)
	}
	if s != (Scaling{200, 100}) || dst[0] != 20 || dst[1] != 40 || dst[2] != 60 {
		t.Errorf("decoded %+v %v, want {200 100} [20 40 60]", s, dst)
	}
	for _, c := range []struct {
		buf  []byte
		want string
	}{
		{groupReadBytes(3, 1, 1)[:20], "shorter than its 24-byte header"},
		{groupReadBytes(2, 1, 1, 5, 6), "reports 2 events, the group has 3"},
		{groupReadBytes(3, 1, 1, 5, 6), "is 40 bytes, want 48"},
		{append(groupReadBytes(3, 1, 1, 5, 6, 7), 0), "is 49 bytes, want 48"},
	} {
		if _, err := decodeGroupRead(c.buf, dst); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decodeGroupRead error = %v, want %q", err, c.want)
		}
	}
}
