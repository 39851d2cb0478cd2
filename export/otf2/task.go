package otf2

// The OpenMP task events of OTF2 1.2: a task is named by its thread team
// (a communicator of the team's locations), the number of its creating
// thread in that team and that thread's generation number for it (how
// many tasks the thread created before, plus one).
const (
	eventThreadTaskCreate   = 59
	eventThreadTaskSwitch   = 60
	eventThreadTaskComplete = 61
)

// ThreadTaskCreate records that the location created a task of team.
func (w *EventWriter) ThreadTaskCreate(ts uint64, team CommRef, creatingThread, generation uint32) error {
	return w.taskEvent(ts, eventThreadTaskCreate, team, creatingThread, generation)
}

// ThreadTaskSwitch records that the location now runs the task named by
// team, creatingThread and generation: it starts or resumes here.
func (w *EventWriter) ThreadTaskSwitch(ts uint64, team CommRef, creatingThread, generation uint32) error {
	return w.taskEvent(ts, eventThreadTaskSwitch, team, creatingThread, generation)
}

// ThreadTaskComplete records that the task completed on the location.
func (w *EventWriter) ThreadTaskComplete(ts uint64, team CommRef, creatingThread, generation uint32) error {
	return w.taskEvent(ts, eventThreadTaskComplete, team, creatingThread, generation)
}

func (w *EventWriter) taskEvent(ts uint64, id byte, team CommRef, creatingThread, generation uint32) error {
	if err := w.checkComm(team); err != nil {
		return err
	}
	if err := w.reserve(ts, recordBound(3*maxCU32)); err != nil {
		return err
	}
	b := w.file.buf
	p := w.file.pos
	b[p] = id
	start := p + 2
	p = putCU32(b, start, uint32(team))
	p = putCU32(b, p, creatingThread)
	p = putCU32(b, p, generation)
	b[start-1] = byte(p - start)
	w.file.pos = p
	w.events++
	return nil
}
