package wirecodec

import (
	"encoding/binary"
	"math"
)

// Writer appends the fields of a binary form. It is a []byte, so it can
// be handed on as one; the zero Writer is empty and ready.
type Writer []byte

// Uvarint appends v as an unsigned varint (LEB128).
func (w *Writer) Uvarint(v uint64) { *w = binary.AppendUvarint(*w, v) }

// Varint appends v as a zig-zag signed varint.
func (w *Writer) Varint(v int64) { *w = binary.AppendVarint(*w, v) }

// U8 appends one byte.
func (w *Writer) U8(v uint8) { *w = append(*w, v) }

// U64 appends v as 8 bytes, little-endian.
func (w *Writer) U64(v uint64) { *w = binary.LittleEndian.AppendUint64(*w, v) }

// F64 appends v's IEEE 754 bits as 8 bytes, little-endian.
func (w *Writer) F64(v float64) { w.U64(math.Float64bits(v)) }

// Bool appends v as one byte, 1 or 0.
func (w *Writer) Bool(v bool) {
	if v {
		*w = append(*w, 1)
	} else {
		*w = append(*w, 0)
	}
}

// String appends s's length as an unsigned varint, then its bytes.
func (w *Writer) String(s string) {
	w.Uvarint(uint64(len(s)))
	*w = append(*w, s...)
}

// Strings appends how many strings ss holds, then each as String does.
func (w *Writer) Strings(ss []string) {
	w.Uvarint(uint64(len(ss)))
	for _, s := range ss {
		w.String(s)
	}
}

// Count appends n, the length of a list whose elements follow.
func (w *Writer) Count(n int) { w.Uvarint(uint64(n)) }

// OptCount appends the length of a list that may be absent (a nil slice):
// 0 when !present, else n+1, so that a reader tells nil from empty.
func (w *Writer) OptCount(n int, present bool) {
	if !present {
		w.Uvarint(0)
		return
	}
	w.Uvarint(uint64(n) + 1)
}

// Uints appends how many values vs holds, then each as an unsigned
// varint: a fixed array written so, a later version with more elements
// still reads an earlier one (Reader.Uints).
func (w *Writer) Uints(vs []uint64) {
	w.Uvarint(uint64(len(vs)))
	for _, v := range vs {
		w.Uvarint(v)
	}
}
