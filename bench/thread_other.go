//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// errNoPinning is why the sections that pin a thread to a CPU are skipped
// here: sched_setaffinity and getcpu are Linux's.
var errNoPinning = fmt.Errorf("pinning a thread to a CPU needs Linux (this is %s)", runtime.GOOS)

// pinThread locks the calling goroutine to its thread and reports that it
// cannot pin it.
func pinThread(cpu int) error {
	runtime.LockOSThread()
	return errNoPinning
}

// currentCPU reports that the calling thread's CPU is not known here.
func currentCPU() (int, error) { return 0, errNoPinning }

// minorFaults returns 0: a thread's page faults are counted on Linux only.
func minorFaults() int64 { return 0 }

// firstCPU returns -1: without pinning, the one-core runs are left out.
func firstCPU() int { return -1 }
