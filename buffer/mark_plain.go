//go:build amd64 && linux && !race

package buffer

import (
	"sync"

	"golang.org/x/sys/unix"
)

// The writer's busy mark is a plain store here, as the C probes' in_direct
// is: on amd64 stores are seen in program order, so a reducer that loads 0
// sees the record before it complete, and the one order the hardware may
// change, the mark's store after the epoch's load, the reducer restores with
// a membarrier before it loads the mark (reclaimLocked). That keeps the
// probes' path free of fences.

func (h *Hierarchy) markBusy() { h.busy = 1 }
func (h *Hierarchy) markDone() { h.busy = 0 }

// The commands of membarrier(2), from linux/membarrier.h.
const (
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

var membarrierReady = sync.OnceValue(func() bool {
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierRegisterPrivateExpedited, 0, 0)
	return errno == 0
})

// prepareFence registers for the membarrier in the background. In a
// process that has threads (every Go program) the registration waits out
// an RCU grace period, 10-15 ms here, and Freeze made Close and Exit wait
// it, inside the regions they end.
func prepareFence() { go membarrierReady() }

// fence makes every thread of the process that runs now execute a full
// memory barrier: a writer's busy mark stored before its load of the epoch
// is visible once it returns. False if the kernel refuses it (before Linux
// 4.14, or a seccomp filter): then no bin is reclaimed.
func fence() bool {
	if !membarrierReady() {
		return false
	}
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierPrivateExpedited, 0, 0)
	return errno == 0
}

// The C probes' mark (Hierarchy.cBusy) is a plain store followed by a
// compiler barrier before their load of the epoch: the same order a
// membarrier (fence) completes, so C writers' bins are reclaimed here.
const cMarks = true
