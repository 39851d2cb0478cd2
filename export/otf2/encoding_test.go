package otf2

import (
	"bytes"
	"math"
	"testing"
)

// The examples of the OTF2 format notes (shared/otf2-format.md §4.2).
func TestCompressedIntegers(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0}},
		{1, []byte{1, 1}},
		{300, []byte{2, 0x2C, 1}},
		{1e9, []byte{4, 0x00, 0xCA, 0x9A, 0x3B}},
		{1e12, []byte{5, 0x00, 0x10, 0xA5, 0xD4, 0xE8}},
		{math.MaxUint64 - 1, []byte{8, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{math.MaxUint64, []byte{0xFF}},
	} {
		if got := appendCU64(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("appendCU64(%d) = % x, want % x", c.v, got, c.want)
		}
		buf := make([]byte, 9)
		if n := putCU64(buf, 0, c.v); !bytes.Equal(buf[:n], c.want) {
			t.Errorf("putCU64(%d) = % x, want % x", c.v, buf[:n], c.want)
		}
		if c.v > math.MaxUint32 {
			continue
		}
		if got := appendCU32(nil, uint32(c.v)); !bytes.Equal(got, c.want) {
			t.Errorf("appendCU32(%d) = % x, want % x", c.v, got, c.want)
		}
		buf = make([]byte, 5)
		if n := putCU32(buf, 0, uint32(c.v)); !bytes.Equal(buf[:n], c.want) {
			t.Errorf("putCU32(%d) = % x, want % x", c.v, buf[:n], c.want)
		}
	}
	// UINT32_MAX is OTF2's undefined reference: one byte, like UINT64_MAX.
	if got := appendCU32(nil, math.MaxUint32); !bytes.Equal(got, []byte{0xFF}) {
		t.Errorf("appendCU32(MaxUint32) = % x", got)
	}
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}},
		{20, []byte{1, 20}},
		{-5, []byte{8, 0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{-1, []byte{8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
	} {
		if got := appendCI64(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("appendCI64(%d) = % x, want % x", c.v, got, c.want)
		}
	}
}
