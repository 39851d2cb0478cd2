// Package measure is hmbtrace's public Go API and its runtime: a
// Measurement with its regions and lanes, the enter/leave probes, the
// clock, configuration from HMB_* environment variables, and the trace file
// written at Close.
//
// Go code declares its regions once, at package level, and opens them
// where it runs, with the context.Context it passes anyway:
//
//	var solve = measure.NewRegion("solve") // file:line of this line
//
//	func Solve(ctx context.Context, ...) {
//		defer measure.StartRegion(ctx, solve).End()
//		...
//	}
//
//	func main() {
//		cfg, err := measure.ConfigFromEnv()
//		m, err := measure.Start(cfg)
//		defer m.Close()
//		Solve(context.Background(), ...)
//	}
//
// A Site (NewRegion) binds to the running measurement (Current, or the one
// a context carries: NewContext) at its first use in it, so it never names
// a region of another measurement. StartRegion and Do allocate nothing.
//
// The explicit form, a Region and a Location, costs less still and is what
// the C shim and code that manages its own streams use:
//
//	solve := m.Region("solve")
//	loc := m.Location("worker 3")
//	loc.Enter(solve)
//	...
//	loc.Leave(solve)
//	loc.Done()
//
// A Region is an index into its measurement's table and says nothing of
// which measurement that is: one of another measurement names whatever
// region has its index here, or, past the table, is dropped and counted
// (Stats.Usage). A Site cannot cross measurements.
//
// The probes of messages and MPI (SendRank, Isend, EnterCollective and
// their forms, with DefineComm, SetRank and SyncClock) are for Go code that
// calls MPI itself, through a binding: they record what hmbtrace's MPI
// wrappers (libhmbtrace-mpi) record for C, C++ and Fortran. The At forms
// (EnterAt, LeaveAt, MessageAt, EnterCollectiveAt) replay events recorded
// elsewhere, with times taken from Measurement.Now. What only the C shim
// needs (pinning a location for its C probes, replaying its staged
// records, MPI one-sided communication, OpenMP's tasks and teams) is not
// exported.
//
// # Lanes
//
// A Location is a lane: one single-writer stream of events, which a
// goroutine holds while it records and then gives back. It may pass from
// one goroutine to another while one holds it, when the two are ordered (a
// channel, a mutex, a WaitGroup); it must never be written by two at once.
// So a program that starts a goroutine per task, through errgroup or `go`
// in a loop, uses as many lanes as tasks ran at once, and the trace and the
// report show lanes, not a row per goroutine:
//
//   - StartRegion finds the calling goroutine's lane from the goroutine
//     itself (a word the runtime keeps per goroutine, read in assembly on
//     amd64 and arm64; elsewhere the goroutine's id parsed from
//     runtime.Stack, which costs microseconds a region), never from
//     the context, which Go code hands to the goroutines it starts. A
//     goroutine takes a lane at its outermost region and keeps it bound
//     when that region ends: its next region takes it back with one
//     compare-and-swap, and a goroutine that needs a lane takes a free or
//     idle one, else makes one, "lane N".
//   - Measurement.Location hands out a lane that Done gave back at depth 0,
//     else a new one: the idiom of a Location at the start of a task's
//     goroutine and Done at its end is bounded the same way. A reused lane
//     keeps its first name.
//
// Each holder of a lane after its first is a task on it, recorded with the
// task records of OpenMP's explicit tasks: a switch to the task when it
// takes the lane, its completion when it gives it back (Done) or when
// another goroutine takes the idle lane (at the time of its last event).
// A task's regions nest on its lane between the two. Readers that know no
// thread team for such tasks (the OTF2 export) leave their records out and
// say so; the lane's regions are exported as usual.
//
// Two goroutines probing one lane at once corrupt its stream. The probes
// detect it cheaply where a leave finds the other goroutine inside a probe
// (the buffer's busy mark, one load): they record nothing then, count it
// (Stats.SharedLane), and Close prints which location was shared. Sharing that never overlaps a
// probe goes unseen there; `go test -race` and `go build -race` find it,
// as a data race on the Location.
//
// A probe reads the clock, keeps an exact per-location flat profile, and
// encodes the event into the current bin of its level of the Hierarchical
// Memory Buffer, without locks, atomic read-modify-writes or allocation.
// When the buffer is full, the configured reduction sheds whole levels
// (package buffer); the flat profile stays exact.
//
// The HMB_* environment variables win over the code's Config, as Score-P's
// SCOREP_* variables do: Start applies each one that is set over the
// Config it is given (Config.IgnoreEnv says not to), so a run is
// reconfigured without a rebuild. A malformed value is an error of Start.
//
// os.Exit and log.Fatal skip deferred calls, and with them the deferred
// Close: Exit, Fatal, Fatalf and Fatalln write the traces and then exit.
// After a death Close cannot see (SIGKILL, the OOM killer, a segfault, or
// an os.Exit left in place) the trace is made from the surviving mapping
// of Config.Survive (HMB_SURVIVE=1) with `hmbtrace recover`.
package measure
