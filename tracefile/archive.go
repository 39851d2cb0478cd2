package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The run archive's constants (the layout is in the package comment).
const (
	ArchiveExt     = ".hmbrun" // an archive file's extension
	archiveMagic   = "HMBRUN\x00\x01"
	archiveVersion = 1
	preludeSize    = 64
	indexEntrySize = 20 // rank u32, slotOff u64, slotCap u64
	slotHeaderSize = 32
	slotMagic      = "HMBSLOT\x00"
	slotAlign      = 4096
	flagEventsNone = 1 << 0
	// maxArchiveRanks bounds the ranks a reader believes a prelude about,
	// so that a corrupted count is an error, not an allocation.
	maxArchiveRanks = 1 << 26
	maxSlotCap      = 1 << 50
	maxMovedName    = 1024
)

// SlotState says what a rank's slot of an archive holds.
type SlotState uint32

const (
	SlotEmpty   SlotState = 0 // never written: the rank died, or is still writing
	SlotInPlace SlotState = 1 // the rank's complete trace
	SlotMoved   SlotState = 2 // the base name of the rank's trace file beside the archive
)

func (s SlotState) String() string {
	switch s {
	case SlotEmpty:
		return "empty"
	case SlotInPlace:
		return "in place"
	case SlotMoved:
		return "moved"
	}
	return fmt.Sprintf("state %d", uint32(s))
}

// ErrSlotEmpty is wrapped by the error of Archive.OpenRank for a rank that
// never wrote its slot and left no trace file beside the archive.
var ErrSlotEmpty = errors.New("slot empty: the process did not write its trace (it died, or was killed, after the collective end?)")

// ErrEventsNone is wrapped by the error of a tool asked for events of a
// rank read from an archive written with HMB_OUTPUT_EVENTS=none.
var ErrEventsNone = errors.New("the archive was written with HMB_OUTPUT_EVENTS=none: it holds no events")

// slotHeader is the 32 bytes at a slot's start.
type slotHeader struct {
	Rank  uint32
	State SlotState
	Len   uint64
	CRC   uint32
}

func (h *slotHeader) encode() []byte {
	b := make([]byte, slotHeaderSize)
	copy(b, slotMagic)
	binary.LittleEndian.PutUint32(b[8:], h.Rank)
	binary.LittleEndian.PutUint32(b[12:], uint32(h.State))
	binary.LittleEndian.PutUint64(b[16:], h.Len)
	binary.LittleEndian.PutUint32(b[24:], h.CRC)
	return b
}

// decodeSlotHeader reads a slot header; all zeros (a slot its leader never
// marked) is an empty slot of unknown rank, ^0.
func decodeSlotHeader(b []byte) (slotHeader, error) {
	if string(b[:8]) != slotMagic {
		for _, c := range b[:slotHeaderSize] {
			if c != 0 {
				return slotHeader{}, fmt.Errorf("no slot header (magic %q)", b[:8])
			}
		}
		return slotHeader{Rank: ^uint32(0)}, nil
	}
	h := slotHeader{Rank: binary.LittleEndian.Uint32(b[8:]), State: SlotState(binary.LittleEndian.Uint32(b[12:])),
		Len: binary.LittleEndian.Uint64(b[16:]), CRC: binary.LittleEndian.Uint32(b[24:])}
	if h.State > SlotMoved {
		return h, fmt.Errorf("unknown slot state %d", uint32(h.State))
	}
	return h, nil
}

// validRunName reports whether name can name files beside an archive:
// not empty, no directory in it.
func validRunName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// IsArchive reports whether path is a run archive file (by its magic).
func IsArchive(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8]byte
	n, _ := f.ReadAt(head[:], 0)
	return n == 8 && string(head[:]) == archiveMagic
}

// Archive is an opened run archive file: its prelude, index and slot
// headers in memory; each rank's trace read when it is opened.
type Archive struct {
	Path                 string
	Name                 string // the run's trace name
	World, Group, Groups int
	EventsNone           bool // HMB_OUTPUT_EVENTS=none: the slots hold no bins
	// An archive of HMB_OUTPUT_EVENTS=none written by the ranks' collective
	// end has no Slots: only the run-wide results (ResultsOnly).
	Slots []Slot

	resultsOff, resultsLen int64
	f                      *sharedFile
	ref                    io.Closer // the archive's own reference to f
}

// Slot is one rank's part of an archive.
type Slot struct {
	Rank  int
	State SlotState
	Off   int64  // of its header in the file
	Cap   int64  // bytes reserved, header included
	Len   int64  // of its payload
	Moved string // SlotMoved: the base name of its trace file beside the archive
	crc   uint32
}

