//go:build !linux

package fatalsignal

import (
	"os/signal"
	"syscall"
)

// Ignored reports whether the process ignores sig now, as the Go runtime
// sees it: what the program ignored with signal.Ignore, and on Unix a
// SIGHUP or SIGINT ignored when the process started (a background job's).
// That is all a Go program can have set; the C shim, which must ask the
// kernel, is Linux's only.
func Ignored(sig syscall.Signal) bool { return signal.Ignored(sig) }
