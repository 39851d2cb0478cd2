package tracefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tempfile"
	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// ArchivePlan is what a group's leader knows at the collective end of an
// MPI run: the file's place in the run and what each of its ranks asks for.
type ArchivePlan struct {
	Name          string
	World         int // ranks in the run (MPI_COMM_WORLD's size)
	Group, Groups int // this file's group, and how many files the run has
	Ranks         []int
	// Capacity is the bytes each rank of Ranks asks for, in the same
	// order (SlotCapacity of its trace's size now); rounded up to 4096.
	Capacity   []int64
	EventsNone bool   // HMB_OUTPUT_EVENTS=none: the slots will hold no bins
	Results    []byte // the run-wide results sections (AppendResult); nil for none
	// Start is when the run began (the leader's measurement start). An
	// archive already at the path that was modified before it is stale, of
	// an earlier run, and is replaced; one modified since is not (zero
	// Start: never replaced).
	Start time.Time
}

// ErrSlotFull is returned (wrapped) by WriteSlot when the trace does not
// fit the rank's slot: the slot stays empty, and the caller writes the
// rank's own trace file beside the archive and calls MarkSlotMoved.
var ErrSlotFull = errors.New("the trace does not fit its slot of the run archive")

// ArchiveName returns the path of group's archive file in dir:
// <name>.hmbrun for a run of one group, else <name>.<group>.hmbrun.
func ArchiveName(dir, name string, group, groups int) string {
	if groups <= 1 {
		return filepath.Join(dir, name+ArchiveExt)
	}
	return filepath.Join(dir, fmt.Sprintf("%s.%d%s", name, group, ArchiveExt))
}

// SlotCapacity returns the bytes to reserve for a rank whose trace is
// traceSize bytes at the collective end: its slot header, the trace, and a
// margin of max(256 KiB, traceSize/8) for what the rank records after
// MPI_Finalize, rounded up to a multiple of 4096.
func SlotCapacity(traceSize int64) int64 {
	traceSize = max(traceSize, 0)
	return alignSlot(slotHeaderSize + traceSize + max(256<<10, traceSize/8))
}

func alignSlot(n int64) int64 { return (n + slotAlign - 1) &^ (slotAlign - 1) }

// CreateArchive creates a group's archive file at path: prelude, index,
// results and an empty header in every slot, sized to the end of the last
// slot (sparse where the file system allows). It returns each rank's slot
// offset, in the order of plan.Ranks. The file is complete before it
// appears at path. A file already at path is replaced only when stale (see
// ArchivePlan.Start): the archive of another process of the same run, or of
// a concurrent run, is never overwritten; that is an error satisfying
// errors.Is(err, fs.ErrExist), and the caller falls back to rank files.
func CreateArchive(path string, plan ArchivePlan) (offsets []int64, err error) {
	if err := plan.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	head, offsets, end := plan.layout()
	f, err := tempfile.Create(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Discard()
		}
	}()
	if _, err = f.WriteAt(head, 0); err != nil {
		return nil, err
	}
	for i, off := range offsets {
		h := slotHeader{Rank: uint32(plan.Ranks[i])}
		if _, err = f.WriteAt(h.encode(), off); err != nil {
			return nil, err
		}
	}
	if err = f.Truncate(end); err != nil {
		return nil, err
	}
	tmp, err := f.Finish()
	if err != nil {
		return nil, err
	}
	if err = placeArchive(tmp, path, plan.Start); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return offsets, nil
}

// placeArchive moves the complete file tmp to path, replacing only a
// stale file there, under the directory's lock as WriteNew places traces.
func placeArchive(tmp, path string, start time.Time) error {
	defer lockDir(filepath.Dir(path))()
	var pl Placement
	// A file whose header cannot be read as a trace's (an archive) is
	// judged by its modification time alone.
	self := &Header{PID: os.Getpid(), StartWall: start}
	done, _, err := placeAt(tmp, path, self, &pl)
	if err != nil {
		return err
	}
	if !done {
		why := "a file modified since this run began is there (another process of this run, or a concurrent run, writes it)"
		if start.IsZero() {
			why = "a file is there, and the plan has no start time to judge it stale by"
		}
		return &os.PathError{Op: "create archive", Path: path, Err: fmt.Errorf("%s: %w", why, fs.ErrExist)}
	}
	return nil
}

