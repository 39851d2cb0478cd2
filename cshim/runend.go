package cshim

import (
	"errors"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The collective end of an MPI run, as libhmbtrace-mpi's MPI_Finalize
// wrapper drives it (cshim/mpi/hmbtrace_mpi.c): it asks the configuration,
// each rank's slot capacity, the group leader's creation of the archive
// file, and tells each rank its slot.

// RunEnd returns whether the ranks write a run archive (HMB_OUTPUT_LAYOUT),
// how many ranks share one file (HMB_AGGREGATE) and how long each step of
// the collective end waits for the others (HMB_COLLECTIVE_TIMEOUT). No
// archive when the measurement does not record.
func (rt *Runtime) RunEnd() (archive bool, aggregate int, timeout time.Duration) {
	m := rt.Measurement()
	if m == nil {
		return false, 1, 0
	}
	return mi.RunEnd(m)
}

// SyncedNanos converts ticks of the clock to ns since rank 0's start on
// its clock, as the rank's file will have them (HMB_COLLECTIVE_TIMING's
// arrival at MPI_Finalize); ok is false before a clock sync.
func (rt *Runtime) SyncedNanos(ticks uint64) (ns int64, ok bool) {
	m := rt.Measurement()
	if m == nil {
		return 0, false
	}
	return mi.SyncedNanos(m, ticks)
}

// SlotCapacity returns the bytes this rank's slot of the archive needs in a
// run of world ranks: its trace's size now, bounded from above, with the
// margin for what runs after MPI_Finalize (tracefile.SlotCapacity).
func (rt *Runtime) SlotCapacity(world int) int64 {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return 0
	}
	return tracefile.SlotCapacity(mi.TraceSize(m, world))
}

// CreateArchive creates group's file of the run archive (one of groups, in
// a run of world ranks) for the ranks given, each asking for its capacity,
// and returns their slot offsets in the same order.
func (rt *Runtime) CreateArchive(group, groups, world int, ranks []int, capacity []int64) ([]int64, error) {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return nil, errors.New("hmbtrace: the run archive: the measurement does not record")
	}
	_, off, err := mi.CreateArchive(m, group, groups, world, ranks, capacity)
	return off, err
}

// SetArchiveSlot makes Close write this rank's trace into its slot at off,
// of capacity bytes, of group's archive file.
func (rt *Runtime) SetArchiveSlot(group, groups, world int, off, capacity int64) {
	if m := rt.Measurement(); m != nil {
		mi.SetArchiveSlot(m, group, groups, world, off, capacity)
	}
}
