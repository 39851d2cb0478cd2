package buffer

import "sync/atomic"

// Busy reports whether the hierarchy's writer is inside a record, between
// the busy mark of Begin or Level.Room and the end of the record. The
// writer itself never sees it set at the start of a record: a probe that
// does has another goroutine inside a record of the same hierarchy at once,
// which is how measure detects a location shared between goroutines. One
// plain load on amd64 and arm64.
func (h *Hierarchy) Busy() bool { return atomic.LoadUint32(&h.busy) != 0 }
