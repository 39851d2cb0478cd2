package encode

import "encoding/binary"

// putUvarint writes v as LEB128 into b, which must have room for it.
// The one-byte case is small enough to be inlined into the probes' path.
func putUvarint(b []byte, v uint64) int {
	if v < 0x80 {
		b[0] = byte(v)
		return 1
	}
	return putUvarintLong(b, v)
}

func putUvarintLong(b []byte, v uint64) int {
	i := 0
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

// zigzag maps signed deltas to small unsigned values: 0, -1, 1, -2, ...
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// putUint writes v with the given fixed width in bytes, or as LEB128.
func putUint(b []byte, v uint64, width int, leb bool) int {
	if leb {
		return putUvarint(b, v)
	}
	switch width {
	case 1:
		b[0] = byte(v)
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
	return width
}
