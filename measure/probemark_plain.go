//go:build amd64 && linux && !race

package measure

// The mark of a probe's general path is a plain store here, as the buffer's
// busy mark is (buffer/mark_plain.go): stores are seen in program order on
// amd64, and the one reordering the hardware may do, the mark's store after
// the probe's load of the epoch, Close undoes with the membarrier of
// Pool.Freeze before it reads the mark. The general paths stay free of
// fences.

func (l *Location) markProbe() { l.inProbe = 1 }
func (l *Location) probeDone() { l.inProbe = 0 }
