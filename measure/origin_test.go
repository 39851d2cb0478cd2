package measure

import (
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestOriginBeforeStart checks that events recorded with times before the
// measurement's start (a C constructor's probes staged until Go was ready)
// move the trace's origin back to the earliest of them: they keep their
// distances, no call lasts longer than the run, and the wall-clock start
// moves back with the origin.
func TestOriginBeforeStart(t *testing.T) {
	m, err := Start(Config{Output: t.TempDir(), Name: "early", Clock: "monotonic", TimerShift: NoTimerShift})
	if err != nil {
		t.Fatal(err)
	}
	start := m.StartTicks()
	const before = 300_000_000 // ns before the start: the constructor's call
	setup, main, work := m.Region("setup"), m.Region("main"), m.Region("work")
	l := m.Location("thread 1")
	l.EnterAt(setup, start-before)
	l.LeaveAt(setup, start-before+100_000_000)
	l.EnterAt(main, start-before+100_000_010)
	now := m.Now()
	l.EnterAt(work, now)
	l.LeaveAt(work, now+1000)
	l.LeaveAt(main, now+2000)
	wall := m.wall
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header.StartTicks != start-before {
		t.Errorf("origin %d; want the earliest event, %d", f.Header.StartTicks, start-before)
	}
	if d := wall.Sub(f.Header.StartWall); d != before*time.Nanosecond {
		t.Errorf("wall-clock start moved back by %v; want %v", d, before*time.Nanosecond)
	}
	var e tracefile.Event
	var times []int64
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		times = append(times, f.Nanos(e.Time))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(times) != 6 || times[0] != 0 || times[1] != 100_000_000 || times[2] != 100_000_010 || times[3] != int64(now-start+before) {
		t.Errorf("event times %v; want 0, 1e8, 1e8+10, then the events after the start", times)
	}
	for _, p := range f.Locations[0].Profile {
		if incl := f.TicksToNanos(p.Inclusive); incl > f.Duration() {
			t.Errorf("%s: inclusive %d ns over the run's %d", f.RegionName(p.Region), incl, f.Duration())
		}
	}
}
