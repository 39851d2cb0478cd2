package convert

import "github.com/hmbtrace/hmbtrace/tracefile"

// timeline puts the events of several files on one time axis, the
// tracefile.Axis: the reference rank's clock when the files carry MPI
// clock-sync points, else their wall-clock starts. Shifting each file's
// ticks with OTF2 ClockOffset records could not align them: the files'
// clock rates differ.
type timeline struct {
	axis *tracefile.Axis
	end  uint64 // latest end of a measurement, ns on the axis
}

func newTimeline(files []*tracefile.File) timeline {
	a := tracefile.NewAxis(files)
	return timeline{axis: a, end: uint64(max(a.End, 0))}
}

// at converts a reduced timestamp of file i; a location's times stay in
// order.
func (tl *timeline) at(i int, f *tracefile.File, reduced uint64) uint64 {
	return uint64(tl.axis.Nanos(i, f, reduced))
}
