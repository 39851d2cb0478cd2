package tracefile

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Section kinds. The numbering is part of the format.
const (
	secHeader     = 1
	secRegions    = 2
	secLocations  = 3
	secReductions = 4
	secBin        = 5
	// Sections added later, after REDUCTIONS and before the bins, in any
	// order; a reader that does not know one skips it.
	secParadigms  = 0x20 // region id and paradigm, for the regions not of ParadigmUser
	secThrottled  = 0x21 // location, region, time and visits after, per throttled region
	secComms      = 0x22 // the communicators
	secCommMatrix = 0x23 // the locations' exact communication matrices
	secEnd        = 0xFF
)

const (
	magic = "HMBTRACE"
	// version is the newest format version this reader reads; it reads
	// every one before it too. A writer puts the oldest that holds the
	// file's records (Trace.fileVersion).
	version = versionAnnotations
)

var sectionNames = map[byte]string{
	secHeader: "HEADER", secRegions: "REGIONS", secLocations: "LOCATIONS",
	secReductions: "REDUCTIONS", secBin: "BIN", secEnd: "END",
	secParadigms: "PARADIGMS", secThrottled: "THROTTLED",
	secComms: "COMMS", secCommMatrix: "COMM MATRIX", secCommRuns: "COMM RUNS", secCommRefs: "COMM REFS",
	secRecovered: "RECOVERED", secThrottleRule: "THROTTLE RULE",
}

func sectionName(k byte) string {
	if n, ok := sectionNames[k]; ok {
		return n
	}
	return fmt.Sprintf("section 0x%02X", k)
}

// payload builds a section's payload.
type payload []byte

func (p *payload) uvarint(v uint64) { *p = binary.AppendUvarint(*p, v) }
func (p *payload) varint(v int64)   { *p = binary.AppendVarint(*p, v) }
func (p *payload) u8(v uint8)       { *p = append(*p, v) }
func (p *payload) f64(v float64)    { *p = binary.LittleEndian.AppendUint64(*p, math.Float64bits(v)) }
func (p *payload) str(s string)     { p.uvarint(uint64(len(s))); *p = append(*p, s...) }
func (p *payload) strs(ss []string) {
	p.uvarint(uint64(len(ss)))
	for _, s := range ss {
		p.str(s)
	}
}

func (p *payload) bool(b bool) {
	if b {
		p.u8(1)
	} else {
		p.u8(0)
	}
}

// FormatError is a malformed or corrupted file: where and why.
type FormatError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *FormatError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("offset %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("%s: offset %d: %s", e.Path, e.Offset, e.Reason)
}

// fields reads a section's payload; the first error sticks and names the
// offset in the file and the field.
type fields struct {
	b    []byte
	off  int
	base int64 // file offset of b[0]
	sec  string
	err  *FormatError
}

func (f *fields) fail(what, reason string) {
	if f.err == nil {
		f.err = &FormatError{Offset: f.base + int64(f.off), Reason: fmt.Sprintf("%s: %s: %s", f.sec, what, reason)}
	}
	f.off = len(f.b)
}

func (f *fields) uvarint(what string) uint64 {
	if f.err != nil {
		return 0
	}
	v, n := binary.Uvarint(f.b[f.off:])
	if n <= 0 {
		if n == 0 {
			f.fail(what, "truncated")
		} else {
			f.fail(what, "varint overflows 64 bits")
		}
		return 0
	}
	f.off += n
	return v
}

// count reads a number of items that each take at least minBytes, so that a
// corrupted count cannot make the reader allocate more than the file holds.
func (f *fields) count(what string, minBytes int) int {
	v := f.uvarint(what)
	if f.err == nil && v > uint64((len(f.b)-f.off)/max(minBytes, 1)) {
		f.fail(what, fmt.Sprintf("count %d exceeds what the section can hold", v))
		return 0
	}
	return int(v)
}

func (f *fields) int(what string, lo, hi int64) int {
	if f.err != nil {
		return 0
	}
	v, n := binary.Varint(f.b[f.off:])
	if n <= 0 {
		f.fail(what, "truncated")
		return 0
	}
	if v < lo || v > hi {
		f.fail(what, fmt.Sprintf("value %d out of range [%d, %d]", v, lo, hi))
		return 0
	}
	f.off += n
	return int(v)
}

func (f *fields) u32(what string) uint32 {
	v := f.uvarint(what)
	if v > math.MaxUint32 {
		f.fail(what, fmt.Sprintf("value %d out of range", v))
		return 0
	}
	return uint32(v)
}

func (f *fields) u8(what string) uint8 {
	if f.err != nil {
		return 0
	}
	if f.off >= len(f.b) {
		f.fail(what, "truncated")
		return 0
	}
	v := f.b[f.off]
	f.off++
	return v
}

func (f *fields) bool(what string) bool {
	v := f.u8(what)
	if v > 1 {
		f.fail(what, fmt.Sprintf("boolean %d", v))
	}
	return v == 1
}

func (f *fields) f64(what string) float64 {
	if f.err != nil {
		return 0
	}
	if len(f.b)-f.off < 8 {
		f.fail(what, "truncated")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(f.b[f.off:]))
	f.off += 8
	if math.IsNaN(v) || math.IsInf(v, 0) {
		f.fail(what, "not a finite number")
		return 0
	}
	return v
}

func (f *fields) str(what string) string {
	n := f.uvarint(what)
	if f.err != nil {
		return ""
	}
	if n > uint64(len(f.b)-f.off) {
		f.fail(what, fmt.Sprintf("string of %d bytes runs past the section", n))
		return ""
	}
	s := string(f.b[f.off : f.off+int(n)])
	f.off += int(n)
	return s
}

func (f *fields) strs(what string) []string {
	n := f.count(what, 1)
	var ss []string
	for i := 0; i < n && f.err == nil; i++ {
		ss = append(ss, f.str(what))
	}
	return ss
}

func (f *fields) class(what string) Class {
	c := Class(f.u8(what))
	if f.err == nil && c >= NumClasses {
		f.fail(what, fmt.Sprintf("unknown event class %d", c))
	}
	return c
}

func (f *fields) reason(what string) Reason {
	r := Reason(f.u8(what))
	if f.err == nil && r >= NumReasons {
		f.fail(what, fmt.Sprintf("unknown reason %d", r))
	}
	return r
}

// done checks that the payload was consumed exactly.
func (f *fields) done() {
	if f.err == nil && f.off != len(f.b) {
		f.fail("end", fmt.Sprintf("%d unexpected bytes", len(f.b)-f.off))
	}
}
