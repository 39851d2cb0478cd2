//go:build !amd64 || !linux || race

package measure

import "sync/atomic"

// Where stores may be reordered (or under the race detector, which must see
// the mark to order the probe before Close's reads), the mark of a probe's
// general path is an atomic store.

func (l *Location) markProbe() { atomic.StoreUint32(&l.inProbe, 1) }
func (l *Location) probeDone() { atomic.StoreUint32(&l.inProbe, 0) }
