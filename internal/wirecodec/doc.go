// Package wirecodec owns the primitives of hmbtrace's binary forms, the
// trace file's sections (tracefile), the run profile (summary) and the
// in-situ wait-state replay's messages and parts (analysis/waitstate): one
// definition of how a field is written and how it is checked when read.
// A form is a sequence of fields: unsigned LEB128 varints, zig-zag signed
// varints, single bytes, 8-byte little-endian words and floats, booleans
// as one byte 0 or 1, strings and lists with their length first, and
// lists that may be absent (OptCount), as the in-situ parts' wire form
// writes them.
//
// A Writer appends fields to a byte slice. A Reader reads them back,
// checking each: the first error sticks, names the field and the reason,
// and makes every later read return zero, so that a decoder reads a whole
// record and checks once. Counts are bounded by the bytes left, so a
// corrupted or hostile count cannot make a decoder allocate more than its
// input could hold. Each form wraps a Reader's error in its own (a trace
// file's FormatError, a run profile's error), with the offset of the
// failure, which the Error carries.
//
// The event records inside a trace file's bins are the encode package's,
// not this one's: they have tokens and delta state of their own.
package wirecodec
