//go:build !amd64 || !linux || race

package buffer

import "sync/atomic"

// Where stores may be reordered (or under the race detector, which must see
// the mark to order the record before the reclaim), the busy mark is an
// atomic store: sequentially consistent, so the reducer needs no fence.

func (h *Hierarchy) markBusy() { atomic.StoreUint32(&h.busy, 1) }
func (h *Hierarchy) markDone() { atomic.StoreUint32(&h.busy, 0) }

func fence() bool { return true }

func prepareFence() {}

// The C probes' mark is a relaxed store, which only a membarrier would order
// before their load of the epoch (mark_plain.go): no bin is reclaimed from a
// C writer here.
const cMarks = false
