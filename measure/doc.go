// Package measure is hmbtrace's public Go API and its runtime: a
// Measurement with its regions and locations, the enter/leave probes, the
// clock, configuration from HMB_* environment variables, and the trace file
// written at Close.
//
//	cfg, err := measure.ConfigFromEnv()
//	m, err := measure.Start(cfg)
//	defer m.Close()
//	solve := m.Region("solve")
//	loc := m.Location("worker 3") // one per goroutine
//	loc.Enter(solve)
//	...
//	loc.Leave(solve)
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
