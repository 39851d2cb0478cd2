package tracefile

import (
	"errors"
	"fmt"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
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

// fields reads a section's payload with the wire codec; its error, as a
// FormatError, names the offset in the file, the section and the field.
type fields struct {
	wirecodec.Reader
	base int64 // file offset of the payload's first byte
	sec  string
}

// sectionFields returns the fields of payload b, which starts at file
// offset base in section sec.
func sectionFields(b []byte, base int64, sec string) *fields {
	return &fields{Reader: wirecodec.MakeReader(b, 0), base: base, sec: sec}
}

// formatError returns the first error as the FormatError that reports it
// (its Path left to the caller), nil if none.
func (f *fields) formatError() *FormatError {
	var e *wirecodec.Error
	if !errors.As(f.Err(), &e) {
		return nil
	}
	return &FormatError{Offset: f.base + int64(e.Offset), Reason: f.sec + ": " + e.Error()}
}

func (f *fields) class(what string) Class {
	c := Class(f.U8(what))
	if f.OK() && c >= NumClasses {
		f.Fail(what, fmt.Sprintf("unknown event class %d", c))
	}
	return c
}

func (f *fields) reason(what string) Reason {
	r := Reason(f.U8(what))
	if f.OK() && r >= NumReasons {
		f.Fail(what, fmt.Sprintf("unknown reason %d", r))
	}
	return r
}
