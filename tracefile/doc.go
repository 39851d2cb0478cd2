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
// listed, which this reader reads too); COMM REFS 0x28, instead of COMM
// RUNS in a slot of a run archive, the same with the long groups as
// references to the run's unified definitions (commrefs.go); COMM MATRIX 0x23, the locations'
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
//
// # Run archive (version 1)
//
// At the collective end of an MPI run the ranks write one run archive,
// <name>.hmbrun (or <name>.<g>.hmbrun for aggregator group g of several),
// instead of one file per rank. Its leader creates, sizes and indexes it
// (CreateArchive); each rank then writes its complete trace file, in the
// layout above, into its own slot (WriteSlot). Little endian throughout:
//
//	prelude := magic "HMBRUN\x00\x01" | version u32 | flags u32 (bit 0: events none)
//	           | world u32 | group u32 | groups u32 | nslots u32
//	           | indexOff u64 | indexLen u64 | resultsOff u64 | resultsLen u64   (64 bytes)
//	index   := name (uvarint length, UTF-8) | nslots × (rank u32 | slotOff u64 | slotCap u64)
//	           | CRC-32C u32 of the index before it
//	results := (kind u8 | length uvarint | payload)* | CRC-32C u32   (may be absent: 0, 0)
//	slot    := magic "HMBSLOT\x00" | rank u32 | state u32 | length u64 | CRC-32C u32 of the payload
//	           | pad to 32 bytes | payload
//
// The slots come in rank order, 4096-aligned, after the index and the
// results; slotCap counts the slot's header. A slot's state is 0 (empty:
// never written, the rank died), 1 (in place: the payload is the rank's
// trace file, length bytes) or 2 (moved: the trace did not fit, and the
// payload is the base name of the rank's trace file beside the archive).
// A rank writes its payload first and the slot's header last, so a rank
// that dies while writing leaves its slot empty. With the events-none flag
// (HMB_OUTPUT_EVENTS=none) a slot's trace has its definitions and
// statistics but no BIN sections. OpenArchive reads the prelude, index and
// slot headers; Archive.OpenRank reads one rank's slot, and nothing else.
package tracefile
