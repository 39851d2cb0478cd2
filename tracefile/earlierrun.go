package tracefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A new run never replaces the files of an earlier one. Score-P moves an
// existing experiment directory aside, renamed with a time stamp; here the
// files of one program share the output directory, so the earlier run's
// files of the same name (its rank files, pid variants and run archives)
// move into a directory of their own, <dir>/<name>.run-<stamp>, stamped
// with the earlier run's start. The newest run keeps the plain names that
// scripts and the tools' defaults read, and the earlier one stays readable
// as a directory of traces. The ranks of one run never collide: each
// writes its own name (WriteNew keeps a concurrent process's trace), and
// only files that ended before this run began count as earlier.

// EarlierRunPrefix separates a trace name from the stamp of the directory
// an earlier run's files are moved to.
const EarlierRunPrefix = ".run-"

// MovedRun says where MoveEarlierRun put an earlier run's files.
type MovedRun struct {
	Dir   string   // the directory they are in now
	Files []string // their names, as they were in the output directory
}

// MoveEarlierRun moves the files of name's earlier runs out of dir: the
// trace files <name>.<rank>.hmb (and the .pid variants WriteNew makes) and
// the run archives <name>.hmbrun and <name>.<group>.hmbrun whose writing
// ended before start, into a new directory <dir>/<name>.run-<stamp>, the
// stamp being the earliest start of the files moved (local time,
// YYYYMMDD-HHMMSS, with -2, -3, ... when taken). A file modified at or
// after start belongs to a process of this run or of a concurrent one and
// stays. It returns nil when there was nothing to move. A dir that does
// not exist holds nothing.
func MoveEarlierRun(dir, name string, start time.Time) (*MovedRun, error) {
	if !validRunName(name) {
		return nil, fmt.Errorf("moving earlier runs: %q is not a trace name", name)
	}
	// Under the directory's lock, as WriteNew places traces: processes
	// that all take themselves for rank 0 move the files once.
	defer lockDir(dir)()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []string
	var first time.Time
	for _, e := range entries {
		if !e.Type().IsRegular() || !earlierRunFile(e.Name(), name) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(start) {
			continue // gone meanwhile, or written by a process of this run or a concurrent one
		}
		began := fi.ModTime()
		if strings.HasSuffix(e.Name(), ".hmb") {
			if h, err := ReadHeader(path); err == nil {
				if end, ok := h.EndWall(); ok && !end.Before(start) {
					continue // its measurement overlapped this one
				}
				if !h.StartWall.IsZero() {
					began = h.StartWall
				}
			}
		}
		if first.IsZero() || began.Before(first) {
			first = began
		}
		files = append(files, e.Name())
	}
	if len(files) == 0 {
		return nil, nil
	}
	to, err := newRunDir(dir, name, first)
	if err != nil {
		return nil, err
	}
	moved := &MovedRun{Dir: to}
	for _, f := range files {
		err := os.Rename(filepath.Join(dir, f), filepath.Join(to, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // moved by another process that judged it as this one did
		}
		if err != nil {
			return moved, fmt.Errorf("moving %s to %s: %v", f, to, err)
		}
		moved.Files = append(moved.Files, f)
	}
	if len(moved.Files) == 0 {
		os.Remove(to)
		return nil, nil
	}
	return moved, nil
}

// newRunDir creates the directory for the earlier run that began at t.
func newRunDir(dir, name string, t time.Time) (string, error) {
	stamp := t.Local().Format("20060102-150405")
	for i := 1; i <= maxNames; i++ {
		to := filepath.Join(dir, name+EarlierRunPrefix+stamp)
		if i > 1 {
			to += fmt.Sprintf("-%d", i)
		}
		err := os.Mkdir(to, 0o755)
		if err == nil {
			return to, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: %d directories of earlier runs stamped %s already", dir, maxNames, stamp)
}

// earlierRunFile reports whether file, a name in the output directory, is
// one of the files a run named name writes: <name>.<rank>.hmb,
// <name>.<rank>.pid<PID>[-<i>].hmb, <name>.hmbrun, <name>.<group>.hmbrun.
// The digits are what tell them from the files of a name with a dot in it
// (run "a" and run "a.b" share a directory without taking each other's).
func earlierRunFile(file, name string) bool {
	rest, ok := strings.CutPrefix(file, name+".")
	if !ok {
		return false
	}
	if rest == ArchiveExt[1:] {
		return true
	}
	if g, ok := strings.CutSuffix(rest, ArchiveExt); ok {
		return allDigits(g)
	}
	rest, ok = strings.CutSuffix(rest, ".hmb")
	if !ok {
		return false
	}
	rank, pid, hasPid := strings.Cut(rest, ".pid")
	if !allDigits(rank) {
		return false
	}
	if !hasPid {
		return true
	}
	p, i, hasI := strings.Cut(pid, "-")
	return allDigits(p) && (!hasI || allDigits(i))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
