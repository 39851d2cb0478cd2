package wirecodec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Error is a field that could not be read: where, which, and why.
type Error struct {
	// Offset is the byte of the failure, counted from the start of the
	// bytes given to MakeReader: the start of a field that is truncated
	// or out of range, or where the reader was when its caller failed it.
	Offset int
	Field  string // as the decoder names it; "" for the end of the input
	Reason string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// Reader reads the fields a Writer wrote. Its first error sticks (Err):
// every read after it returns the zero value, so a decoder may read on
// and check once, before it uses what it read.
type Reader struct {
	b   []byte
	off int
	err *Error
}

// MakeReader returns a Reader of b from offset off on. Its errors'
// offsets count from b[0], so that a form behind a header gives the
// offsets of the whole.
func MakeReader(b []byte, off int) Reader {
	if off < 0 || off > len(b) {
		r := Reader{b: b}
		r.failAt(0, "start", fmt.Sprintf("offset %d outside the %d bytes", off, len(b)))
		return r
	}
	return Reader{b: b, off: off}
}

// Bytes returns all the bytes the Reader was made of, read or not.
func (r *Reader) Bytes() []byte { return r.b }

// Off returns the offset of the next field.
func (r *Reader) Off() int { return r.off }

// Len returns how many bytes are left to read.
func (r *Reader) Len() int { return len(r.b) - r.off }

// OK reports whether every read so far succeeded.
func (r *Reader) OK() bool { return r.err == nil }

// Err returns the first error, an *Error, or nil.
func (r *Reader) Err() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

// Fail records that field is wrong for reason, at the current offset,
// unless an error came first. The rest of the input is then skipped.
func (r *Reader) Fail(field, reason string) { r.failAt(r.off, field, reason) }

// Failf is Fail with the reason formatted.
func (r *Reader) Failf(field, format string, a ...any) {
	if r.err == nil {
		r.failAt(r.off, field, fmt.Sprintf(format, a...))
	}
}

func (r *Reader) failAt(at int, field, reason string) {
	if r.err == nil {
		r.err = &Error{Offset: at, Field: field, Reason: reason}
	}
	r.off = len(r.b)
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint(field string) uint64 {
	// An error leaves no bytes to read, so the read needs no check of
	// r.err: it fails as truncated, and failAt keeps the first error.
	b := r.b[r.off:]
	if len(b) > 0 && b[0] < 0x80 {
		// Most fields are ids, counts and small numbers of one byte.
		r.off++
		return uint64(b[0])
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		r.varintFailed(field, n)
		return 0
	}
	r.off += n
	return v
}

// Varint reads a zig-zag signed varint.
func (r *Reader) Varint(field string) int64 {
	b := r.b[r.off:]
	if len(b) > 0 && b[0] < 0x80 {
		r.off++
		return int64(b[0]>>1) ^ -int64(b[0]&1)
	}
	v, n := binary.Varint(b)
	if n <= 0 {
		r.varintFailed(field, n)
		return 0
	}
	r.off += n
	return v
}

// varintFailed records why binary.Uvarint or Varint returned n <= 0.
func (r *Reader) varintFailed(field string, n int) {
	if n == 0 {
		r.failAt(r.off, field, "truncated")
	} else {
		r.failAt(r.off, field, "varint overflows 64 bits")
	}
}

// Int reads a signed varint that must be within [lo, hi], which the
// caller keeps within int: on a 32-bit platform, within 32 bits (Int64
// reads what may be larger, such as a time).
func (r *Reader) Int(field string, lo, hi int64) int {
	return int(r.Int64(field, lo, hi))
}

// Int64 reads a signed varint that must be within [lo, hi].
func (r *Reader) Int64(field string, lo, hi int64) int64 {
	at := r.off
	v := r.Varint(field)
	if v < lo || v > hi {
		r.failAt(at, field, fmt.Sprintf("value %d out of range [%d, %d]", v, lo, hi))
		return 0
	}
	return v
}

// Uint reads an unsigned varint that must be at most hi.
func (r *Reader) Uint(field string, hi uint64) uint64 {
	at := r.off
	v := r.Uvarint(field)
	if v > hi {
		r.failAt(at, field, fmt.Sprintf("value %d out of range [0, %d]", v, hi))
		return 0
	}
	return v
}

// U32 reads an unsigned varint that must fit 32 bits.
func (r *Reader) U32(field string) uint32 { return uint32(r.Uint(field, math.MaxUint32)) }

// U8 reads one byte.
func (r *Reader) U8(field string) uint8 {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.failAt(r.off, field, "truncated")
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

// Bool reads a byte that must be 0 or 1.
func (r *Reader) Bool(field string) bool {
	at := r.off
	v := r.U8(field)
	if v > 1 {
		r.failAt(at, field, fmt.Sprintf("%d is not a boolean", v))
		return false
	}
	return v == 1
}

// U64 reads 8 bytes, little-endian.
func (r *Reader) U64(field string) uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b)-r.off < 8 {
		r.failAt(r.off, field, "truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// F64 reads a float's 8 bytes that must not be a NaN, which would make
// any comparison of the values it goes into false.
func (r *Reader) F64(field string) float64 {
	at := r.off
	v := math.Float64frombits(r.U64(field))
	if math.IsNaN(v) {
		r.failAt(at, field, "not a number")
		return 0
	}
	return v
}

// Finite reads a float's 8 bytes that must be neither a NaN nor infinite.
func (r *Reader) Finite(field string) float64 {
	at := r.off
	v := math.Float64frombits(r.U64(field))
	if math.IsNaN(v) || math.IsInf(v, 0) {
		r.failAt(at, field, "not a finite number")
		return 0
	}
	return v
}

// String reads a string's length and its bytes, which must be there.
func (r *Reader) String(field string) string {
	at := r.off
	n := r.Uvarint(field)
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)-r.off) {
		r.failAt(at, field, fmt.Sprintf("string of %d bytes runs past the end (%d left)", n, len(r.b)-r.off))
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}

// Strings reads a list of strings, nil if empty.
func (r *Reader) Strings(field string) []string {
	n := r.Count(field, 1)
	if n == 0 {
		return nil
	}
	ss := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		ss = append(ss, r.String(field))
	}
	return ss
}

// Count reads the length of a list whose elements take minBytes each at
// least, and fails unless the bytes left could hold them: so a corrupted
// count cannot make the caller allocate more than the input holds.
func (r *Reader) Count(field string, minBytes int) int {
	at := r.off
	v := r.Uvarint(field)
	if r.err == nil && v > uint64(r.Len()/max(minBytes, 1)) {
		r.failAt(at, field, fmt.Sprintf("count %d exceeds what the %d bytes left can hold", v, r.Len()))
		return 0
	}
	return int(v)
}

// OptCount reads what Writer.OptCount wrote: the list's length, and
// false for an absent list. The length is bounded as Count bounds it.
func (r *Reader) OptCount(field string, minBytes int) (int, bool) {
	at := r.off
	v := r.Uvarint(field)
	if r.err != nil || v == 0 {
		return 0, false
	}
	if v-1 > uint64(r.Len()/max(minBytes, 1)) {
		r.failAt(at, field, fmt.Sprintf("count %d exceeds what the %d bytes left can hold", v-1, r.Len()))
		return 0, false
	}
	return int(v - 1), true
}

// Uints reads what Writer.Uints wrote into dst: a shorter list (of an
// older writer) leaves the rest of dst as it was, a longer one fails.
func (r *Reader) Uints(field string, dst []uint64) {
	at := r.off
	n := r.Count(field, 1)
	if r.err == nil && n > len(dst) {
		r.failAt(at, field, fmt.Sprintf("%d of them, this reader knows %d", n, len(dst)))
		return
	}
	for i := 0; i < n; i++ {
		dst[i] = r.Uvarint(field)
	}
}

// Done fails unless every byte was read: a form has no trailing bytes.
func (r *Reader) Done() {
	if r.err == nil && r.off != len(r.b) {
		r.failAt(r.off, "", fmt.Sprintf("%d bytes after the end", len(r.b)-r.off))
	}
}
