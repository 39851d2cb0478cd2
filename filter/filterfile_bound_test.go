//go:build unix

package filter

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParseFileRejectsDevicesAndHugeFiles checks that a path that is not a
// filter file is refused by name, not read without end (/dev/zero).
func TestParseFileRejectsDevicesAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.filter")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file: the size without the disk.
	if err := os.Truncate(big, MaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{dir, "not a regular file"},
		{big, "more than a filter file may have"},
	} {
		_, err := ParseFile(c.path)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseFile(%s) = %v, want an error naming it and saying %q", c.path, err, c.want)
		}
	}
}

// TestParseFileReadsAPipe checks that a pipe (a shell's <(...)) is read,
// and that one that never ends is cut at the bound.
func TestParseFileReadsAPipe(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		content string
		ok      bool
	}{
		{"small", "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE foo\nSCOREP_REGION_NAMES_END\n", true},
		{"endless", strings.Repeat("# comment line\n", MaxFileSize/15+2), false},
	} {
		fifo := filepath.Join(dir, c.name)
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			w.WriteString(c.content) // fails with EPIPE once the reader stops
			w.Close()
		}()
		f, err := ParseFile(fifo)
		if c.ok && (err != nil || !f.Excluded("foo", "")) {
			t.Errorf("%s: ParseFile = %v, %v; want a filter excluding foo", c.name, f, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "more than")) {
			t.Errorf("%s: ParseFile = %v, want an error for a pipe past the bound", c.name, err)
		}
	}
}

// TestParseFilePipeWithoutWriter: a pipe nobody opens for writing is an
// error naming it after pipeWait, not a program stopped at Start for ever.
func TestParseFilePipeWithoutWriter(t *testing.T) {
	defer func(d time.Duration) { pipeWait = d }(pipeWait)
	pipeWait = 50 * time.Millisecond
	fifo := filepath.Join(t.TempDir(), "nobody")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ParseFile(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "nobody writes to") {
			t.Errorf("ParseFile of a pipe without writer: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ParseFile of a pipe without writer did not return in a minute")
	}
}
