package convert

import (
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The tasks of Go's lanes. A lane (package measure, lane.go) is a location
// that goroutines hold in turn; each holder after its first is a task on
// it, recorded as a switch to a task id with laneTaskBit set when it takes
// the lane and its completion when it gives the lane back, both on the
// lane. OTF2 names a task by a thread team, its creating thread's rank in
// the team and a generation number, so the export gives each process
// (file) with such records one thread team, "Rank r lanes": a
// communicator of the user paradigm over all the file's locations, a
// location's rank being its index in the file. A lane task is named
// (that team, its lane's rank, its number), the number being the task id
// without laneTaskBit: the measurement counts them from 1 across its
// lanes, so no two tasks of a file share a name, and a name leads back to
// the trace's id. A number past 2^32-1, which OTF2's generation cannot
// hold, leaves the record out (Stats.TaskEventsLeftOut).
//
// A location begins the team (ThreadTeamBegin) at its first lane task
// record and ends it (ThreadTeamEnd) at its last event; the lane's first
// holder, its implicit task, runs before that and has no records. The
// task that holds a lane when the measurement closes has no completion
// (the trace was written while its goroutine held the lane, or had it
// bound, idle): the export completes it at the lane's last event, after
// the regions it leaves there, as a reader that pairs a task's switch with
// its completion needs (Stats.LaneTasksCompletedAtEnd). The
// trace records no task's creation: a goroutine becomes a task when it
// takes a lane, so the export writes ThreadTaskCreate right before the
// task's switch, on the lane, and each lane task reads as OTF2's tasks do:
// created, switched to, completed, on one location. The team is defined at
// the first lane task record of its file (the order of a sequential
// export, parallel.go), so exports without lane tasks define nothing new.
// OpenMP's tasks keep their own teams (task.go): the shim counts their ids
// from 1, without laneTaskBit.

// laneTaskBit marks the task ids of lanes (measure's laneTaskBit).
const laneTaskBit = 1 << 63

// laneTeam is the thread team of one file's lanes, once defined.
type laneTeam struct {
	ref     otf2.CommRef
	defined bool
}

// laneTask writes a task record of a lane of file i: ThreadTeamBegin
// first if the location has not begun the file's lane team, then the
// task's events.
func (x *exporter) laneTask(i int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	num := e.Task &^ laneTaskBit
	if num == 0 || num > math.MaxUint32 || e.Kind == encode.KindTaskCreate {
		// No generation holds the number; or a creation record, which
		// lanes do not write (the switch writes the task's creation).
		x.st.TaskEventsLeftOut++
		return nil
	}
	if !x.inLaneTeam {
		team, err := x.laneTeam(i)
		if err != nil {
			return err
		}
		if err := w.ThreadTeamBegin(ts, team); err != nil {
			return err
		}
		x.inLaneTeam, x.laneTeamRef = true, team
	}
	team, rank, gen := x.laneTeamRef, uint32(x.loc), uint32(num)
	if e.Kind == encode.KindTaskSwitch {
		if x.laneTaskOpen != 0 {
			// The previous task's completion is not in the trace (a file
			// written by something else than measure): completed here.
			if err := x.completeLaneTask(w, ts); err != nil {
				return err
			}
		}
		x.st.LaneTaskEvents += 2
		if err := w.ThreadTaskCreate(ts, team, rank, gen); err != nil {
			return err
		}
		x.laneTaskOpen = gen
		return w.ThreadTaskSwitch(ts, team, rank, gen)
	}
	if gen == x.laneTaskOpen {
		x.laneTaskOpen = 0
	}
	x.st.LaneTaskEvents++
	return w.ThreadTaskComplete(ts, team, rank, gen)
}

// completeLaneTask completes at ts the lane task that runs on the location
// being exported, whose completion the trace lacks.
func (x *exporter) completeLaneTask(w *otf2.EventWriter, ts uint64) error {
	gen := x.laneTaskOpen
	x.laneTaskOpen = 0
	x.st.LaneTaskEvents++
	x.st.LaneTasksCompletedAtEnd++
	return w.ThreadTaskComplete(ts, x.laneTeamRef, uint32(x.loc), gen)
}

// laneTeam returns the lane team of file i, defined at its first use.
func (x *exporter) laneTeam(i int) (otf2.CommRef, error) {
	if t := x.laneOf(i); t.defined {
		return t.ref, nil
	}
	if x.sh != nil {
		return x.sh.laneTeam(x, i)
	}
	return x.defineLaneTeam(i)
}

// defineLaneTeam defines the lane team of file i: a group of the user
// paradigm's COMM_LOCATIONS indices of the file's locations, in their
// order in the file.
func (x *exporter) defineLaneTeam(i int) (otf2.CommRef, error) {
	if err := x.userLocations(); err != nil {
		return 0, err
	}
	ranks := make([]uint64, len(x.writers[i]))
	for k, w := range x.writers[i] {
		ranks[k] = x.userIndex[w.Ref()]
	}
	g, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmUser, Members: ranks})
	if err != nil {
		return 0, err
	}
	c, err := x.a.Comm(fmt.Sprintf("Rank %d lanes", x.files[i].Header.Rank), g, otf2.NoComm)
	if err != nil {
		return 0, err
	}
	x.lanes[i] = laneTeam{ref: c, defined: true}
	x.st.LaneTeams++
	return c, nil
}

// laneTeam is exporter.laneTeam for a worker's exporter lx.
func (sh *shared) laneTeam(lx *exporter, i int) (otf2.CommRef, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	m := sh.master
	sh.order.WaitFor(lx.n, func() bool { return m.lanes[i].defined })
	if !m.lanes[i].defined {
		if _, err := m.defineLaneTeam(i); err != nil {
			return 0, err
		}
		sh.order.Notify()
	}
	if i == lx.own {
		lx.ownLane = m.lanes[i]
	}
	return m.lanes[i].ref, nil
}

// laneOf returns the lane team of file i as x knows it: on a worker's
// exporter, only its own file's.
func (x *exporter) laneOf(i int) laneTeam {
	if x.sh != nil {
		if i == x.own {
			return x.ownLane
		}
		return laneTeam{}
	}
	return x.lanes[i]
}
