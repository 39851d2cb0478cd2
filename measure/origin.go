package measure

import "time"

// The measurement's origin. A C probe that runs before the library's Go
// runtime is ready (a constructor of the program, or of a library loaded
// before it, on a busy machine) stages its event with the time it read, and
// the event reaches its location through EnterAt after Start. Such events
// are older than the measurement's start: the trace's origin moves back to
// the earliest of them, so that they are not all at time 0 and no call
// lasts longer than the run. The clock's calibration keeps the pair read at
// Start.

// noteEarly records t, a time before the measurement's start, if it is the
// earliest yet. It is called only for such times, so the probes pay a
// comparison and nothing else.
func (m *Measurement) noteEarly(t uint64) {
	for {
		e := m.early.Load()
		if e != 0 && e <= t || m.early.CompareAndSwap(e, t) {
			return
		}
	}
}

// origin returns the clock reading and the wall-clock time of the trace's
// zero: the start of the measurement, or the earliest event before it
// (tps converts the difference to wall-clock time).
func (m *Measurement) origin(tps float64) (uint64, time.Time) {
	e := m.early.Load()
	if e == 0 || e >= m.start.Ticks || tps <= 0 {
		return m.start.Ticks, m.wall
	}
	back := time.Duration(float64(m.start.Ticks-e) * 1e9 / tps)
	return e, m.wall.Add(-back)
}
