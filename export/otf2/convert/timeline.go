package convert

import (
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// timeline puts the events of several files on one time axis: nanoseconds
// since the earliest file's start. Each file has its own clock (its own
// StartTicks, TicksPerSecond and TimerShift, even its own kind of clock), so
// shifting ticks with OTF2 ClockOffset records could not align them: the
// rates differ. The wall-clock start of each file is the one reference the
// files share; when the files carry MPI clock offsets, they belong in
// offsets.
type timeline struct {
	origin  time.Time
	offsets []int64 // per file: ns from origin to the file's start
	end     uint64  // latest end of a measurement, ns since origin
}

func newTimeline(files []*tracefile.File) timeline {
	tl := timeline{offsets: make([]int64, len(files))}
	for i, f := range files {
		if i == 0 || f.Header.StartWall.Before(tl.origin) {
			tl.origin = f.Header.StartWall
		}
	}
	for i, f := range files {
		tl.offsets[i] = f.Header.StartWall.Sub(tl.origin).Nanoseconds()
		tl.end = max(tl.end, uint64(tl.offsets[i]+f.Duration()))
	}
	return tl
}

// at converts a reduced timestamp of file i. Nanos is monotonic and the
// offset constant, so a location's times stay in order.
func (tl *timeline) at(i int, f *tracefile.File, reduced uint64) uint64 {
	return uint64(tl.offsets[i] + f.Nanos(reduced))
}
