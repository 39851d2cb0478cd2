package fatalsignal

import (
	"os"
	"syscall"
)

// statusControlCExit is the exit status Windows gives a console process
// that Ctrl-C, Ctrl-Break or closing its console ended (STATUS_CONTROL_C_EXIT).
var statusControlCExit uint32 = 0xC000013A

// raise ends the process as the console event would have: Windows has no
// signal to send again, so it exits with the status the event gives.
func raise(s syscall.Signal) { os.Exit(int(statusControlCExit)) }
