package tracefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Placement says where WriteNew put a trace, and what it found there.
type Placement struct {
	// Path is the file the trace was written to: the path asked for, or a
	// distinct name next to it (see WriteNew).
	Path string
	// Kept is set when the path asked for held the trace of a process
	// whose measurement ran at the same time as this one, which was kept.
	// KeptHeader is that file's header, nil if it could not be read.
	Kept       bool
	KeptHeader *Header
	// Replaced is set when Path held a stale file of an earlier run,
	// which the trace replaced.
	Replaced bool
	// Displaced names where a concurrent process's trace went when it
	// arrived at Path in the instant between judging a file there stale and
	// moving that file away; "" when this did not happen (it takes three
	// processes writing the same name at once, on a file system that
	// refuses flock: elsewhere the directory's lock keeps them apart).
	Displaced string
}

// maxNames bounds the distinct names WriteNew tries.
const maxNames = 100

// WriteNew writes a trace file as WriteFile does, complete before it
// appears, but never replaces the trace of a process whose measurement
// overlapped this one in time: another process of the same run given the
// same rank and name (the launcher's rank variables were not seen, HMB_RANK
// was set alike, the program forked), or a concurrent run writing to the
// same directory. A file at path whose measurement ended before t's began
// (t.Header.StartWall) is a stale one of an earlier run and is replaced,
// as before. The other's end is read from its header (start time plus its
// measured duration); a file whose header cannot be read counts as
// concurrent when it was modified at or after t's start.
//
// When path is taken, the trace goes to <base>.pid<PID>.hmb next to it
// (PID: t.Header.PID), then <base>.pid<PID>-2.hmb and so on. Each step
// creates the name without replacing (renameat2 RENAME_NOREPLACE, else a
// hard link), so two processes never both believe they hold one name.
func WriteNew(path string, t *Trace, bins func(put func(Bin) error) error) (Placement, error) {
	tmp, err := writeTemp(path, t, bins)
	if err != nil {
		return Placement{}, err
	}
	pl, err := place(tmp, path, &t.Header)
	if err != nil {
		os.Remove(tmp)
	}
	return pl, err
}

// place moves the complete file tmp to path or, when a concurrent trace
// holds path, to the first free distinct name.
func place(tmp, path string, self *Header) (Placement, error) {
	defer lockDir(filepath.Dir(path))()
	return placeLocked(tmp, path, self)
}

// placeLocked is place with the directory's lock held (or not to be had).
func placeLocked(tmp, path string, self *Header) (Placement, error) {
	var pl Placement
	for i := 0; i < maxNames; i++ {
		dst := distinctName(path, self.PID, i)
		done, kept, err := placeAt(tmp, dst, self, &pl)
		if err != nil {
			return pl, err
		}
		if done {
			pl.Path = dst
			return pl, nil
		}
		if i == 0 {
			pl.Kept, pl.KeptHeader = true, kept
		}
	}
	return pl, fmt.Errorf("%s and %d distinct names next to it hold traces of concurrent processes", path, maxNames-1)
}

// distinctName returns path for i = 0, else the i-th distinct name.
func distinctName(path string, pid, i int) string {
	if i == 0 {
		return path
	}
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	if i == 1 {
		return fmt.Sprintf("%s.pid%d%s", base, pid, ext)
	}
	return fmt.Sprintf("%s.pid%d-%d%s", base, pid, i, ext)
}

