//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// blocksOnDisk returns the bytes a file takes on disk: a run archive's
// reserved margins are holes, so its size overstates what it occupies.
func blocksOnDisk(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return 0
}

// peakRSS returns a finished process's peak resident set in MB.
func peakRSS(ps *os.ProcessState) (float64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return float64(ru.Maxrss) / 1024, true
}
