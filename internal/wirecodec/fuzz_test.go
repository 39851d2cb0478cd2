package wirecodec

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// numOps is how many kinds of read readOps knows; an op byte picks one
// (low 4 bits) and, for counts, the bytes each element takes (high bits).
const numOps = 15

// readOps reads data as ops say and returns the values read, as
// writeOps writes them back.
func readOps(ops, data []byte) ([]any, *Reader) {
	r := MakeReader(data, 0)
	var vals []any
	for _, op := range ops {
		minBytes := int(op>>4) + 1
		switch op & 0x0f % numOps {
		case 0:
			vals = append(vals, r.Uvarint("uvarint"))
		case 1:
			vals = append(vals, r.Varint("varint"))
		case 2:
			vals = append(vals, r.Int("int", -1000, 1000))
		case 3:
			vals = append(vals, r.Uint("uint", 1e6))
		case 4:
			vals = append(vals, r.U32("u32"))
		case 5:
			vals = append(vals, r.U8("u8"))
		case 6:
			vals = append(vals, r.Bool("bool"))
		case 7:
			vals = append(vals, r.U64("u64"))
		case 8:
			vals = append(vals, math.Float64bits(r.F64("f64")))
		case 9:
			vals = append(vals, math.Float64bits(r.Finite("finite")))
		case 10:
			vals = append(vals, r.String("string"))
		case 11:
			vals = append(vals, r.Strings("strings"))
		case 12:
			vals = append(vals, r.Count("count", minBytes))
		case 13:
			n, ok := r.OptCount("optional count", minBytes)
			vals = append(vals, [2]any{n, ok})
		case 14:
			dst := make([]uint64, 3)
			r.Uints("uints", dst)
			vals = append(vals, dst)
		}
	}
	return vals, &r
}

// writeOps writes what readOps read.
func writeOps(ops []byte, vals []any) Writer {
	var w Writer
	for i, op := range ops {
		switch v := vals[i]; op & 0x0f % numOps {
		case 0, 3:
			w.Uvarint(v.(uint64))
		case 1:
			w.Varint(v.(int64))
		case 2:
			w.Varint(int64(v.(int)))
		case 4:
			w.Uvarint(uint64(v.(uint32)))
		case 5:
			w.U8(v.(uint8))
		case 6:
			w.Bool(v.(bool))
		case 7, 8, 9:
			w.U64(v.(uint64))
		case 10:
			w.String(v.(string))
		case 11:
			w.Strings(v.([]string))
		case 12:
			w.Count(v.(int))
		case 13:
			c := v.([2]any)
			w.OptCount(c[0].(int), c[1].(bool))
		case 14:
			w.Uints(v.([]uint64))
		}
	}
	return w
}

// FuzzReader reads any bytes with any sequence of reads: never a panic,
// never past the input, an error that says where within it, and what was
// read writes back to bytes that read the same.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0, 1, 10, 11, 12}, []byte{0xac, 0x02, 0x05, 0x01, 'a', 0x01, 0x00, 0x02})
	f.Add([]byte{8, 9, 7}, make([]byte, 24))
	f.Fuzz(func(t *testing.T, ops, data []byte) {
		vals, r := readOps(ops, data)
		if r.Off() < 0 || r.Off() > len(data) || r.Len() != len(data)-r.Off() {
			t.Fatalf("offset %d, %d left, of %d bytes", r.Off(), r.Len(), len(data))
		}
		if !r.OK() {
			var e *Error
			if !errors.As(r.Err(), &e) || e.Offset < 0 || e.Offset > len(data) || e.Field == "" || e.Reason == "" {
				t.Fatalf("error %#v", r.Err())
			}
			if r.Len() != 0 {
				t.Fatalf("%d bytes left after an error", r.Len())
			}
			return
		}
		// Counts are checked against the bytes left, which a shorter
		// rewrite (minimal varints) may not leave: padding gives them.
		w := writeOps(ops, vals)
		padded := append(w[:len(w):len(w)], make([]byte, len(data))...)
		again, r2 := readOps(ops, padded)
		if !r2.OK() {
			t.Fatalf("%v written back as % x does not read: %v", vals, []byte(w), r2.Err())
		}
		if !reflect.DeepEqual(vals, again) {
			t.Fatalf("read %v, written back and read %v", vals, again)
		}
		if r2.Off() != len(w) {
			t.Fatalf("written back in %d bytes, read back in %d", len(w), r2.Off())
		}
	})
}
