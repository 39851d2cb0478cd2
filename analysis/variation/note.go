package variation

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// NoteKind is what limits a Variation's result.
type NoteKind uint8

const (
	// NoteNoSync: no region of the trace matches the synchronization
	// patterns (Note.Sync beyond the defaults), so the SOS-times are the
	// plain segment durations.
	NoteNoSync NoteKind = iota + 1
	// NoteShedInvocations: Missing of Of invocations of Region are not in
	// the trace, lost as Losses say; they have no segment.
	NoteShedInvocations
	// NoteShedSync: Missing of Of synchronization calls on Locations
	// locations are not in the trace, lost as Losses say; the segments
	// that held them count that wait as their own time.
	NoteShedSync
	// NoteTruncated: Missing segments began before the window the
	// keep-last policy kept and are left out.
	NoteTruncated
	// NoteWeakChoice: the time-dominant region Region is a weak choice,
	// as Weak says: it covers Share of the run and is invoked Missing
	// times on Locations locations; Loop is the collective called Of
	// times that the iterations are cut at, or could be ("" if none); with
	// WeakRankFallback, the collective each rank's master thread calls.
	NoteWeakChoice
	// NoteRestarted: cut between calls of the collective Region, Missing
	// of its Of calls on Locations locations came after the location left
	// the loop that made the one before (Row.Starts): the iterations ended
	// and began again, and the time between is no segment.
	NoteRestarted
)

// Note is one limit of the result, with the numbers and names that tell
// it; package render words it.
type Note struct {
	Kind        NoteKind
	Missing, Of uint64
	Locations   int
	Region      string
	Sync        filter.Patterns
	Losses      []Loss
	// NoteWeakChoice only.
	Weak  Weakness
	Share float64
	Loop  string
}

// LossKind is a way a buffer lost events.
type LossKind uint8

const (
	LossDepth    LossKind = iota + 1 // the depth-reduction policy closed depths >= Loss.Depth
	LossClass                        // the class-reduction policy closed Loss.Class
	LossFirst                        // recording stopped when the buffer was full
	LossLast                         // the keep-last policy revoked the oldest events
	LossNoBin                        // events dropped for want of a bin
	LossDuration                     // calls shorter than the duration filter left out
)

// Loss is a way the buffers of the analysed files lost events.
type Loss struct {
	Kind  LossKind
	Depth int             // LossDepth
	Class tracefile.Class // LossClass
}

// NoInvocationError is Analyze's error when the trace holds no complete
// invocation of the segment region; Losses say how the buffers lost events,
// which may be why.
type NoInvocationError struct {
	Region string
	Losses []Loss
}

// Error says which region has no invocation; render.ErrorText adds the
// losses.
func (e *NoInvocationError) Error() string {
	return fmt.Sprintf("analysis: no invocation of %q is in the trace", e.Region)
}

// NoComputationError is the error of a trace in which every region invoked
// at least Dominance.MinVisits times is an MPI call, an OpenMP construct, a
// synchronization region or mostly waits in them; the regions passed over
// are in Dominance (those invoked often enough among them).
// errors.Is(err, ErrNoComputation) reports it.
type NoComputationError struct {
	Dominance Dominance
}

// Error says what was missing; render.ErrorText names the regions passed
// over.
func (e *NoComputationError) Error() string {
	return fmt.Sprintf("analysis: %v: no region invoked at least %d times (2 × %d locations) is of the program's own computation; name the region to segment by",
		ErrNoComputation, e.Dominance.MinVisits, e.Dominance.Locations)
}

// Is makes errors.Is(err, ErrNoComputation) true.
func (e *NoComputationError) Is(target error) bool { return target == ErrNoComputation }
