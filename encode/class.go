package encode

import "fmt"

// Class is an event class: the second dimension of a location's hierarchy
// of buffers, beside the calling depth. buffer files records by it and
// tracefile reads it back; its numbering is part of the file format and of
// the C probes' view (cshim/lib/golayout.h), so it is defined here, in the
// package both sides import.
type Class uint8

// The event classes, in the order they are stored.
const (
	ClassRegion     Class = iota // enter and leave records
	ClassMessage                 // point-to-point send and receive records
	ClassMetric                  // counter values read at enter and leave
	ClassCollective              // collective operations (MPI)
	// ClassParadigm holds the enters and leaves of a paradigm's regions (MPI
	// calls that are not collectives, OpenMP synchronisation): the default
	// depth policy sheds it only after every compute level it could close,
	// and messages and collectives only after that.
	ClassParadigm
	NumClasses
)

var classNames = [NumClasses]string{"enter/leave", "message", "metric", "collective", "paradigm"}

// String returns the class's name as the summary prints it.
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Calls reports whether the class holds enters and leaves.
func (c Class) Calls() bool { return c == ClassRegion || c == ClassCollective || c == ClassParadigm }

// Communication reports whether the class is one the depth policy keeps
// longest: paradigm regions, messages and collectives.
func (c Class) Communication() bool {
	return c == ClassParadigm || c == ClassMessage || c == ClassCollective
}

// KeptLongest is Communication, under the name the depth policy uses.
func (c Class) KeptLongest() bool { return c.Communication() }

// ParseClass reads a class name: enter/leave (or region), message, metric,
// collective, paradigm.
func ParseClass(s string) (Class, error) {
	for c, n := range classNames {
		if s == n {
			return Class(c), nil
		}
	}
	if s == "region" || s == "enterleave" {
		return ClassRegion, nil
	}
	return 0, fmt.Errorf("unknown event class %q (want enter/leave, message, metric, collective or paradigm)", s)
}

// Reason says why events were removed from a level. Its numbering is part
// of the file format.
type Reason uint8

// The reasons events are removed. Each is counted separately per level.
const (
	ByDepth Reason = iota // the level's calling depth was closed
	ByClass               // the level's event class was closed
	ByFirst               // the buffer was full and the policy keeps the first events
	ByLast                // the policy keeps the last events and revoked older bins
	NoBin                 // no bin was free and nothing could be revoked
	NumReasons
)

var reasonNames = [NumReasons]string{"depth", "class", "first", "last", "no-bin"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}