// OpenArchive opens the archive file at path and checks its prelude,
// index (and its checksum) and slot headers. The ranks' traces are read
// by OpenRank.
func OpenArchive(path string) (*Archive, error) {
	f, a, err := openRead(path, readArchive)
	if err != nil {
		return nil, err
	}
	a.Path = path
	a.f = &sharedFile{f: f, refs: 1}
	a.ref = &fileRef{s: a.f}
	return a, nil
}

func archiveFail(off int64, format string, a ...any) error {
	return &FormatError{Offset: off, Reason: fmt.Sprintf(format, a...)}
}

// readIndex reads and checks the prelude and index of the archive in r,
// of the given size: the slots' places, not their headers.
func readIndex(r io.ReaderAt, size int64) (*Archive, error) {
	var pre [preludeSize]byte
	if n, err := r.ReadAt(pre[:], 0); n < preludeSize {
		if err == nil || err == io.EOF {
			return nil, archiveFail(0, "file truncated in the archive's prelude (%d of %d bytes)", n, preludeSize)
		}
		return nil, err
	}
	if string(pre[:8]) != archiveMagic {
		return nil, archiveFail(0, "not an hmbtrace run archive (magic %q)", pre[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(pre[8:]); v != archiveVersion {
		return nil, archiveFail(8, "archive version %d; this reader reads version %d (a newer hmbtrace wrote it)", v, archiveVersion)
	}
	flags := le.Uint32(pre[12:])
	if flags&^flagEventsNone != 0 {
		return nil, archiveFail(12, "unknown archive flags 0x%x", flags)
	}
	world, group, groups, nslots := le.Uint32(pre[16:]), le.Uint32(pre[20:]), le.Uint32(pre[24:]), le.Uint32(pre[28:])
	switch {
	case world == 0 || world > maxArchiveRanks:
		return nil, archiveFail(16, "a run of %d ranks", world)
	case groups == 0 || groups > world || group >= groups:
		return nil, archiveFail(20, "group %d of %d in a run of %d ranks", group, groups, world)
	case nslots > world:
		return nil, archiveFail(28, "%d slots in a run of %d ranks", nslots, world)
	}
	ixOff, ixLen, resOff, resLen := le.Uint64(pre[32:]), le.Uint64(pre[40:]), le.Uint64(pre[48:]), le.Uint64(pre[56:])
	// An archive of the run's results only (HMB_OUTPUT_EVENTS=none) has no
	// slot; any other has one at least.
	if nslots == 0 && (flags&flagEventsNone == 0 || resLen == 0) {
		return nil, archiveFail(28, "no slots, and not an archive of the run's results only")
	}
	if ixOff < preludeSize || ixOff > uint64(size) || ixLen > uint64(size)-ixOff || ixLen < 1+4+uint64(nslots)*indexEntrySize {
		return nil, archiveFail(32, "index of %d bytes at offset %d in a file of %d bytes", ixLen, ixOff, size)
	}
	headEnd := ixOff + ixLen
	if resLen != 0 || resOff != 0 {
		if resOff < preludeSize || resOff > uint64(size) || resLen > uint64(size)-resOff || resLen < 4 ||
			(resOff < headEnd && resOff+resLen > ixOff) {
			return nil, archiveFail(48, "results of %d bytes at offset %d (index at %d, %d bytes; file of %d bytes)", resLen, resOff, ixOff, ixLen, size)
		}
		headEnd = max(headEnd, resOff+resLen)
	}
	ix := make([]byte, ixLen)
	if _, err := r.ReadAt(ix, int64(ixOff)); err != nil {
		return nil, err
	}
	if got, want := le.Uint32(ix[ixLen-4:]), crc32c(ix[:ixLen-4]); got != want {
		return nil, archiveFail(int64(ixOff+ixLen-4), "index checksum mismatch: file says 0x%08x, content gives 0x%08x (the archive is corrupted)", got, want)
	}
	fl := sectionFields(ix[:ixLen-4], int64(ixOff), "INDEX")
	a := &Archive{Name: fl.String("name"), World: int(world), Group: int(group), Groups: int(groups),
		EventsNone: flags&flagEventsNone != 0, resultsOff: int64(resOff), resultsLen: int64(resLen)}
	if fl.OK() && !validRunName(a.Name) {
		fl.Fail("name", fmt.Sprintf("%q is not a trace name (its rank files are named after it)", a.Name))
	}
	if !fl.OK() {
		return nil, fl.formatError()
	}
	if rest := fl.Len(); rest != int(nslots)*indexEntrySize {
		return nil, archiveFail(int64(ixOff)+int64(fl.Off()), "index: %d bytes for %d slots of %d bytes", rest, nslots, indexEntrySize)
	}
	a.Slots = make([]Slot, nslots)
	prevEnd := int64(headEnd)
	for i := range a.Slots {
		at := fl.Off() + i*indexEntrySize
		e := ix[at:]
		s := Slot{Rank: int(le.Uint32(e)), Off: int64(le.Uint64(e[4:]) & (1<<63 - 1)), Cap: int64(le.Uint64(e[12:]) & (1<<63 - 1))}
		eoff := int64(ixOff) + int64(at)
		switch {
		case s.Rank >= int(world) || (i > 0 && s.Rank <= a.Slots[i-1].Rank):
			return nil, archiveFail(eoff, "index: slot %d: rank %d not ascending in [0, %d)", i, s.Rank, world)
		case s.Off%slotAlign != 0 || s.Off < prevEnd:
			return nil, archiveFail(eoff, "index: rank %d: slot at offset %d (want 4096-aligned, at or after %d)", s.Rank, s.Off, prevEnd)
		case s.Cap < slotAlign || s.Cap%slotAlign != 0 || s.Cap > maxSlotCap:
			return nil, archiveFail(eoff, "index: rank %d: slot of %d bytes", s.Rank, s.Cap)
		case s.Off > size || s.Cap > size-s.Off:
			return nil, archiveFail(eoff, "file truncated: rank %d's slot of %d bytes at offset %d passes the end of the file at %d", s.Rank, s.Cap, s.Off, size)
		}
		prevEnd = s.Off + s.Cap
		a.Slots[i] = s
	}
	return a, nil
}

// readArchive reads and checks the prelude, index and slot headers of the
// archive in r, of the given size.
func readArchive(r io.ReaderAt, size int64) (*Archive, error) {
	a, err := readIndex(r, size)
	if err != nil {
		return nil, err
	}
	var hb [slotHeaderSize]byte
	for i := range a.Slots {
		s := &a.Slots[i]
		if _, err := r.ReadAt(hb[:], s.Off); err != nil {
			return nil, err
		}
		h, err := decodeSlotHeader(hb[:])
		if err != nil {
			return nil, archiveFail(s.Off, "rank %d: %v", s.Rank, err)
		}
		if h.Rank != ^uint32(0) && int(h.Rank) != s.Rank {
			return nil, archiveFail(s.Off, "rank %d's slot holds a header of rank %d", s.Rank, h.Rank)
		}
		s.State, s.crc = h.State, h.CRC
		switch h.State {
		case SlotInPlace:
			if h.Len > uint64(s.Cap-slotHeaderSize) {
				return nil, archiveFail(s.Off, "rank %d: a trace of %d bytes in a slot of %d", s.Rank, h.Len, s.Cap)
			}
			s.Len = int64(h.Len)
		case SlotMoved:
			if h.Len == 0 || h.Len > maxMovedName {
				return nil, archiveFail(s.Off, "rank %d: moved, to a name of %d bytes", s.Rank, h.Len)
			}
			name := make([]byte, h.Len)
			if _, err := r.ReadAt(name, s.Off+slotHeaderSize); err != nil {
				return nil, err
			}
			if got := crc32c(name); got != h.CRC {
				return nil, archiveFail(s.Off+slotHeaderSize, "rank %d: slot checksum mismatch: header says 0x%08x, content gives 0x%08x (the archive is corrupted)", s.Rank, h.CRC, got)
			}
			s.Len, s.Moved = int64(h.Len), string(name)
			if s.Moved == "." || s.Moved == ".." || strings.ContainsAny(s.Moved, "/\\\x00") {
				return nil, archiveFail(s.Off+slotHeaderSize, "rank %d: moved to %q, not a file beside the archive", s.Rank, s.Moved)
			}
		}
	}
	return a, nil
}

// ResultsOnly reports whether the archive holds the run's results and no
// rank's trace: what the collective end of a run with
// HMB_OUTPUT_EVENTS=none writes.
func (a *Archive) ResultsOnly() bool { return len(a.Slots) == 0 }

// Results returns the run-wide results sections (without their
// checksum, which it verifies); nil when the file has none.
func (a *Archive) Results() ([]byte, error) {
	if a.resultsLen == 0 {
		return nil, nil
	}
	b := make([]byte, a.resultsLen)
	if err := a.f.readAt(b, a.resultsOff); err != nil {
		return nil, fmt.Errorf("%s: results: %v", a.Path, err)
	}
	n := len(b) - 4
	if got, want := binary.LittleEndian.Uint32(b[n:]), crc32c(b[:n]); got != want {
		return nil, &FormatError{Path: a.Path, Offset: a.resultsOff + int64(n),
			Reason: fmt.Sprintf("results checksum mismatch: file says 0x%08x, content gives 0x%08x (the archive is corrupted)", got, want)}
	}
	if _, err := ResultSections(b[:n]); err != nil {
		return nil, &FormatError{Path: a.Path, Offset: a.resultsOff, Reason: "results: " + err.Error()}
	}
	return b[:n], nil
}

// Result returns the payload of the archive's results section of the
// given kind (ResultRunProfile, ...), and false when it has none.
func (a *Archive) Result(kind byte) ([]byte, bool, error) {
	b, err := a.Results()
	if err != nil {
		return nil, false, err
	}
	secs, _ := ResultSections(b) // Results checked them
	for _, s := range secs {
		if s.Kind == kind {
			return s.Data, true, nil
		}
	}
	return nil, false, nil
}

// RankPath is the name a rank read from the archive goes by (File.Path):
// the archive's path and the rank, "run.hmbrun#3".
func (a *Archive) RankPath(rank int) string { return fmt.Sprintf("%s#%d", a.Path, rank) }

// RankFile returns the path of slot i's rank's own trace file beside the
// archive, <name>.<rank>.hmb, where a rank that could not write its slot
// leaves its trace.
func (a *Archive) RankFile(i int) string {
	return filepath.Join(filepath.Dir(a.Path), fmt.Sprintf("%s.%d.hmb", a.Name, a.Slots[i].Rank))
}

// OpenRank opens slot i's trace, reading only that slot, and checks it
// (its checksum, and that it is the slot's rank's). A moved slot opens the
// trace file beside the archive that it names; an empty one opens the
// rank's trace file beside the archive (RankFile) if there is one, and is
// an error wrapping ErrSlotEmpty if not. The File shares the archive's open
// file: it stays valid after Archive.Close, until it is closed itself.
func (a *Archive) OpenRank(i int) (*File, error) {
	if i < 0 || i >= len(a.Slots) {
		return nil, fmt.Errorf("%s: slot %d of %d", a.Path, i, len(a.Slots))
	}
	s := &a.Slots[i]
	switch s.State {
	case SlotMoved:
		p := filepath.Join(filepath.Dir(a.Path), s.Moved)
		f, err := Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: rank %d: its trace did not fit its slot and was written to %s: %w", a.Path, s.Rank, s.Moved, err)
		}
		return a.checkRank(f, s)
	case SlotEmpty:
		p := a.RankFile(i)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s: rank %d: %w; no trace file %s beside it (with HMB_SURVIVE=1, hmbtrace recover -o %s writes it from the rank's mapping)",
				a.Path, s.Rank, ErrSlotEmpty, filepath.Base(p), filepath.Dir(a.Path))
		}
		f, err := Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: rank %d: slot empty; its trace file beside it: %w", a.Path, s.Rank, err)
		}
		return a.checkRank(f, s)
	}
	ref, err := a.f.acquire()
	if err != nil {
		return nil, fmt.Errorf("%s: rank %d: %v", a.Path, s.Rank, err)
	}
	base := s.Off + slotHeaderSize
	sr := io.NewSectionReader(a.f.f, base, s.Len)
	sum := &summingReaderAt{r: sr, h: crc32.New(castagnoli)}
	f, err := read(sum, s.Len, a.EventsNone)
	if err == nil {
		err = a.checkSlotSum(s, sum)
	}
	if err != nil {
		ref.Close()
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = a.Path
			fe.Offset += base
			fe.Reason = fmt.Sprintf("rank %d: %s", s.Rank, fe.Reason)
			return nil, fe
		}
		return nil, fmt.Errorf("%s: rank %d: %w", a.Path, s.Rank, err)
	}
	f.r, f.closer, f.Path = sr, ref, a.RankPath(s.Rank)
	f.EventsNone = a.EventsNone
	if f.commRefs != nil {
		if err := a.resolveComms(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: rank %d: %w", a.Path, s.Rank, err)
		}
	}
	if f.Header.Rank != s.Rank {
		f.Close()
		return nil, &FormatError{Path: a.Path, Offset: s.Off, Reason: fmt.Sprintf("rank %d's slot holds the trace of rank %d", s.Rank, f.Header.Rank)}
	}
	return f, nil
}

