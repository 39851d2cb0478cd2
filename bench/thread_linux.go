package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Where the benchmark's threads run: pinned to one CPU, so that the two
// sides of a comparison share its caches, and their page faults. The
// calls are Linux's (sched_setaffinity, getcpu, RUSAGE_THREAD); elsewhere
// the sections that need them are skipped with the reason
// (thread_other.go).

// pinThread locks the calling goroutine to its thread and the thread to
// cpu. The caller returns with the thread still locked, so that the
// runtime ends the pinned thread instead of reusing it.
func pinThread(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("to CPU %d: %v", cpu, err)
	}
	return nil
}

// currentCPU returns the CPU the calling thread runs on.
func currentCPU() (int, error) {
	var cpu, node uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), uintptr(unsafe.Pointer(&node)), 0); errno != 0 {
		return 0, fmt.Errorf("getcpu: %v", errno)
	}
	return int(cpu), nil
}

// minorFaults returns the calling thread's minor page faults so far.
func minorFaults() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return int64(ru.Minflt) // int32 on 32-bit platforms
}

// firstCPU returns the first CPU the benchmark may run on, or -1 when
// taskset or the affinity mask is not at hand (the one-core runs are left out).
func firstCPU() int {
	if _, err := exec.LookPath("taskset"); err != nil {
		return -1
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return -1
	}
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			return c
		}
	}
	return -1
}
