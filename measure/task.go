package measure

import (
	"sync"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Tasks (OpenMP explicit tasks, or any model whose tasks can be suspended
// and resumed): a task's life is records on the locations that create and
// run it, tied together by the task's id, which the caller makes unique in
// the process (the C shim numbers them from one counter). The OpenMP
// adapters record them through the C ABI, whose replay (recordAt,
// tiedTaskAt) brings them here; Go's own tasks are a lane's holders, which
// the lanes record themselves (lane.go).
//
//   - KindTaskCreate, on the creating location, inside the region that
//     creates it ("!$omp create task").
//   - KindTaskSwitch (taskSwitch), on the location that runs it, each time
//     it starts or resumes there; a switch to task 0 resumes the location's
//     implicit task (the thread's own code in its innermost team).
//   - KindTaskComplete (taskComplete), on the location that ran its last
//     part.
//   - KindTaskSuspend (taskSuspend), where it stops with regions open and
//     resumes later from elsewhere than the scheduling point it stopped at.
//
// A task's own regions (its "!$omp task" region and what it calls) are
// ordinary enters and leaves on the location that runs it, nested above the
// scheduling point where it runs (the barrier, taskwait or creation that
// the runtime ran it from). A task suspended at a taskwait while others run
// inside it resumes there when they are done: its regions stay open and the
// stream stays nested. A task whose code returns to the scheduler with
// regions open (an untied task's part in libomp) is suspended: the location
// leaves the regions the task opened since its switch, innermost first, and
// the location that resumes it enters them again, outermost first, right
// after its switch to it. So each location's stream stays well nested for
// the buffer's depth levels and for the reader, and OTF2's per-task region
// stacks (Knüpfer et al.) are the pieces of it between switches. The
// records are point events of the OpenMP paradigm class at the depth of
// the region they occur in, kept as long as the constructs around them.

// tiedTaskAt records task record k (KindTaskCreate, KindTaskSwitch or
// KindTaskComplete) at time t for a tied task: one that is never
// suspended (KindTaskSuspend), as OpenMP's tied tasks are not, so its
// switches need none of the bookkeeping that resumes a suspended task's
// regions. The C probes write such records in place on their direct path;
// this is their replay, and the same record. Any other kind is a usage
// error.
func (l *Location) tiedTaskAt(k encode.Kind, task uint64, t uint64) {
	if l == nil || !ProbesCompiledIn {
		return
	}
	switch k {
	case encode.KindTaskCreate, encode.KindTaskSwitch, encode.KindTaskComplete:
		l.taskRecord(k, task, t, false)
	default:
		l.usage.UnknownRegion++
	}
}

// suspendedTasks holds the regions of the tasks suspended with regions
// open, by task, outermost first, until a location resumes them.
type suspendedTasks struct {
	mu      sync.Mutex
	regions map[uint64][]Region
}

// taskSwitch records at time t (the clock's if read) that the location now
// runs task (0: its implicit task), which starts or resumes here: the
// regions it had open when it was suspended (taskSuspend) are entered
// again.
func (l *Location) taskSwitch(task uint64, t uint64, read bool) {
	if read {
		t = clock.Now()
	}
	l.taskRecord(encode.KindTaskSwitch, task, t, false)
	if task == 0 {
		return
	}
	if l.taskBase == nil {
		l.taskBase = map[uint64]int{}
	}
	if _, running := l.taskBase[task]; running {
		return // resumed where it waited for a task run inside it: its regions are open
	}
	l.taskBase[task] = l.depth
	s := &l.m.suspended
	s.mu.Lock()
	regions, ok := s.regions[task]
	if ok {
		delete(s.regions, task)
	}
	s.mu.Unlock()
	for _, r := range regions {
		l.enter(r, t, false)
	}
}

// taskComplete records that task completed on the location.
func (l *Location) taskComplete(task uint64, t uint64, read bool) {
	if read {
		t = clock.Now()
	}
	delete(l.taskBase, task)
	l.taskRecord(encode.KindTaskComplete, task, t, false)
}

// taskSuspend records that task, which the location runs, stops here with
// the regions it entered since the location's last switch to it still
// open, and resumes later from elsewhere (another location, or another
// scheduling point): the location leaves those regions now, and the
// switch that resumes the task enters them again.
func (l *Location) taskSuspend(task uint64, t uint64, read bool) {
	if read {
		t = clock.Now()
	}
	base, ok := l.taskBase[task]
	delete(l.taskBase, task)
	if ok && base < l.depth {
		regions := make([]Region, 0, l.depth-base)
		for d := base + 1; d <= l.depth; d++ {
			regions = append(regions, Region(l.stack[d].region))
		}
		for d := l.depth; d > base; d-- {
			l.leave(Region(l.stack[d].region), t, false)
		}
		s := &l.m.suspended
		s.mu.Lock()
		if s.regions == nil {
			s.regions = map[uint64][]Region{}
		}
		s.regions[task] = regions
		s.mu.Unlock()
	}
	l.taskRecord(encode.KindTaskSuspend, task, t, false)
}

// taskRecord records a task record of kind k at the current depth, in the
// paradigm class, as mpiRecord does for a request's record.
func (l *Location) taskRecord(k encode.Kind, task uint64, t uint64, read bool) {
	if read {
		t = clock.Now()
	}
	if l.pool.Epoch() != l.epoch && !l.sync() {
		return
	}
	r := encode.Record{Kind: k, Task: task}
	_, r.Time, r.Seq = l.stamp(t)
	d := l.depth
	l.recorded++
	c := buffer.ClassParadigm
	l.putAtDepth(&r, d, c)
}

// setTeam records the location's place as an OpenMP thread: its thread
// number in each enclosing team, from the outermost in (so its nesting
// level is len(numbers)). The trace keeps the last place given, in the
// location's definition; readers use it to group threads under the thread
// that forked their team. Levels past tracefile.MaxTeamLevels are not kept.
func (l *Location) setTeam(numbers []int) {
	if l == nil {
		return
	}
	numbers = numbers[:min(len(numbers), tracefile.MaxTeamLevels)]
	l.m.mu.Lock()
	l.team = append(l.team[:0], numbers...)
	l.m.mu.Unlock()
}

// teamPlace returns the place setTeam gave, nil if none.
func (l *Location) teamPlace() []int {
	if l == nil {
		return nil
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if len(l.team) == 0 {
		return nil
	}
	return append([]int(nil), l.team...)
}
