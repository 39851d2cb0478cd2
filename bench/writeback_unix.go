//go:build unix

package main

import "syscall"

// writeBack asks the kernel to write every dirty page back, so that one
// subject's trace files do not slow the next subject's run.
func writeBack() { syscall.Sync() }
