// Package measureinternal gives this module's own packages the operations of
// package measure that are not its public API: what the C shim (package
// cshim and libhmbtrace, cshim/lib) needs to pin a C thread's location and
// replay its staged records into it, the MPI one-sided (RMA) definitions that
// only the C ABI reaches, and the registration of the live view
// (measure/live). They are unexported in measure, so `go doc measure` shows
// a Go user none of them, and Go's internal rule keeps code outside this
// module from importing them here.
//
// Package measure fills in a Funcs at init (Register); a caller takes it
// once, typed, with Of, at its own init, and then calls its fields: a call
// through a func value of a concrete signature, with no type assertion or
// interface per event.
package measureinternal

import (
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Funcs are the operations, on measure's *Location (L) and *Measurement
// (M). This package cannot name those types (measure imports it), hence the
// type parameters; there is only one instance, Funcs[*measure.Location,
// *measure.Measurement].
type Funcs[L, M any] struct {
	// PinForC pins the location and everything its C probes reach
	// through it (its stack, profile, levels and their bins, the pool's
	// epoch), now and as they grow, so that C may keep pointers to them,
	// and returns the location and the pool's epoch word. busy is the C
	// probes' mark of the thread (buffer.Pool.PinForC), or nil. UnpinC
	// drops the pins once the measurement is closed and the C probes
	// stopped.
	PinForC func(l L, busy *int32) (loc, epoch unsafe.Pointer)

	// NewThread makes the location of a C thread: its own for the run,
	// never a lane given back and handed to another holder, since the C
	// thread keeps it (its TLS points into it) and may probe again after
	// its exit, in later destructors.
	NewThread func(m M, name string) L
	UnpinC    func(l L)

	// Interrupt tells Close that the location's owner stopped in the
	// middle of a probe and will not finish it: Close leaves its state
	// alone.
	Interrupt func(l L)

	// AddDropped counts n events of class c at depth d that the C probes
	// did not keep, before the location syncs again.
	AddDropped func(l L, d int, c buffer.Class, n uint64)

	// RecordAt replays a staged message, request, collective completion,
	// RMA or task record at time t (measure's recordAt says which kinds).
	RecordAt func(l L, r encode.Record, t uint64)

	// TiedTaskAt replays the task record k (create, switch or complete)
	// of a tied task at time t, as the C probes' direct path writes it.
	TiedTaskAt func(l L, k encode.Kind, task uint64, t uint64)

	// SetTeam records the location's place as an OpenMP thread: its
	// thread number in each enclosing team, outermost first.
	SetTeam func(l L, numbers []int)

	// DefineWin, NameWin and DefineRmaGroup define the MPI windows and
	// RMA groups that RMA records name (hmb_win_define, hmb_win_name,
	// hmb_rma_group_define); comm is a measure.CommID.
	DefineWin      func(m M, comm uint32) (win uint32, err error)
	NameWin        func(m M, win uint32, name string) error
	DefineRmaGroup func(m M, members []int32) (group uint32, err error)

	// CaughtSignal records in the surviving mapping (HMB_SURVIVE) that
	// the C runtime's handler caught signal sig, before it writes the
	// trace.
	CaughtSignal func(m M, sig int)

	// RunEnd, TraceSize, CreateArchive and SetArchiveSlot are the
	// collective end of an MPI run (measure's archive.go): whether it
	// writes a run archive, with how many ranks per file and how long it
	// waits for the others; an upper bound of the trace's bytes now; the
	// group leader's creation of the group's file, which returns the
	// ranks' slot offsets; and the slot a rank's Close writes into.
	RunEnd         func(m M) (archive bool, aggregate int, timeout time.Duration)
	TraceSize      func(m M, world int) int64
	CreateArchive  func(m M, group, groups, world int, ranks []int, capacity []int64) (path string, offsets []int64, err error)
	SetArchiveSlot func(m M, group, groups, world int, off, capacity int64)
	// Snapshot returns the measurement's trace but its bins as it stands
	// (what the in-situ reduction of the run's profiles starts from);
	// SetRunResults sets (replacing) the run-wide results the ranks reduced (results
	// sections), which group 0's archive holds.
	Snapshot      func(m M) *tracefile.Trace
	SetRunResults func(m M, results []byte)
	// SetRunTotals gives rank 0's measurement the run's counts for its
	// line at exit: ranks, events recorded and not kept, usage errors, and
	// the rank that kept the smallest share with the share it lost.
	SetRunTotals func(m M, ranks int, recorded, notKept, usage uint64, worstRank int, worstNotKept float64)
	// LastUsage returns the last usage error in words ("" if none) and
	// the CLOCK_MONOTONIC time it happened at, for hmb_last_error.
	LastUsage func(m M) (string, uint64)
	// MemoryTrace returns the trace as it stands, events too, read back
	// from memory: what a rank's in-situ analyses read at the collective
	// end, while its events are still in its buffer.
	MemoryTrace func(m M) (*tracefile.File, error)
	// SyncedNanos converts a clock reading to ns since the reference
	// process's start, on its clock, as the file's readers will; ok is
	// false before a clock sync.
	SyncedNanos func(m M, ticks uint64) (ns int64, ok bool)
	// ResultsOnly reports whether the collective end writes only the
	// run's results (HMB_OUTPUT_EVENTS=none); ResultsWritten, called on
	// every rank once rank 0 wrote them, makes Close write nothing.
	ResultsOnly    func(m M) bool
	ResultsWritten func(m M, world int)

	// MarkAutomatic marks the measurement measure/auto started at a
	// program's first probe (hmbtrace-go): a Start of the program's own
	// then joins it rather than starting a second, whose trace would
	// compete with it for the same file, and its Close leaves it running.
	// EndJoins makes auto's own Close (or CloseAtExit) that follows end
	// it, whatever joined.
	MarkAutomatic func(m M)
	EndJoins      func(m M)

	// RegisterLive is how measure/live offers Start its server for
	// Config.Listen (HMB_LISTEN); importing that package registers it.
	RegisterLive func(start func(m M, addr string) (io.Closer, error))
}

var funcs any

// Register sets the operations. Package measure calls it once, at init,
// before any package that imports measure is initialised.
func Register[L, M any](f *Funcs[L, M]) { funcs = f }

// Of returns the operations measure registered, for L *measure.Location and
// M *measure.Measurement.
func Of[L, M any]() *Funcs[L, M] {
	f, ok := funcs.(*Funcs[L, M])
	if !ok {
		// Only a mistake in this module gets here: a wrong instance, or a
		// caller initialised before measure, which importing measure
		// rules out.
		panic(fmt.Sprintf("measureinternal: Of[%T, %T]: measure registered %T", *new(L), *new(M), funcs))
	}
	return f
}
