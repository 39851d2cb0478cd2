// Package survive is the layout of the file mapping that holds a
// measurement's buffer when it must outlive its process (HMB_SURVIVE=1):
// the bins, the bins' descriptors, the levels' bookkeeping, the locations'
// published counts and a log of the definitions, in one file under
// /dev/shm. The process writes into the mapping with plain stores and
// nothing else while it runs; after any death (SIGKILL, the OOM killer, a
// segfault, abort) the file is still there, and tracefile reads it.
//
// # The order of the stores
//
// A store that a process made before it died is in the file; what it did
// not make is not, and the process may die between any two stores. So
// every part of the mapping is written in an order that leaves a reader a
// prefix of complete things, whatever the last store was:
//
//   - A bin's records: the encoder writes a record's bytes into the bin
//     first, then the level stores the bin's fill mark (BinDesc.Used, the
//     length of the complete records). A reader decodes a bin up to its
//     fill mark only, so a record whose bytes were being written at death
//     is not read. The Go compiler keeps stores to memory in program
//     order; the C probes put a compiler barrier (no fence) before the
//     mark's store. After a death every store the dead thread made is in
//     memory, so the processor's own reordering does not matter; only a
//     reader of a live process (tracefile's -force) could see it, and on
//     amd64 stores become visible in program order anyway.
//   - A bin's descriptor: taking a bin stores the fill mark 0, the bin's
//     position in its level's chain, then the level's index; the bin's
//     header follows, then the fill mark. Freeing a bin (a reduction
//     revoked it) clears the level's index first. A reader takes a bin
//     with a level index and a fill mark beyond the bin header.
//   - A reduction stores a level's closure (LevelEntry.Closed) before it
//     revokes the level's bins, level after level, and the current bins of
//     closed levels stay with their owners until they sync. A reader
//     drops the bins of closed levels, and of the deeper levels of the same
//     class group of that location which the reduction had not reached, as
//     the reduction would have: every location's calls stay nested.
//   - A level or location entry is filled before the count of entries
//     (Header.Levels, Header.Locations) is raised past it.
//   - A definition (a region, a location's name, the trace's header, a
//     reduction) is appended to the log, then the log's fill mark is raised
//     past it. Later records of the same thing replace earlier ones.
//
// The counts in level and location entries (records dropped, revoked,
// recorded) are copied in from the process's own counters when it takes a
// bin, syncs with a reduction or releases its bins: they are exact as of
// that moment and lower bounds of the counts at death.
//
// Making a mapping needs Linux (mapping_linux.go): elsewhere Create says so
// and Supported is false. Reading one (Read, View) works everywhere, so
// that a mapping copied from a cluster can be recovered on a laptop.
package survive

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// Magic starts every mapping file; tracefile recognises it.
const Magic = "HMBSURV1"

// Version is the layout's version.
const Version = 1

// The states of a mapping, in Header.State.
const (
	StateRunning = 1 // the process records
	StateClosed  = 2 // Close wrote the trace file; the mapping is about to go
	StateLeft    = 3 // Close could not write the trace file: the mapping holds it, final
)

// HeaderSize is the room the header takes at the start of the file.
const HeaderSize = 4096

// Header is the fixed start of the file. Offsets are from the file's start.
type Header struct {
	Magic     [8]byte
	Version   uint32
	State     uint32
	PID       uint64
	StartTime uint64 // the process's start time in clock ticks since boot (/proc/PID/stat field 22)
	Bins      uint64
	BinSize   uint64
	LevelCap  uint64
	LocCap    uint64
	DefCap    uint64
	OffLevels uint64
	OffLocs   uint64
	OffDescs  uint64
	OffDefs   uint64
	OffBins   uint64
	FileSize  uint64

	// Fill marks, raised after what they cover was written.
	Levels  uint64 // level entries filled
	Locs    uint64 // location entries filled
	DefUsed uint64 // bytes of the definition log

	DefLost   uint64 // definitions that did not fit in the log
	LevelLost uint64 // levels that found no entry

	// Signal is the signal a handler caught (HMB_SIGNALS), stored before
	// the handler begins to write the trace: a mapping still running
	// with it set died of that signal, one without it of something no
	// handler sees (SIGKILL, the OOM killer, a crash, _exit).
	Signal uint64
}

