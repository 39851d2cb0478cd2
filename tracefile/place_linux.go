package tracefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// moveNoReplace renames src to dst unless dst exists, atomically: with
// renameat2(RENAME_NOREPLACE) where the file system has it, else with a hard
// link (which fails on an existing name) and an unlink. An existing dst is
// an error satisfying errors.Is(err, fs.ErrExist).
func moveNoReplace(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: fs.ErrExist}
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		// NFS and older kernels: no RENAME_NOREPLACE.
		return linkNoReplace(src, dst)
	}
	return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
}
