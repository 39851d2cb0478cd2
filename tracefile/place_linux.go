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

// lockDir takes an exclusive flock on directory dir, so that the processes
// placing traces there judge and replace a stale file one at a time; it
// returns the unlock. Without it, a process that judged a stale file and
// moved it away could move away instead the trace another process had just
// put in its place, and that process would name a path its trace no longer
// has. Where the file system refuses flock (Lustre without -o flock, some
// NFS mounts) it returns a no-op: placing stays safe, only that report may
// then be wrong in a three-process race (Placement.Displaced).
func lockDir(dir string) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing releases the lock
}
