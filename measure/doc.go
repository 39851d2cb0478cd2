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
package measure