func (p *ArchivePlan) check() error {
	switch {
	case !validRunName(p.Name):
		return fmt.Errorf("archive plan: %q is not a trace name", p.Name)
	case p.World <= 0 || p.World > maxArchiveRanks:
		return fmt.Errorf("archive plan: world of %d ranks", p.World)
	case p.Groups <= 0 || p.Group < 0 || p.Group >= p.Groups:
		return fmt.Errorf("archive plan: group %d of %d", p.Group, p.Groups)
	case len(p.Ranks) == 0 && !(p.EventsNone && len(p.Results) > 0):
		// Only the run's results, without a rank's trace, make an archive
		// of no slots (HMB_OUTPUT_EVENTS=none).
		return fmt.Errorf("archive plan: no ranks")
	case len(p.Ranks) != len(p.Capacity):
		return fmt.Errorf("archive plan: %d ranks, %d capacities", len(p.Ranks), len(p.Capacity))
	}
	for i, r := range p.Ranks {
		if r < 0 || r >= p.World || (i > 0 && r <= p.Ranks[i-1]) {
			return fmt.Errorf("archive plan: rank %d (at %d) not ascending in [0, %d)", r, i, p.World)
		}
		if c := p.Capacity[i]; c <= slotHeaderSize || c > maxSlotCap {
			return fmt.Errorf("archive plan: rank %d asks for a slot of %d bytes", r, c)
		}
	}
	if _, err := ResultSections(p.Results); err != nil {
		return fmt.Errorf("archive plan: results: %v", err)
	}
	return nil
}

// layout encodes the prelude, index and results, and places the slots
// after them.
func (p *ArchivePlan) layout() (head []byte, offsets []int64, end int64) {
	var index wirecodec.Writer
	index.String(p.Name)
	ixEntries := len(index)
	index = append(index, make([]byte, indexEntrySize*len(p.Ranks)+4)...)
	indexLen := int64(len(index))
	var results []byte
	if len(p.Results) > 0 {
		results = binary.LittleEndian.AppendUint32(append([]byte(nil), p.Results...), crc32c(p.Results))
	}
	resultsOff := int64(0)
	if len(results) > 0 {
		resultsOff = preludeSize + indexLen
	}
	off := alignSlot(preludeSize + indexLen + int64(len(results)))
	offsets = make([]int64, len(p.Ranks))
	for i, r := range p.Ranks {
		e := index[ixEntries+i*indexEntrySize:]
		binary.LittleEndian.PutUint32(e, uint32(r))
		binary.LittleEndian.PutUint64(e[4:], uint64(off))
		c := alignSlot(p.Capacity[i])
		binary.LittleEndian.PutUint64(e[12:], uint64(c))
		offsets[i] = off
		off += c
	}
	binary.LittleEndian.PutUint32(index[indexLen-4:], crc32c(index[:indexLen-4]))

	pre := make([]byte, preludeSize)
	copy(pre, archiveMagic)
	le := binary.LittleEndian
	le.PutUint32(pre[8:], archiveVersion)
	var flags uint32
	if p.EventsNone {
		flags |= flagEventsNone
	}
	le.PutUint32(pre[12:], flags)
	le.PutUint32(pre[16:], uint32(p.World))
	le.PutUint32(pre[20:], uint32(p.Group))
	le.PutUint32(pre[24:], uint32(p.Groups))
	le.PutUint32(pre[28:], uint32(len(p.Ranks)))
	le.PutUint64(pre[32:], preludeSize)
	le.PutUint64(pre[40:], uint64(indexLen))
	le.PutUint64(pre[48:], uint64(resultsOff))
	le.PutUint64(pre[56:], uint64(len(results)))
	head = append(append(pre, index...), results...)
	return head, offsets, off
}

