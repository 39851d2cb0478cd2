// Package tracefile owns hmbtrace's on-disk format: one file per process
// with a header, the definitions (regions, locations), the statistics of the
// measurement (flat profile, what was kept, dropped and reduced), the bins of
// the Hierarchical Memory Buffer exactly as they were in memory, and a
// CRC-32C over all of it. The writer is used by package measure at the end
// of a run; the reader is used by every tool and rebuilds each location's
// exact event order by merging its level streams. The tools share what
// they derive from the files here too: Trace.Totals (the buffer's story
// summed over the locations), Peers (the location at the other end of a
// message) and Axis (several files on one time axis).
//
// # Layout (version 1)
//
//	file    := magic "HMBTRACE" | version u16 LE | section* | end
//	section := kind u8 | length uvarint | payload
//	end     := kind 0xFF | length 4 | CRC-32C (Castagnoli, u32 LE) of every byte before it
//
// Sections come in this order: one HEADER, one REGIONS, one LOCATIONS, one
// REDUCTIONS, the sections added since (the writer puts them here, once
// each, and only when not empty: PARADIGMS 0x20, the regions' paradigms;
// THROTTLED 0x21, the throttled regions; COMM RUNS 0x26, the
// communicators in creation order, their members as runs of ranks
// (commruns.go; files written before it hold COMMS 0x22, every member
// listed, which this reader reads too); COMM MATRIX 0x23, the locations'
// exact communication matrices; RMA 0x24, the MPI windows and the groups RMA synchronisations
// name; ANNOTATIONS 0x30, the marks, region parameters, parameter strings
// and channels annotation records name), then any number of BIN sections. Integers in
// payloads are LEB128 varints, strings are a varint length followed by
// UTF-8 bytes. A reader skips section kinds it does not know, so later
// versions can add sections without breaking older tools. A section that
// replaces an older one keeps the version too, and says what a reader
// that skips it misses: a reader older than COMM RUNS reads a file
// without communicators (an export leaves out the records naming one, and
// says how many ids were undefined; the other tools never used them).
//
// # Version 2
//
// A file whose bins may hold annotation records (marks, region parameters,
// channel messages: encode's token 0xFC) has version 2 and an ANNOTATIONS
// section; its layout is version 1's. Every other file is still written
// as version 1. A version-1 reader cannot skip records inside a bin, so
// it stops at the header of a version-2 file with an error naming the
// version, instead of failing on an unknown token in some bin; this reader
// reads both.
package tracefile
