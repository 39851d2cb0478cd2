package otf2

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// OTF2's "compressed" integers: 0 and all-ones (OTF2's UNDEFINED) are one
// byte, anything else is a byte count n followed by the n low bytes in
// little-endian order. Signed values use the same scheme on their two's
// complement bit pattern, so a negative value always takes the full width.

// Upper bounds of encoded sizes, as libotf2 reserves them before writing a
// record. Chunk switching uses these, not actual sizes, to match libotf2
// byte for byte.
const (
	maxCU32      = 5 // compressed uint32
	maxCU64      = 9 // compressed uint64 / int64
	timestampLen = 9 // TIMESTAMP record: id + full uint64
)

// Special bytes and record ids inside a chunked buffer.
const (
	endOfChunk  = 0x00
	endOfBuffer = 0x01
	endOfFile   = 0x02
	chunkHeader = 0x03
	timestampID = 0x05

	littleEndianMarker = 0x42
	chunkHeaderLen     = 18 // id, endianness, first event, last event
)

// appendCU32 appends v as a compressed uint32.
func appendCU32(b []byte, v uint32) []byte {
	return appendCompressed(b, uint64(v), v == math.MaxUint32)
}

// appendCU64 appends v as a compressed uint64.
func appendCU64(b []byte, v uint64) []byte {
	return appendCompressed(b, v, v == math.MaxUint64)
}

// appendCI64 appends v as a compressed int64. Unlike the unsigned forms it
// has no one-byte case for all-ones: -1 takes nine bytes, as in libotf2.
func appendCI64(b []byte, v int64) []byte {
	return appendCompressed(b, uint64(v), false)
}

// appendCompressed appends u in OTF2's compressed form: 00 for zero, FF
// for the all-ones value of an unsigned field, else a byte count and that
// many little-endian bytes.
func appendCompressed(b []byte, u uint64, allOnes bool) []byte {
	switch {
	case u == 0:
		return append(b, 0)
	case allOnes:
		return append(b, 0xFF)
	}
	n := (bits.Len64(u) + 7) >> 3
	b = append(b, byte(n))
	for i := 0; i < n; i++ {
		b = append(b, byte(u>>(8*i)))
	}
	return b
}

// appendU64 appends v as a full (uncompressed) little-endian uint64.
func appendU64(b []byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(b, v)
}

// appendString appends s as OTF2 writes strings: the bytes and a NUL.
func appendString(b []byte, s string) []byte {
	b = append(b, s...)
	return append(b, 0)
}

// putCU32 writes v as a compressed uint32 at b[p:] and returns the position
// after it. It stores four bytes unconditionally (the unused ones are
// overwritten by what follows or cleared before the chunk is written), so
// b must have at least 5 bytes from p: the event writer's space check
// guarantees that.
func putCU32(b []byte, p int, v uint32) int {
	switch v {
	case 0:
		b[p] = 0
		return p + 1
	case math.MaxUint32:
		b[p] = 0xFF
		return p + 1
	}
	n := (bits.Len32(v) + 7) >> 3
	b[p] = byte(n)
	binary.LittleEndian.PutUint32(b[p+1:p+5], v)
	return p + 1 + n
}

// putCU64 is putCU32 for uint64; b must have at least 9 bytes from p.
func putCU64(b []byte, p int, v uint64) int {
	switch v {
	case 0:
		b[p] = 0
		return p + 1
	case math.MaxUint64:
		b[p] = 0xFF
		return p + 1
	}
	n := (bits.Len64(v) + 7) >> 3
	b[p] = byte(n)
	binary.LittleEndian.PutUint64(b[p+1:p+9], v)
	return p + 1 + n
}
