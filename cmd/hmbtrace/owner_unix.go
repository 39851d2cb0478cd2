//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileOwner returns the uid that owns the file at path (not following a
// final symbolic link, which a planted file could be).
func fileOwner(path string) (int, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return 0, false
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}
