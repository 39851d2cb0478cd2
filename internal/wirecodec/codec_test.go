package wirecodec

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// The encodings are part of the trace file's format and the run profile's:
// pinned byte by byte.
func TestWriterBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(w *Writer)
		want  []byte
	}{
		{"uvarint 0", func(w *Writer) { w.Uvarint(0) }, []byte{0}},
		{"uvarint 300", func(w *Writer) { w.Uvarint(300) }, []byte{0xac, 0x02}},
		{"uvarint max", func(w *Writer) { w.Uvarint(math.MaxUint64) }, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"varint -3", func(w *Writer) { w.Varint(-3) }, []byte{5}},
		{"varint 64", func(w *Writer) { w.Varint(64) }, []byte{0x80, 0x01}},
		{"u8", func(w *Writer) { w.U8(0xfe) }, []byte{0xfe}},
		{"u64", func(w *Writer) { w.U64(0x0102030405060708) }, []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{"f64 1.5", func(w *Writer) { w.F64(1.5) }, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{"bools", func(w *Writer) { w.Bool(true); w.Bool(false) }, []byte{1, 0}},
		{"string", func(w *Writer) { w.String("hé") }, []byte{3, 'h', 0xc3, 0xa9}},
		{"strings", func(w *Writer) { w.Strings([]string{"a", ""}) }, []byte{2, 1, 'a', 0}},
		{"no strings", func(w *Writer) { w.Strings(nil) }, []byte{0}},
		{"count", func(w *Writer) { w.Count(200) }, []byte{0xc8, 0x01}},
		{"absent list", func(w *Writer) { w.OptCount(0, false) }, []byte{0}},
		{"empty list", func(w *Writer) { w.OptCount(0, true) }, []byte{1}},
		{"list of 2", func(w *Writer) { w.OptCount(2, true) }, []byte{3}},
		{"uints", func(w *Writer) { w.Uints([]uint64{1, 128}) }, []byte{2, 1, 0x80, 0x01}},
	} {
		var w Writer
		c.write(&w)
		if !bytes.Equal(w, c.want) {
			t.Errorf("%s: % x, want % x", c.name, []byte(w), c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	w := Writer("HDR")
	w.Uvarint(1 << 40)
	w.Varint(-1 << 40)
	w.Varint(-7)
	w.Uvarint(1 << 31)
	w.Uvarint(math.MaxUint32)
	w.U8(9)
	w.Bool(true)
	w.U64(math.MaxUint64)
	w.F64(math.Inf(-1))
	w.F64(-0.25)
	w.String("region")
	w.Strings([]string{"x", "yz"})
	w.Count(2)
	w.OptCount(0, false)
	w.OptCount(0, true)
	w.Uints([]uint64{4, 5})

	r := MakeReader(w, 3)
	if got := r.Uvarint("a"); got != 1<<40 {
		t.Errorf("uvarint %d", got)
	}
	if got := r.Varint("b"); got != -1<<40 {
		t.Errorf("varint %d", got)
	}
	if got := r.Int("c", -7, 0); got != -7 {
		t.Errorf("int %d", got)
	}
	if got := r.Uint("d", 1<<31); got != 1<<31 {
		t.Errorf("uint %d", got)
	}
	if got := r.U32("e"); got != math.MaxUint32 {
		t.Errorf("u32 %d", got)
	}
	if got := r.U8("f"); got != 9 {
		t.Errorf("u8 %d", got)
	}
	if !r.Bool("g") {
		t.Error("bool false")
	}
	if got := r.U64("h"); got != math.MaxUint64 {
		t.Errorf("u64 %d", got)
	}
	if got := r.F64("i"); !math.IsInf(got, -1) {
		t.Errorf("f64 %v", got)
	}
	if got := r.Finite("j"); got != -0.25 {
		t.Errorf("finite %v", got)
	}
	if got := r.String("k"); got != "region" {
		t.Errorf("string %q", got)
	}
	if got := r.Strings("l"); len(got) != 2 || got[0] != "x" || got[1] != "yz" {
		t.Errorf("strings %q", got)
	}
	if got := r.Count("m", 2); got != 2 {
		t.Errorf("count %d", got)
	}
	if n, ok := r.OptCount("n", 1); n != 0 || ok {
		t.Errorf("absent list: %d, %v", n, ok)
	}
	if n, ok := r.OptCount("o", 1); n != 0 || !ok {
		t.Errorf("empty list: %d, %v", n, ok)
	}
	// A reader that knows three elements reads a list of two.
	dst := []uint64{0, 0, 7}
	r.Uints("p", dst)
	if dst[0] != 4 || dst[1] != 5 || dst[2] != 7 {
		t.Errorf("uints %v", dst)
	}
	r.Done()
	if err := r.Err(); err != nil || r.Len() != 0 || r.Off() != len(w) {
		t.Fatalf("error %v, %d bytes left at offset %d of %d", err, r.Len(), r.Off(), len(w))
	}
}

// Each check fails with the field's name, the reason and the offset at
// which the field starts (or where the reader was, for Done).
func TestReaderErrors(t *testing.T) {
	overflow := append(bytes.Repeat([]byte{0xff}, 10), 0x01)
	nan := Writer{}
	nan.F64(math.NaN())
	inf := Writer{}
	inf.F64(math.Inf(1))
	for _, c := range []struct {
		name   string
		data   []byte
		read   func(r *Reader)
		at     int
		reason string
	}{
		{"truncated uvarint", []byte{1, 0x80}, func(r *Reader) { r.U8("x"); r.Uvarint("x") }, 1, "truncated"},
		{"empty uvarint", nil, func(r *Reader) { r.Uvarint("x") }, 0, "truncated"},
		{"overflowing uvarint", overflow, func(r *Reader) { r.Uvarint("x") }, 0, "varint overflows 64 bits"},
		{"overflowing varint", overflow, func(r *Reader) { r.Varint("x") }, 0, "varint overflows 64 bits"},
		{"truncated varint", []byte{0x80}, func(r *Reader) { r.Varint("x") }, 0, "truncated"},
		{"int below", []byte{0, 5}, func(r *Reader) { r.U8("y"); r.Int("x", 0, 10) }, 1, "value -3 out of range [0, 10]"},
		{"int above", []byte{22}, func(r *Reader) { r.Int("x", 0, 10) }, 0, "value 11 out of range [0, 10]"},
		{"uint above", []byte{0x80, 0x01}, func(r *Reader) { r.Uint("x", 127) }, 0, "value 128 out of range [0, 127]"},
		{"u32 above", []byte{0x80, 0x80, 0x80, 0x80, 0x10}, func(r *Reader) { r.U32("x") }, 0, "value 4294967296 out of range [0, 4294967295]"},
		{"u8 at the end", nil, func(r *Reader) { r.U8("x") }, 0, "truncated"},
		{"bool 2", []byte{2}, func(r *Reader) { r.Bool("x") }, 0, "2 is not a boolean"},
		{"u64 short", make([]byte, 7), func(r *Reader) { r.U64("x") }, 0, "truncated"},
		{"f64 NaN", nan, func(r *Reader) { r.F64("x") }, 0, "not a number"},
		{"finite NaN", nan, func(r *Reader) { r.Finite("x") }, 0, "not a finite number"},
		{"finite Inf", inf, func(r *Reader) { r.Finite("x") }, 0, "not a finite number"},
		{"string past the end", []byte{4, 'a', 'b'}, func(r *Reader) { r.String("x") }, 0, "string of 4 bytes runs past the end (2 left)"},
		{"strings past the end", []byte{3, 1, 'a'}, func(r *Reader) { r.Strings("x") }, 0, "count 3 exceeds what the 2 bytes left can hold"},
		{"count past the end", []byte{3, 0, 0, 0, 0, 0}, func(r *Reader) { r.Count("x", 2) }, 0, "count 3 exceeds what the 5 bytes left can hold"},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, func(r *Reader) { r.Count("x", 1) }, 0, "count 4294967295 exceeds what the 0 bytes left can hold"},
		{"opt count past the end", []byte{4, 0, 0}, func(r *Reader) { r.OptCount("x", 1) }, 0, "count 3 exceeds what the 2 bytes left can hold"},
		{"uints too many", []byte{3, 1, 2, 3}, func(r *Reader) { r.Uints("x", make([]uint64, 2)) }, 0, "3 of them, this reader knows 2"},
		{"caller's check", []byte{1, 2}, func(r *Reader) { r.U8("y"); r.Fail("x", "not sorted") }, 1, "not sorted"},
	} {
		r := MakeReader(c.data, 0)
		c.read(&r)
		var e *Error
		if !errors.As(r.Err(), &e) {
			t.Errorf("%s: error %v, want an *Error", c.name, r.Err())
			continue
		}
		if e.Field != "x" || e.Reason != c.reason || e.Offset != c.at {
			t.Errorf("%s: %+v, want field x, reason %q at %d", c.name, *e, c.reason, c.at)
		}
		if e.Error() != "x: "+c.reason {
			t.Errorf("%s: %q", c.name, e.Error())
		}
		if r.OK() || r.Len() != 0 {
			t.Errorf("%s: after the error OK %v, %d bytes left", c.name, r.OK(), r.Len())
		}
	}
	r := MakeReader([]byte{1, 2, 3}, 0)
	r.U8("x")
	r.Done()
	if err := r.Err(); err == nil || err.Error() != "2 bytes after the end" || err.(*Error).Offset != 1 {
		t.Errorf("trailing bytes: %v", err)
	}
}

// The first error sticks: later reads return zero and leave it.
func TestReaderSticky(t *testing.T) {
	w := Writer{}
	w.Uvarint(300)
	w.String("s")
	r := MakeReader(w, 0)
	r.Bool("first")
	if r.Uvarint("u") != 0 || r.String("s") != "" || r.Strings("ss") != nil || r.U8("b") != 0 || r.U64("w") != 0 || r.Varint("v") != 0 {
		t.Error("a read after the error returned a value")
	}
	if n, ok := r.OptCount("o", 1); n != 0 || ok {
		t.Error("an optional count after the error")
	}
	r.Fail("later", "ignored")
	r.Failf("later", "ignored %d", 1)
	r.Done()
	if err := r.Err(); err == nil || !strings.HasPrefix(err.Error(), "first: ") {
		t.Errorf("error %v, want the first one", err)
	}
}

// MakeReader's offset is where reading starts; errors count from b[0].
func TestMakeReaderOffset(t *testing.T) {
	r := MakeReader([]byte("HDR\x02"), 3)
	r.Bool("flag")
	if e, ok := r.Err().(*Error); !ok || e.Offset != 3 {
		t.Errorf("error %v, want one at offset 3", r.Err())
	}
	for _, off := range []int{-1, 5} {
		r := MakeReader([]byte("HDR\x02"), off)
		if r.OK() || r.Uvarint("x") != 0 || !strings.Contains(r.Err().Error(), "outside the 4 bytes") {
			t.Errorf("offset %d: %v", off, r.Err())
		}
	}
}

// Reading numbers does not allocate, nor does writing into a Writer with
// room; a list of strings allocates its slice once and each string.
func TestAllocs(t *testing.T) {
	w := make(Writer, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		w = w[:0]
		w.Uvarint(1 << 20)
		w.Varint(-5)
		w.F64(2.5)
		w.Bool(true)
		w.String("abc")
		w.Uints([]uint64{1, 2})
	}); n != 0 {
		t.Errorf("writing: %v allocations", n)
	}
	dst := make([]uint64, 2)
	if n := testing.AllocsPerRun(100, func() {
		r := MakeReader(w, 0)
		r.Uvarint("u")
		r.Int("i", -5, 5)
		r.Finite("f")
		r.Bool("b")
		for range r.Count("c", 1) {
			r.U8("c")
		}
		r.Uints("list", dst)
		r.Done()
		if !r.OK() || dst[1] != 2 {
			t.Fatal(r.Err(), dst)
		}
	}); n != 0 {
		t.Errorf("reading numbers: %v allocations", n)
	}
	var s Writer
	s.Strings([]string{"one", "two", "three"})
	if n := testing.AllocsPerRun(100, func() {
		r := MakeReader(s, 0)
		r.Strings("names")
	}); n != 4 {
		t.Errorf("reading 3 strings: %v allocations, want 4", n)
	}
}

// BenchmarkReader reads a record of eight varint fields and a string, the
// shape of a trace file's region or profile entry.
func BenchmarkReader(b *testing.B) {
	var w Writer
	const records = 1000
	for i := range records {
		w.Uvarint(uint64(i))
		w.Uvarint(uint64(i) * 1000)
		w.Varint(-int64(i))
		for k := range 5 {
			w.Uvarint(uint64(i) << (8 * k))
		}
		w.String("app::kernel(double*, int)")
	}
	b.SetBytes(int64(len(w)))
	b.ReportAllocs()
	for b.Loop() {
		r := MakeReader(w, 0)
		for range records {
			r.Uvarint("id")
			r.Uvarint("visits")
			r.Varint("line")
			for range 5 {
				r.Uvarint("time")
			}
			r.String("name")
		}
		r.Done()
		if !r.OK() {
			b.Fatal(r.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/records/9, "ns/field")
}
