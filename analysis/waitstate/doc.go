// Package waitstate owns the wait-state analysis of a run: it replays the
// communication the trace files recorded (every rank's messages, requests
// and collectives, and the OpenMP barriers of its threads) and says how
// long each location waited, in which region, and because of which late
// party. The patterns are Scalasca's, as Geimer et al. define them for the
// parallel replay ("The Scalasca performance toolset architecture") and as
// its metric tree names them: Late Sender and its wrong-order case, Late
// Receiver, Wait at N×N, Wait at Barrier, Late Broadcast, Early Reduce, and
// the wait at OpenMP barriers. From the waits it finds the run's critical
// path and its imbalance (critpath.go), and the delay costs of Böhme et
// al. ("Identifying the root causes of wait states in large-scale
// parallel applications"): the call paths whose excess time in a wait's
// synchronisation interval made the late party late, charged the wait
// (short-term) and the waits it propagated into (long-term)
// (delaycost.go). What the late party did during each wait is kept too.
//
// The analysis runs post-mortem, and in-situ at the collective end of an
// MPI run (insitu.go: each rank replays its own events and exchanges the
// times the patterns need with its peers, over MPI; insitu_why.go: then
// backward, each wait's cost to its late party and the critical path as a
// token, for the same Result as post-mortem). Post-mortem, Analyze reads
// the files of one run, puts
// their times on the run's common axis (tracefile.Axis), and replays them
// in two passes. The forward pass keeps each location's synchronisation
// calls, messages, collectives and barrier visits, and its region enters
// and leaves in a compact log (regionlog.go), not its other events; sends
// are matched to receives by MPI's order rule, collectives by their order
// on each communicator, barriers by team and visit, which gives the
// waits. The second pass (delay.go) sweeps each location's log,
// not its events, with the windows the waits define, for the delays and
// the critical path: the trace is decoded once. The
// Result is data only, per (pattern, call path, location), for the CUBE4
// writer as for the command; text.go renders it as text and JSON. Both passes and the
// receivers' replay run on workers (internal/parallel); the result is the
// same for any number of them.
package waitstate