// placeAt tries to move tmp to dst, replacing only a stale file there. It
// reports done, or the header (nil if unreadable) of the concurrent trace
// that holds dst.
func placeAt(tmp, dst string, self *Header, pl *Placement) (done bool, kept *Header, err error) {
	// Each round either places the file or finds dst changed by another
	// process; a bounded number of rounds covers any realistic contention.
	for round := 0; round < 16; round++ {
		err := moveNoReplace(tmp, dst)
		if err == nil {
			return true, nil, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, nil, err
		}
		fi, err := os.Lstat(dst)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return false, nil, err
		}
		h, herr := ReadHeader(dst)
		if !fi.Mode().IsRegular() || concurrent(self, h, herr, fi) {
			if herr != nil {
				h = nil
			}
			return false, h, nil
		}
		// Stale: move it aside, then make sure what moved is the file
		// judged, not one that arrived since.
		aside := tmp + ".stale"
		if err := os.Rename(dst, aside); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return false, nil, err
		}
		ai, err := os.Lstat(aside)
		if err == nil && os.SameFile(ai, fi) {
			os.Remove(aside)
			pl.Replaced = true
			continue // dst is free now, unless another process takes it first
		}
		// A concurrent trace was moved: put it back, or, if dst was taken
		// yet again, at a distinct name of its own.
		if err := moveNoReplace(aside, dst); err == nil {
			continue
		}
		oh, herr := ReadHeader(aside)
		if herr != nil {
			oh = &Header{PID: os.Getpid()}
		}
		opl, err := placeLocked(aside, dst, oh)
		if err != nil {
			return false, nil, fmt.Errorf("a concurrent trace moved away from %s could not be put back: %v (it is %s)", dst, err, aside)
		}
		pl.Displaced = opl.Path
	}
	return false, nil, fmt.Errorf("%s kept changing while the trace was being placed there", dst)
}

// concurrent reports whether the file at dst holds the trace of a
// measurement that ran at some time during self's: its end (by its header)
// or its writing (its modification time) is not before self's start. The
// modification time counts too because the header's end is an estimate
// that may fall a little short of the real one, while a file written after
// self started was certainly written by a process alive then.
func concurrent(self, other *Header, herr error, fi os.FileInfo) bool {
	if !fi.ModTime().Before(self.StartWall) {
		return true
	}
	if herr == nil {
		if end, ok := other.EndWall(); ok {
			return !end.Before(self.StartWall)
		}
	}
	return false
}

// EndWall returns the wall-clock time at the end of the measurement: its
// start plus the duration its clock measured. ok is false when the header
// does not tell (no end recorded).
func (h *Header) EndWall() (t time.Time, ok bool) {
	if h.EndTicks < h.StartTicks || h.TicksPerSecond <= 0 || h.StartWall.IsZero() {
		return time.Time{}, false
	}
	d := float64(h.EndTicks-h.StartTicks) / h.TicksPerSecond
	return h.StartWall.Add(time.Duration(d * 1e9)), true
}

// maxHeaderSection bounds what ReadHeader reads: a header holds a command
// line and a few names.
const maxHeaderSection = 16 << 20

// ReadHeader reads only the header of the trace file at path, without
// checking the rest of the file.
func ReadHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	fail := func(off int64, format string, a ...any) error {
		return &FormatError{Path: path, Offset: off, Reason: fmt.Sprintf(format, a...)}
	}
	var head [11]byte // magic, version, first section's kind
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fail(0, "file header: %v", err)
	}
	if string(head[:8]) != magic {
		return nil, fail(0, "not an hmbtrace file (magic %q)", head[:8])
	}
	if v := binary.LittleEndian.Uint16(head[8:]); v < 1 || v > version {
		return nil, fail(8, "format version %d; this reader reads versions 1 to %d (a newer hmbtrace wrote it)", v, version)
	}
	if head[10] != secHeader {
		return nil, fail(10, "%s where HEADER was expected", sectionName(head[10]))
	}
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fail(11, "HEADER length: %v", err)
	}
	if n > maxHeaderSection {
		return nil, fail(11, "HEADER of %d bytes, more than a header holds", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, fail(11, "HEADER of %d bytes: %v", n, err)
	}
	var lb [binary.MaxVarintLen64]byte
	fl := sectionFields(p, 11+int64(binary.PutUvarint(lb[:], n)), "HEADER")
	h := &Header{}
	decodeHeader(fl, h)
	if !fl.OK() {
		fe := fl.formatError()
		fe.Path = path
		return nil, fe
	}
	return h, nil
}

// linkNoReplace moves src to dst by a hard link and an unlink of src; an
// existing dst fails the link. A file system without hard links gets a
// rename after a check that dst does not exist, which leaves a window in
// which a concurrent writer of the same name can be replaced.
func linkNoReplace(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		return os.Remove(src)
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(dst); serr == nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: fs.ErrExist}
	} else if !errors.Is(serr, fs.ErrNotExist) {
		return serr
	}
	return os.Rename(src, dst)
}
