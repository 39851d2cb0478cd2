//go:build !linux

package survive

import (
	"errors"
	"fmt"
	"runtime"
)

// Supported reports whether this system has the surviving mapping. It
// relies on a tmpfs, fallocate and /proc, which only Linux has together.
const Supported = false

// errUnsupported is what Create returns off Linux.
var errUnsupported = fmt.Errorf("survive: the surviving mapping needs Linux (this is %s)", runtime.GOOS)

// Create returns an error: the surviving mapping needs Linux.
func Create(dir, name string, rank int, l Layout) (*Mapping, error) {
	return nil, errUnsupported
}

// reserveLocked reports false: no Mapping exists off Linux.
func (m *Mapping) reserveLocked(off uint64, done *uint64, need, cap uint64) bool { return false }

// Unmap does nothing: no Mapping exists off Linux.
func (m *Mapping) Unmap() error { return nil }

// processZombie reports false: a process's state is read from Linux's
// /proc, and ProcessStart already says no process here made the mapping.
func processZombie(pid int) bool { return false }

// ProcessStart returns an error: a process's start time is read from
// Linux's /proc. A mapping read here came from another machine, so its
// process is not one of this system's anyway.
func ProcessStart(pid int) (uint64, error) {
	return 0, errors.New("survive: a process's start time needs Linux's /proc (this is " + runtime.GOOS + ")")
}