// BinDesc describes one bin. Used is the bin's fill mark: the probes
// store it after every record.
type BinDesc struct {
	Level uint32 // index+1 of the level entry that owns the bin; 0: free
	Ord   uint32 // the bin's position in its level's chain, counting from 0
	Used  uint32 // bytes of complete records
	_     uint32
}

// NumReasons is the number of removal reasons buffer counts per level.
const NumReasons = 5

// LevelEntry is the bookkeeping of one level.
type LevelEntry struct {
	Loc      uint32 // the location (hierarchy) id
	Depth    uint32
	Class    uint8
	Closed   uint8
	ClosedBy uint8
	_        [5]byte
	Revoked  [NumReasons]uint64 // records in bins revoked, by reason
	Dropped  [NumReasons]uint64 // records dropped at the probe, by reason (as last published)
}

// LocEntry holds the counts a location published last.
type LocEntry struct {
	Recorded         uint64
	FilteredName     uint64
	FilteredDuration uint64
	Published        uint64 // 1 once the counts were published

	// The keep-last policy's window, stored by the reduction that moves
	// it: the key (time, seq) of the newest record it revoked.
	WindowTime uint64
	WindowSeq  uint64
	Windowed   uint64
}

// The kinds of definition records.
const (
	DefHeader    = 1 // JSON of the trace header
	DefRegion    = 2 // id, line, paradigm (uvarints), name, file (length-prefixed)
	DefLocation  = 3 // id (uvarint), name
	DefReduction = 4 // index, reason, depth, class, time, bins, records, steps (uvarints)
	DefComm      = 5 // JSON of a communicator
	DefWin       = 6 // JSON of an RMA window (again when it is named)
	DefRmaGroup  = 7 // JSON of an RMA group
)

// Layout sizes a mapping.
type Layout struct {
	Bins, BinSize int
	LevelCap      int
	LocCap        int
	DefCap        int
}

// DefaultLayout returns the layout for a buffer of bins bins of binSize
// bytes. The tables and the log are generous: the file is sparse on tmpfs,
// and only what is written takes memory.
func DefaultLayout(bins, binSize int) Layout {
	return Layout{Bins: bins, BinSize: binSize, LevelCap: max(4*bins, 1<<16), LocCap: 1 << 16, DefCap: 64 << 20}
}

func align(n, a uint64) uint64 { return (n + a - 1) / a * a }

// offsets computes where each part goes.
func (l Layout) offsets() (levels, locs, descs, defs, bins, size uint64) {
	const page = 4096
	levels = HeaderSize
	locs = align(levels+uint64(l.LevelCap)*uint64(unsafe.Sizeof(LevelEntry{})), page)
	descs = align(locs+uint64(l.LocCap)*uint64(unsafe.Sizeof(LocEntry{})), page)
	defs = align(descs+uint64(l.Bins)*uint64(unsafe.Sizeof(BinDesc{})), page)
	bins = align(defs+uint64(l.DefCap), page)
	size = bins + uint64(l.Bins)*uint64(l.BinSize)
	return
}

// Mapping is a process's own mapping, for writing.
type Mapping struct {
	path string
	mem  []byte
	hdr  *Header

	Descs  []BinDesc
	Bins   []byte
	levels []LevelEntry
	locs   []LocEntry
	defs   []byte

	mu sync.Mutex // the definition log, the tables' counts and reservations
	f  *os.File   // kept open to reserve memory as the tables and the log grow
	// Bytes reserved so far of the level table, the location table and
	// the log.
	resLevels, resLocs, resDefs uint64
	// After a reservation failed (a full tmpfs), the next reserveSkip
	// ones fail without asking the file system again, and the skip
	// doubles with each failure: a failing fallocate per definition made
	// 3·10⁵ definitions 46× slower. What is not reserved is lost and
	// counted (DefLost, LevelLost; a location entry not reserved is nil) as before.
	reserveSkip, reserveBackoff int
}

