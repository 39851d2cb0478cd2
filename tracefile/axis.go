package tracefile

import "time"

// Axis puts the events of several files on one time axis, in nanoseconds
// from its origin. Each file has its own clock (its own start, rate, shift,
// even kind of clock). When every file carries clock-sync points to the
// same reference process (an MPI run: rank 0), the axis is the reference's
// clock, corrected for drift; otherwise the files are placed by their
// wall-clock start times, the one reference they always share.
type Axis struct {
	synced  bool
	offsets []int64 // per file: ns from the origin to the file's own zero
	// origin is, on synced files, the reference's time of the earliest
	// start (ns, 0 or less): a process may start before the reference, or
	// hold events from before its own measurement started.
	origin int64
	// End is the latest end of a measurement on the axis.
	End int64
}

// NewAxis makes the axis of files. With one file it is the file's own
// Nanos.
func NewAxis(files []*File) *Axis {
	a := &Axis{offsets: make([]int64, len(files)), synced: len(files) > 1}
	var ref uint64
	for i, f := range files {
		if len(f.Header.ClockSync) == 0 || (i > 0 && f.Header.ReferenceStart != ref) {
			a.synced = false
		}
		ref = f.Header.ReferenceStart
	}
	if !a.synced && len(files) > 1 {
		var origin time.Time
		for i, f := range files {
			if i == 0 || f.Header.StartWall.Before(origin) {
				origin = f.Header.StartWall
			}
		}
		for i, f := range files {
			a.offsets[i] = f.Header.StartWall.Sub(origin).Nanoseconds()
		}
	}
	if a.synced {
		for _, f := range files {
			a.origin = min(a.origin, f.GlobalNanos(f.Header.StartTicks>>f.Header.TimerShift))
		}
	}
	for i, f := range files {
		a.End = max(a.End, a.Nanos(i, f, f.Header.EndTicks>>f.Header.TimerShift))
	}
	return a
}

// Synced reports whether the files were aligned by clock-sync points
// rather than by their wall-clock starts.
func (a *Axis) Synced() bool { return a.synced }

// Nanos converts a reduced timestamp of file i (f) to the axis. It never
// goes backwards within a file.
func (a *Axis) Nanos(i int, f *File, reduced uint64) int64 {
	c := a.Clock(i, f)
	return c.Nanos(reduced)
}

// AxisClock is Axis.Nanos for one file, with the axis's terms and the
// file's clock-sync terms read once: a pass that converts many of a
// file's timestamps (a replay converts every synchronisation call's) takes
// it once. It is the one definition of the conversion: Axis.Nanos takes
// a clock for each timestamp.
type AxisClock struct {
	f       *File
	synced  bool // the axis is the reference clock
	hasSync bool // the file has clock-sync points (sc)
	sc      SyncClock
	origin  int64 // the axis's origin, synced
	offset  int64 // the file's zero on the axis, not synced
}

// Clock returns the conversion of file i (f) to the axis.
func (a *Axis) Clock(i int, f *File) AxisClock {
	c := AxisClock{f: f, synced: a.synced, origin: a.origin, offset: a.offsets[i]}
	if a.synced {
		c.sc, c.hasSync = f.SyncClock()
	}
	return c
}

// Synced reports whether the clock's file has sync points on a synced
// axis (an MPI run's ranks): Nanos is then SyncedNanos, which a pass
// converting every event can inline.
func (c *AxisClock) Synced() bool { return c.synced && c.hasSync }

// SyncedNanos is Nanos when Synced: the reference clock's time less the
// axis's origin, clipped at 0.
func (c *AxisClock) SyncedNanos(reduced uint64) int64 {
	return max(c.sc.Nanos(reduced)-c.origin, 0)
}

// Nanos is Axis.Nanos(i, f, reduced) for the clock's file.
func (c *AxisClock) Nanos(reduced uint64) int64 {
	if !c.synced {
		return c.offset + c.f.Nanos(reduced)
	}
	if c.hasSync {
		return c.SyncedNanos(reduced)
	}
	return max(c.f.Nanos(reduced)-c.origin, 0)
}
