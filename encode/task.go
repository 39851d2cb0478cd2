package encode

// OpenMP explicit tasks (and any task model with suspension): a task is
// created on one location, runs on one or more (a switch to it each time it
// starts or resumes there) and completes once. The records carry the task's
// id, unique in the process over the run, so that a reader ties them
// together across locations.
const (
	KindTaskCreate   Kind = 14 // a task is created on this location: Task
	KindTaskSwitch   Kind = 15 // this location now runs Task (0: its implicit task)
	KindTaskComplete Kind = 16 // Task completed on this location
	// Task is suspended here with regions open, which the location left
	// just before; they are entered again after its next switch to it,
	// maybe on another location.
	KindTaskSuspend Kind = 17
)

// TokTask is the token of every task record: the time field (as every
// plain record has it, right after the token), the sub-kind (the Kind), the
// task id.
const TokTask = 0xFB

// MaxTaskSize bounds a task record's size: SEQ prefix, token, sub-kind,
// time, task id.
const MaxTaskSize = 1 + 5 + 1 + 1 + 10 + 10

// isTaskKind reports whether k is one of the task kinds.
func isTaskKind(k Kind) bool { return k >= KindTaskCreate && k <= KindTaskSuspend }

// Task puts a task record of kind k (KindTaskCreate, KindTaskSwitch,
// KindTaskComplete or KindTaskSuspend) at time t. It returns 0 for any
// other kind.
func (e *Encoder) Task(b []byte, k Kind, t uint64, seq uint32, task uint64) int {
	if !isTaskKind(k) {
		return 0
	}
	n := e.putHead(b, TokTask, t, seq)
	leb := e.tech&LEB128 != 0
	n += putUint(b[n:], uint64(k), 1, leb)
	return n + putUint(b[n:], task, 8, leb)
}

// task decodes the rest of a TokTask record into r: sub-kind and task id,
// the time having been read.
func (d *Decoder) task(r *Record) bool {
	leb := d.tech&LEB128 != 0
	at := d.off
	k, ok := d.uint(1, leb)
	if !ok {
		return false
	}
	if k > 0xFF || !isTaskKind(Kind(k)) {
		d.off = at
		d.fail("task record of unknown sub-kind")
		return false
	}
	r.Kind = Kind(k)
	r.Task, ok = d.uint(8, leb)
	return ok
}