// WriteSlot writes one rank's trace into its slot of the archive at path:
// write produces the trace's bytes (with Write, say) into the writer it is
// given, which puts them in place at off (pwrite). The slot's header is
// written last, so a rank that dies meanwhile leaves its slot empty. When
// the trace exceeds capacity, WriteSlot stops, leaves the slot empty and
// returns an error wrapping ErrSlotFull.
func WriteSlot(path string, off, capacity int64, rank int, write func(w io.Writer) error) error {
	f, a, slotCap, err := openSlot(path, off, rank)
	if err != nil {
		return err
	}
	defer f.Close()
	if capacity > slotCap {
		return fmt.Errorf("%s: rank %d: a capacity of %d bytes for a slot of %d", path, rank, capacity, slotCap)
	}
	sw := &slotWriter{f: f, off: off + slotHeaderSize, limit: capacity - slotHeaderSize, crc: crc32.New(castagnoli),
		refs: hasRunDefinitions(path, a.Name, a.Group, a.Groups)}
	werr := write(sw)
	if sw.full {
		return fmt.Errorf("%s: rank %d: %w (%d bytes)", path, rank, ErrSlotFull, capacity)
	}
	if werr != nil {
		return fmt.Errorf("%s: rank %d: %v", path, rank, werr)
	}
	if sw.err != nil {
		return fmt.Errorf("%s: rank %d: %v", path, rank, sw.err)
	}
	h := slotHeader{Rank: uint32(rank), State: SlotInPlace, Len: uint64(sw.n), CRC: sw.crc.Sum32()}
	if _, err := f.WriteAt(h.encode(), off); err != nil {
		return err
	}
	return f.Close()
}

// MarkSlotMoved records in the empty slot at off that rank's trace is the
// file base (a base name) beside the archive, written there because it did
// not fit (ErrSlotFull).
func MarkSlotMoved(path string, off int64, rank int, base string) error {
	if base == "" || base == "." || base == ".." || filepath.Base(base) != base || len(base) > maxMovedName {
		return fmt.Errorf("%s: rank %d: %q is not the base name of a file beside the archive", path, rank, base)
	}
	f, _, slotCap, err := openSlot(path, off, rank)
	if err != nil {
		return err
	}
	defer f.Close()
	if int64(len(base)) > slotCap-slotHeaderSize {
		return fmt.Errorf("%s: rank %d: the name %q does not fit its slot of %d bytes", path, rank, base, slotCap)
	}
	if _, err := f.WriteAt([]byte(base), off+slotHeaderSize); err != nil {
		return err
	}
	h := slotHeader{Rank: uint32(rank), State: SlotMoved, Len: uint64(len(base)), CRC: crc32c([]byte(base))}
	if _, err := f.WriteAt(h.encode(), off); err != nil {
		return err
	}
	return f.Close()
}

// openSlot opens the archive for writing rank's slot at off, after
// checking with the index that the slot there is rank's, and with its
// header that it is still empty; it returns the slot's capacity.
func openSlot(path string, off int64, rank int) (f *os.File, a *Archive, capacity int64, err error) {
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, 0, err
	}
	a, err = readIndex(f, st.Size())
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, nil, 0, err
	}
	var s *Slot
	for i := range a.Slots {
		if a.Slots[i].Off == off {
			s = &a.Slots[i]
		}
	}
	switch {
	case s == nil:
		return nil, nil, 0, fmt.Errorf("%s: rank %d: no slot at offset %d", path, rank, off)
	case s.Rank != rank:
		return nil, nil, 0, fmt.Errorf("%s: the slot at offset %d is rank %d's, not rank %d's", path, off, s.Rank, rank)
	}
	var b [slotHeaderSize]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: rank %d: slot header at offset %d: %v", path, rank, off, err)
	}
	h, err := decodeSlotHeader(b[:])
	switch {
	case err != nil:
		return nil, nil, 0, fmt.Errorf("%s: rank %d: slot at offset %d: %v", path, rank, off, err)
	case h.State != SlotEmpty:
		return nil, nil, 0, fmt.Errorf("%s: rank %d: slot already written (%v)", path, rank, h.State)
	}
	return f, a, s.Cap, nil
}

// slotWriter puts a slot's payload in place with positioned writes,
// summing it, and stops at the slot's end.
type slotWriter struct {
	f     *os.File
	off   int64 // of the next byte
	n     int64 // written so far
	limit int64
	crc   hash.Hash32
	full  bool
	err   error
	// refs: the run's group 0 holds its unified definitions, so the
	// trace's communicators may refer to them (COMM REFS).
	refs bool
}

func (w *slotWriter) Write(p []byte) (int, error) {
	if w.full {
		return 0, ErrSlotFull
	}
	if w.err != nil {
		return 0, w.err
	}
	if int64(len(p)) > w.limit-w.n {
		w.full = true
		return 0, ErrSlotFull
	}
	n, err := w.f.WriteAt(p, w.off)
	w.crc.Write(p[:n])
	w.off += int64(n)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}