// checkSlotSum verifies an in-place slot's checksum: from the bytes read
// as the trace was, when that read them all in order, else by a second
// pass.
func (a *Archive) checkSlotSum(s *Slot, sum *summingReaderAt) error {
	if sum.next != s.Len {
		sum.h.Reset()
		if _, err := io.Copy(sum.h, io.NewSectionReader(sum.r, 0, s.Len)); err != nil {
			return err
		}
	}
	if got := sum.h.Sum32(); got != s.crc {
		return &FormatError{Offset: -slotHeaderSize + 24, Reason: fmt.Sprintf("slot checksum mismatch: header says 0x%08x, content gives 0x%08x (the archive is corrupted)", s.crc, got)}
	}
	return nil
}

// checkRank checks that a trace file read for slot s is its rank's.
func (a *Archive) checkRank(f *File, s *Slot) (*File, error) {
	if f.Header.Rank != s.Rank {
		f.Close()
		return nil, fmt.Errorf("%s: rank %d: %s holds the trace of rank %d", a.Path, s.Rank, f.Path, f.Header.Rank)
	}
	return f, nil
}

// Close releases the archive. Files opened from it stay valid until they
// are closed.
func (a *Archive) Close() error { return a.ref.Close() }

// summingReaderAt sums the bytes read through it while the reads come in
// order, one after the other, from offset 0.
type summingReaderAt struct {
	r    io.ReaderAt
	h    hash.Hash32
	next int64
}

