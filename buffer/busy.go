package buffer

import "sync/atomic"

// Busy reports whether the hierarchy's writer is inside a record, between
// the busy mark of Begin or Level.Room and the end of the record. The
// writer itself never sees it set at the start of a record: a probe that
// does has another goroutine inside a record of the same hierarchy at once,
// which is how measure detects a location shared between goroutines. One
// plain load on amd64 and arm64.
func (h *Hierarchy) Busy() bool { return atomic.LoadUint32(&h.busy) != 0 }

// writing reports whether the hierarchy's writer may be inside a record: a
// Go writer's busy mark, or a C writer's probe mark (cBusy). A reduction
// takes its bins only when it is not (Pool.reclaimLocked).
func (h *Hierarchy) writing() bool {
	return h.Busy() || (h.cBusy != nil && atomic.LoadInt32(h.cBusy) != 0)
}
