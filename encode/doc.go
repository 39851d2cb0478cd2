// Package encode owns the record codec of hmbtrace's bins: one-byte tokens
// that carry small values inline, LEB128 integers, per-stream deltas of
// timestamps and counters, and the split of timing from event data (Wagner,
// section 2.2). An Encoder appends records of one level stream into a caller's
// bin; a Decoder reads them back and returns an error, never a panic, on any
// malformed input.
//
// # Record order across streams
//
// A location's events are spread over several level streams (one per calling
// depth and event class) and merged back by timestamp. Timestamps are reduced
// (ticks >> shift), so equal timestamps are common; every record therefore has
// a sequence number Seq, its position within the location's run of records
// that share one reduced timestamp. (Time, Seq) orders a location's records
// totally and exactly, whatever subset of them survives. Seq is stored only
// when it cannot be inferred: a record whose time equals the previous record
// of the same stream defaults to that record's Seq+1, any other record to 0.
//
// # Wire format
//
// Every bin starts with a BIN record holding the absolute time and the region
// open at the bin's depth, so a bin decodes on its own after any other bin was
// revoked. Then, with all techniques on, the tokens below 0xC0 are those of
// region prediction (predict.go), and the rest as below. The first table,
// which files written before Predict use and which is written with Predict
// off, has below 0xC0:
//
//	0x00-0x3F  LEAVE: the delta's low 5 bits are in the token; bit 5 set means
//	           the rest (delta >> 5) follows as a uvarint
//	0x40       ENTER, region uvarint, delta uvarint
//	0x41-0x7F  ENTER, region = token&0x3F, delta uvarint
//	0x80       ENTER at the previous record's time, region uvarint
//	0x81-0xBF  ENTER at the previous record's time, region = token&0x3F
//	0xC0       SEQ prefix, seq uvarint
//	0xC1-0xDF  SEQ prefix, seq = token&0x1F
//	0xE0-0xF9  plain records (see the Token constants), used when a value
//	           does not fit a token or when token encoding is switched off
//	0xFA       an RMA record (one-sided communication): kind byte (20..37),
//	           time, then the fields of that kind (rma.go)
//	0xFB       a task record: time, sub-kind (the Kind), task id
//	0xFC       an annotation (mark, region parameter, channel message): kind
//	           byte (38..42), time, key, then the fields of that kind (mark.go)
//
// With LEB128 off, integers are fixed width little endian (times, peers, byte
// counts and counter values 8 bytes, regions, tags and seq 4 bytes, counts 1
// byte). With delta encoding off, time fields and counter values are absolute.
// With split timing off, every record carries its own time field. The
// technique set is recorded in the trace file; the decoder must be given it.
package encode