func (s *summingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.r.ReadAt(p, off)
	if off == s.next {
		s.h.Write(p[:n])
		s.next += int64(n)
	}
	return n, err
}

// sharedFile is an os.File shared by an archive and the files opened from
// it; the last reference closes it.
type sharedFile struct {
	f    *os.File
	mu   sync.Mutex
	refs int
}

func (s *sharedFile) acquire() (io.Closer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs == 0 {
		return nil, errors.New("the archive is closed")
	}
	s.refs++
	return &fileRef{s: s}, nil
}

func (s *sharedFile) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		return s.f.Close()
	}
	return nil
}

func (s *sharedFile) readAt(b []byte, off int64) error {
	_, err := s.f.ReadAt(b, off)
	return err
}

// fileRef is one reference to a sharedFile; closing it twice releases once.
type fileRef struct {
	s    *sharedFile
	once sync.Once
}

func (r *fileRef) Close() error {
	var err error
	r.once.Do(func() { err = r.s.release() })
	return err
}

// The kinds of results sections.
const (
	// ResultRunProfile is the run-wide profile the ranks reduced at the
	// collective end of the run, over MPI (summary.RunProfile's binary
	// form): what the statistics said up to MPI_Finalize.
	ResultRunProfile byte = 1
	// ResultComm is the run's exact communication matrix, reduced the same
	// way (comm.Parts, JSON): every sender's messages and bytes to every
	// receiver, counted at the probe.
	ResultComm byte = 2
	// ResultVariation is the variation analysis the ranks ran on their own
	// events at the collective end (variation.Variation, JSON).
	ResultVariation byte = 3
	// ResultDynamics is the run's phase series, cut by each rank from its
	// own statistics at the collective end (trend.Series, JSON): what the
	// dynamics analysis reads.
	ResultDynamics byte = 4
	// ResultCosts is what each pass of the collective end cost rank 0
	// (JSON of []PassCost).
	ResultCosts byte = 5
	// ResultWaitStates is the wait states the ranks replayed in-situ, each
	// on its own events, exchanging with their peers the times the
	// patterns need (waitstate.InSitu, JSON).
	ResultWaitStates byte = 6
)

