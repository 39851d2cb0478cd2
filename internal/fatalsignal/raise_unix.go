//go:build unix

package fatalsignal

import (
	"os"
	"syscall"
)

// raise sends s to the process itself; with its default action restored,
// the process dies of it, as it would have without the handler.
func raise(s syscall.Signal) { syscall.Kill(os.Getpid(), s) }
