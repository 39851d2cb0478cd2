// Package tracetest holds what the tests of the trace readers, exporters
// and analyses share: trace files written event by event (Builder), traces
// recorded with the probes and opened for the test (Finish, and
// RecordCalls for a tree of calls at given times), and the
// external programs tests need (RequireTool, BuildExample). Only tests
// import it.
package tracetest