// chunk is how much of a table or the log is reserved at a time.
const chunk = 1 << 20

// DefaultDir is where mappings go unless HMB_SURVIVE_DIR says otherwise:
// memory, never a network file system, where every store would become
// traffic.
const DefaultDir = "/dev/shm"

// FileName returns the mapping's file name for a measurement.
func FileName(name string, rank, pid int) string {
	return fmt.Sprintf("hmbtrace-%s.%d.%d.shm", strings.ReplaceAll(name, "/", "_"), rank, pid)
}

// Path returns the file's path.
func (m *Mapping) Path() string { return m.path }

// NewLevel fills the next level entry and returns its index, or -1 when
// the table is full (counted in the header).
func (m *Mapping) NewLevel(loc, depth int, class uint8) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.hdr.Levels
	size := uint64(unsafe.Sizeof(LevelEntry{}))
	if i >= uint64(len(m.levels)) || !m.reserveLocked(m.hdr.OffLevels, &m.resLevels, (i+1)*size, uint64(len(m.levels))*size) {
		m.hdr.LevelLost++
		return -1
	}
	m.levels[i] = LevelEntry{Loc: uint32(loc), Depth: uint32(depth), Class: class}
	m.hdr.Levels = i + 1
	return int(i)
}

// Level returns level entry i for its writer to update.
func (m *Mapping) Level(i int) *LevelEntry { return &m.levels[i] }

// Loc returns location id's entry, or nil beyond the table; the entries
// up to id count as filled from then on.
func (m *Mapping) Loc(id int) *LocEntry {
	if id < 0 || id >= len(m.locs) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	size := uint64(unsafe.Sizeof(LocEntry{}))
	if !m.reserveLocked(m.hdr.OffLocs, &m.resLocs, uint64(id+1)*size, uint64(len(m.locs))*size) {
		return nil
	}
	if uint64(id) >= m.hdr.Locs {
		m.hdr.Locs = uint64(id) + 1
	}
	return &m.locs[id]
}

// Append adds a definition record to the log; false if it did not fit
// (counted in the header).
func (m *Mapping) Append(kind byte, payload []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := m.hdr.DefUsed
	n := uint64(5 + len(payload))
	if at+n > uint64(len(m.defs)) {
		m.hdr.DefLost++
		return false
	}
	if !m.reserveLocked(m.hdr.OffDefs, &m.resDefs, at+n, uint64(len(m.defs))) {
		m.hdr.DefLost++
		return false
	}
	binary.LittleEndian.PutUint32(m.defs[at:], uint32(len(payload)))
	m.defs[at+4] = kind
	copy(m.defs[at+5:], payload)
	m.hdr.DefUsed = at + n
	return true
}

// Close marks the mapping closed and removes the file: the trace file was
// written. The memory stays mapped, since a probe that was under way may
// still store into it, until Unmap.
func (m *Mapping) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hdr.State = StateClosed
	m.f.Close()
	return os.Remove(m.path)
}

// Signaled records that a handler caught signal sig and is about to write
// the trace.
func (m *Mapping) Signaled(sig int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hdr.Signal = uint64(sig)
}

// Leave marks the mapping final and leaves the file for recovery: Close
// could not write the trace file.
func (m *Mapping) Leave() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hdr.State = StateLeft
	m.f.Close()
}

// Alive reports whether the process that made a mapping with this header
// is still running: its pid exists with the same start time and has not
// exited. A zombie (dead, not yet reaped, as ranks are for a moment after
// mpirun ends) is not running: its mapping will never change again.
func (h *Header) Alive() bool {
	st, err := ProcessStart(int(h.PID))
	if err != nil || processZombie(int(h.PID)) {
		return false
	}
	if h.StartTime == 0 {
		return true // unknown at creation: assume the pid is still it
	}
	return st == h.StartTime
}
