package report

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Tasks on the timeline. A Go program records its goroutines on lanes
// (package measure, lane.go): a lane is a location that goroutines hold in
// turn, each holder after the first a task on it, written as a switch to
// the task's id when it takes the lane and the task's completion when it
// gives it back; OpenMP's explicit tasks use the same records. 25,600
// goroutine tasks on 4 lanes are 4 rows, each showing where its tasks
// began and ended: the page gets, per location, its tasks' spans (a strip
// on its first row, a tick at each start, the task named on hover) up to a
// budget shared by the locations drawn, and their number.

// laneTaskBit marks the task ids of Go's lanes (measure's laneTaskBit);
// OpenMP's are counted from 1 without it.
const laneTaskBit = 1 << 63

// taskBudget bounds the task spans the page carries over all locations;
// each location drawn gets an equal share, at least minTasksPerLocation.
const (
	taskBudget          = 1 << 16
	minTasksPerLocation = 1 << 10
)

// tasksPerLocation is how many task spans each of n locations keeps.
func tasksPerLocation(n int) int {
	return max(taskBudget/max(n, 1), minTasksPerLocation)
}

// tlTasks is what the page gets of a location's tasks: how many ran, and
// the spans of the first ones in time order as triples (start from the
// previous span's start, duration, task number), ns on the timeline's
// axis; a number is the task id without laneTaskBit.
type tlTasks struct {
	Count int `json:"count"`
	// Lane says the tasks are goroutines that held a Go lane, else they
	// are OpenMP's.
	Lane    bool    `json:"lane,omitempty"`
	Spans   []int64 `json:"spans,omitempty"`
	Omitted int     `json:"omitted,omitempty"` // spans not carried, past the budget
}

// taskTrack follows the task running on one location as its events
// stream by: a span from a switch to a task until the next switch, the
// task's completion or its suspension.
type taskTrack struct {
	countOnly bool // a group's member: only the number is kept
	limit     int  // spans kept at most

	running   bool
	task      uint64
	start     int64
	count     int // tasks completed (or open at the end)
	lane      bool
	spans     []int64
	prevStart int64
	omitted   int
}

// event takes a task record at t ns on the axis.
func (tt *taskTrack) event(e *tracefile.Event, t int64) {
	switch e.Kind {
	case encode.KindTaskSwitch:
		tt.stop(t)
		if e.Task != 0 {
			tt.running, tt.task, tt.start = true, e.Task, t
			tt.lane = tt.lane || e.Task&laneTaskBit != 0
		}
	case encode.KindTaskComplete:
		tt.stop(t)
		tt.count++
	case encode.KindTaskSuspend:
		tt.stop(t)
	}
}

// stop ends the running task's span at t.
func (tt *taskTrack) stop(t int64) {
	if !tt.running {
		return
	}
	tt.running = false
	if tt.countOnly {
		return
	}
	if len(tt.spans)/3 >= tt.limit {
		tt.omitted++
		return
	}
	tt.spans = append(tt.spans, tt.start-tt.prevStart, max(t-tt.start, 0), int64(tt.task&^laneTaskBit))
	tt.prevStart = tt.start
}

// finish ends a task still running at the location's end: the trace was
// written while its goroutine held the lane.
func (tt *taskTrack) finish(end int64) {
	if tt.running {
		tt.stop(end)
		tt.count++
	}
}

// total is how many tasks ran.
func (tt *taskTrack) total() int { return tt.count }

// page returns the page's data of the tasks, nil without any.
func (tt *taskTrack) page() *tlTasks {
	if tt.count == 0 && len(tt.spans) == 0 {
		return nil
	}
	return &tlTasks{Count: tt.count, Lane: tt.lane, Spans: tt.spans, Omitted: tt.omitted}
}

// notes says what ran on a location as tasks.
func (t *tlTasks) notes() []string {
	what := "OpenMP tasks"
	if t.Lane {
		what = "tasks: goroutines that held this lane in turn"
	}
	notes := []string{fmt.Sprintf("%s %s", units.Count(uint64(t.Count)), what)}
	if t.Omitted > 0 {
		notes = append(notes, fmt.Sprintf("%s task spans not drawn: past the page's budget of %s on this location", units.Count(uint64(t.Omitted)), units.Count(uint64(len(t.Spans)/3))))
	}
	return notes
}