// PassCost is what one pass of the collective end cost rank 0, the root
// of its tree: from making its own part to taking the run's, which
// includes waiting for every other rank's; and the bytes of the parts it
// took (its own and its children's, merged into the run's).
type PassCost struct {
	Pass    string
	Seconds float64
	Bytes   int
}

// ResultSection is one section of an archive's run-wide results.
type ResultSection struct {
	Kind byte
	Data []byte
}

// AppendResult appends a results section (kind, payload) to b, as
// ArchivePlan.Results holds them.
func AppendResult(b []byte, kind byte, payload []byte) []byte {
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// ResultSections splits results sections (Archive.Results) into their
// kinds and payloads, which alias b.
func ResultSections(b []byte) ([]ResultSection, error) {
	var out []ResultSection
	for off := 0; off < len(b); {
		kind := b[off]
		n, k := binary.Uvarint(b[off+1:])
		if k <= 0 {
			return nil, fmt.Errorf("section at %d: bad length", off)
		}
		start := off + 1 + k
		if n > uint64(len(b)-start) {
			return nil, fmt.Errorf("section at %d (kind 0x%02x): %d bytes, %d left", off, kind, n, len(b)-start)
		}
		out = append(out, ResultSection{Kind: kind, Data: b[start : start+int(n)]})
		off = start + int(n)
	}
	return out, nil
}
