package convert

import (
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// OpenMP explicit tasks. The trace names a task by an id unique in its
// process; OTF2 by its thread team, the creating thread's number in that
// team and the creating thread's generation number for it, counted from 1
// in creation order. The team of a task is that of the implicit task its
// creator was in when it created it, found by the same pass over the
// events that derives the teams (planOpenMP). A switch to task 0, the
// thread's implicit task, names the implicit task open on the location:
// its team, the location's own number, generation 0 (no explicit task has
// it). A worker's implicit task may end before the team's last barrier,
// where it still runs the team's tasks (libomp's workers, see
// cshim/openmp/ompt.c): a switch back there names the location's last
// implicit task.

// taskOrigin is where a task was created: the location, the ordinal of
// the implicit task it was created in (-1: none) and the generation.
type taskOrigin struct {
	loc, ord int
	gen      uint32
}

// addTask notes the creation of task on location k inside its implicit
// task ord. A second creation of one id (a file written by something else
// than libhmbtrace) keeps the first.
func (p *ompPlan) addTask(task uint64, k, ord int) {
	if p.tasks == nil {
		p.tasks = map[uint64]taskOrigin{}
	}
	if p.created == nil {
		p.created = make([]uint32, len(p.teams))
	}
	p.created[k]++
	if _, ok := p.tasks[task]; !ok {
		p.tasks[task] = taskOrigin{loc: k, ord: ord, gen: p.created[k]}
	}
}

// currentTeam returns the team of the implicit task open on the location
// being exported, or else of its last implicit task with a team (see the
// top of the file); ok is false if it has none.
func (x *exporter) currentTeam() (teamOfLoc, bool) {
	for n := len(x.open) - 1; n >= 0; n-- {
		if o := &x.open[n]; o.hasTeam {
			return teamOfLoc{comm: o.team, rank: o.teamRank, ok: true}, true
		}
	}
	return x.lastTeam, x.lastTeam.ok
}

// implicitNamed reports whether a switch back to the implicit task of the
// location being exported can be named.
func (x *exporter) implicitNamed() bool {
	_, ok := x.currentTeam()
	return ok
}

// taskName returns the OTF2 name of task of file i, as seen from location
// k: ok is false when the export cannot tell its team.
func (x *exporter) taskName(i, k int, task uint64) (name taskRef, ok bool) {
	if task == 0 {
		t, ok := x.currentTeam()
		return taskRef{t.comm, t.rank, 0}, ok
	}
	plan := x.omp[i]
	if plan == nil {
		return taskRef{}, false
	}
	if org, found := plan.tasks[task]; found && org.ord >= 0 && org.ord < len(plan.teams[org.loc]) {
		if t := plan.teams[org.loc][org.ord]; t.ok {
			return taskRef{t.comm, t.rank, org.gen}, true
		}
	}
	// The buffer shed its creation (or its team): it is named after the
	// first location that runs it, in that location's team, with a
	// generation past those of the tasks the location created, so that no
	// other task has its name.
	if x.sh != nil {
		// The workers share the names given so far.
		x.sh.mu.Lock()
		defer x.sh.mu.Unlock()
	}
	if n, found := plan.unnamed[task]; found {
		return n, true
	}
	t, ok := x.currentTeam()
	if !ok {
		return taskRef{}, false
	}
	if x.sh != nil {
		// The name depends on which location runs the task first: the
		// first in the order of a sequential export.
		x.sh.order.WaitFor(x.n, func() bool { _, found := plan.unnamed[task]; return found })
		if n, found := plan.unnamed[task]; found {
			return n, true
		}
		defer x.sh.order.Notify()
	}
	if plan.unnamed == nil {
		plan.unnamed = map[uint64]taskRef{}
		plan.extra = make([]uint32, len(plan.teams))
	}
	if plan.created == nil {
		plan.created = make([]uint32, len(plan.teams))
	}
	plan.extra[k]++
	name = taskRef{t.comm, t.rank, plan.created[k] + plan.extra[k]}
	plan.unnamed[task] = name
	x.st.TasksWithoutCreation++
	return name, true
}

// taskRef is a task's name in OTF2.
type taskRef struct {
	team       otf2.CommRef
	creator    uint32
	generation uint32
}

// taskRun is what the export of one location knows of the tasks it runs:
// running, the task its trace runs now (0: the implicit task), and
// whether its switches and completions are folded into the location's
// implicit task, from the switch away from foldBase until the one back.
//
// OTF2 readers give each task a region stack of its own (Knüpfer et al.):
// a location's enters and leaves go to the stack of the task its last
// ThreadTaskSwitch named. The trace's stream is one well nested stack, so
// the export may leave a switch out only with the switch back: else a
// region entered in one task is left in another. A location whose
// implicit task has no name (the buffer shed the implicit task's enter,
// so that its team is not known) cannot be switched back to; the export
// then leaves out the tasks it runs there, switches and completion, and
// their regions nest in the location's stack as calls. A completion whose
// switch the buffer shed is left out too: OTF2 would complete a task
// other than the one running.
type taskRun struct {
	running  uint64
	fold     bool
	foldBase uint64
}

// task writes a task record of file i as its OTF2 event.
func (x *exporter) task(i int, w *otf2.EventWriter, e *tracefile.Event, ts uint64) error {
	if e.Task&laneTaskBit != 0 {
		return x.laneTask(i, w, e, ts)
	}
	r := &x.run
	switch e.Kind {
	case encode.KindTaskSwitch:
		from := r.running
		r.running = e.Task
		switch {
		case r.fold:
			if e.Task == r.foldBase {
				r.fold = false
			}
			x.st.TaskEventsLeftOut++
			return nil
		case e.Task != 0 && !x.implicitNamed():
			r.fold, r.foldBase = true, from
			x.st.TaskEventsLeftOut++
			return nil
		}
	case encode.KindTaskComplete:
		if r.fold || e.Task != r.running {
			x.st.TaskEventsLeftOut++
			return nil
		}
	}
	n, ok := x.taskName(i, x.loc, e.Task)
	if !ok {
		x.st.TaskEventsLeftOut++
		return nil
	}
	x.st.TaskEvents++
	switch e.Kind {
	case encode.KindTaskCreate:
		return w.ThreadTaskCreate(ts, n.team, n.creator, n.generation)
	case encode.KindTaskSwitch:
		return w.ThreadTaskSwitch(ts, n.team, n.creator, n.generation)
	}
	return w.ThreadTaskComplete(ts, n.team, n.creator, n.generation)
}
