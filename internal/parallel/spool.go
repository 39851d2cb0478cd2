package parallel

import (
	"bufio"
	"errors"
	"io"
	"os"
)

// Spool holds the output of a task that runs ahead of the one being
// written: in memory up to its limit, then in a temporary file (in
// os.TempDir, TMPDIR on Unix), so that a worker far ahead costs disk, not
// memory. The file is removed by Close.
type Spool struct {
	limit int
	mem   []byte
	f     *os.File
	w     *bufio.Writer
	name  string // of the file, while it still has one
	err   error  // sticky
}

// NewSpool returns an empty spool that keeps up to limit bytes in memory.
func NewSpool(limit int) *Spool { return &Spool{limit: limit} }

// Write appends p.
func (s *Spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.f == nil {
		if len(s.mem)+len(p) <= s.limit {
			s.mem = append(s.mem, p...)
			return len(p), nil
		}
		if s.err = s.spill(); s.err != nil {
			return 0, s.err
		}
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// spill moves what the spool holds to a temporary file, which takes the
// rest.
func (s *Spool) spill() error {
	f, err := os.CreateTemp("", "hmbtrace-spool-*")
	if err != nil {
		return err
	}
	s.f, s.name = f, f.Name()
	// Unlinked at once where the system allows it, so that nothing is
	// left behind if the tool is killed.
	if os.Remove(s.name) == nil {
		s.name = ""
	}
	s.w = bufio.NewWriterSize(f, 64<<10)
	_, err = s.w.Write(s.mem)
	s.mem = nil
	return err
}

// Len is the number of bytes written.
func (s *Spool) Len() int64 {
	if s.f == nil {
		return int64(len(s.mem))
	}
	off, _ := s.f.Seek(0, io.SeekCurrent)
	return off + int64(s.w.Buffered())
}

// WriteTo writes what the spool holds to w.
func (s *Spool) WriteTo(w io.Writer) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.f == nil {
		n, err := w.Write(s.mem)
		return int64(n), err
	}
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.f)
}

// Close releases the memory and the temporary file.
func (s *Spool) Close() error {
	s.mem = nil
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		err = errors.Join(err, os.Remove(s.name))
	}
	s.f, s.w = nil, nil
	return err
}
