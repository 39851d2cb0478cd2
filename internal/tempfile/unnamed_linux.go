package tempfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed file in dir. Filesystems without O_TMPFILE
// (some network and FUSE ones) fail, and Create falls back to a name.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// linkUnnamed gives the unnamed file f the name path, through /proc (which
// needs no privilege, unlike AT_EMPTY_PATH).
func linkUnnamed(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name() + " (unnamed)", New: path, Err: err}
	}
	return nil
}
