// Package tempfile makes the files that become trace files and exports once
// they are complete. A file is created with mode 0666 less the user's umask,
// as any file the user's programs create, never made wider afterwards (traces
// hold the command line, host and region names). On Linux it has no name
// while it is written (O_TMPFILE), so a process killed meanwhile leaves no
// half-written file behind; it gets a hidden name next to its final one only
// when complete, and the caller renames it from there.
package tempfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written in a directory.
type File struct {
	*os.File
	dir, base string
	name      string // its hidden name; "" while it has none
}

// Create makes a file in dir whose hidden name, once it has one, starts
// with "."+base+".tmp".
func Create(dir, base string) (*File, error) {
	f := &File{dir: dir, base: base}
	if osf, err := openUnnamed(dir); err == nil {
		f.File = osf
		return f, nil
	}
	for i := 0; ; i++ {
		name := f.hiddenName()
		osf, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return nil, err
		}
		f.File, f.name = osf, name
		return f, nil
	}
}

// hiddenName returns a fresh hidden name in the file's directory.
func (f *File) hiddenName() string {
	var b [6]byte
	rand.Read(b[:])
	return filepath.Join(f.dir, "."+f.base+".tmp"+hex.EncodeToString(b[:]))
}

// Finish closes the complete file and returns its hidden name, which the
// caller renames to the final one (or removes).
func (f *File) Finish() (string, error) {
	if f.name == "" {
		for i := 0; ; i++ {
			name := f.hiddenName()
			err := linkUnnamed(f.File, name)
			if errors.Is(err, fs.ErrExist) && i < 100 {
				continue
			}
			if err != nil {
				f.File.Close()
				return "", err
			}
			f.name = name
			break
		}
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.name)
		return "", err
	}
	return f.name, nil
}

// Discard closes the file and removes whatever name it has.
func (f *File) Discard() {
	f.File.Close()
	if f.name != "" {
		os.Remove(f.name)
	}
}
