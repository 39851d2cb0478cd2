package tracefile

import (
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// secRecovered marks a trace recovered from a mapping (recover.go): what
// ended the run and what the recovery could not account for.
const secRecovered = 0x27

// End is what ended a run whose trace was recovered, as far as its mapping
// tells.
type End uint8

const (
	// EndUnknown: the process died without its measurement closing and
	// without a handler catching a signal: SIGKILL (the OOM killer, a
	// batch system's hard limit), a crash, _exit. The mapping cannot
	// tell which.
	EndUnknown End = iota
	// EndSignal: HMB_SIGNALS caught a signal (Recovered.Signal) and its
	// handler began to write the trace; the process died before the file
	// was complete.
	EndSignal
	// EndRunning: the process still ran; its buffer was read as it stood.
	EndRunning
	// EndLeft: the measurement closed but could not write its trace file.
	EndLeft
	// EndClosed: the trace file was written; the mapping was left over.
	EndClosed
	numEnds
)

func (e End) String() string {
	switch e {
	case EndUnknown:
		return "died without closing the measurement and without a caught signal (SIGKILL, the OOM killer, a crash or _exit: the mapping cannot tell which)"
	case EndSignal:
		return "ended by a signal its handler caught"
	case EndRunning:
		return "still running: read as it stood"
	case EndLeft:
		return "closed its measurement but could not write the trace file"
	case EndClosed:
		return "closed normally: its trace file was written"
	}
	return fmt.Sprintf("end %d", uint8(e))
}

// Recovered says a trace was recovered from the mapping its process left
// (HMB_SURVIVE=1, hmbtrace recover) rather than written by Close. Such a
// trace's counts of events recorded, filtered and dropped at the probes
// are those each location last published (at a new bin, a sync): lower
// bounds. Its flat profile was built from the kept events: exact for the
// levels kept whole, lower bounds where the buffer removed calls. Its
// duration ends at the last record or reduction known: the run may have
// lasted longer.
type Recovered struct {
	End    End
	Signal int // EndSignal: the signal's number
	// Unaccounted counts the events the locations had published as
	// recorded beyond those the file accounts for (kept, removed,
	// filtered): the events recorded are at least Recorded + Unaccounted.
	Unaccounted uint64
	// Cut counts the bins cut at their last complete record, Orphans
	// those whose level was lost; LostDefs and LostLevels the
	// definitions and levels that did not fit the mapping's tables.
	Cut, Orphans         int
	LostDefs, LostLevels uint64
}

// EndText says what ended the run, with the signal's name.
func (r *Recovered) EndText() string {
	if r.End == EndSignal && r.Signal > 0 {
		return fmt.Sprintf("ended by signal %d (%s), which its handler caught", r.Signal, signalName(r.Signal))
	}
	return r.End.String()
}

// LowerBounds names the figures of a recovered trace that are lower
// bounds, in words.
func (r *Recovered) LowerBounds() []string {
	return []string{
		"events recorded, filtered and dropped at the probes (each location's counts as last published)",
		"the flat profile's visits and times (built from the kept events; calls of removed levels are missing)",
		"the run's duration (it ends at the last record or reduction the mapping holds)",
	}
}

func signalName(sig int) string {
	switch sig {
	case 1:
		return "SIGHUP"
	case 2:
		return "SIGINT"
	case 3:
		return "SIGQUIT"
	case 6:
		return "SIGABRT"
	case 9:
		return "SIGKILL"
	case 15:
		return "SIGTERM"
	}
	return "a signal"
}

func encodeRecovered(r *Recovered) []byte {
	if r == nil {
		return nil
	}
	var p wirecodec.Writer
	p.U8(uint8(r.End))
	p.Varint(int64(r.Signal))
	p.Uvarint(r.Unaccounted)
	p.Varint(int64(r.Cut))
	p.Varint(int64(r.Orphans))
	p.Uvarint(r.LostDefs)
	p.Uvarint(r.LostLevels)
	return p
}

func decodeRecovered(f *fields) *Recovered {
	r := &Recovered{End: End(f.U8("end"))}
	if f.OK() && r.End >= numEnds {
		f.Fail("end", fmt.Sprintf("%d is not one of the %d known", r.End, numEnds))
	}
	r.Signal = f.Int("signal", 0, 1<<10)
	r.Unaccounted = f.Uvarint("unaccounted")
	r.Cut = f.Int("cut bins", 0, min(math.MaxInt, 1<<40))
	r.Orphans = f.Int("orphan bins", 0, min(math.MaxInt, 1<<40))
	r.LostDefs = f.Uvarint("lost definitions")
	r.LostLevels = f.Uvarint("lost levels")
	return r
}
