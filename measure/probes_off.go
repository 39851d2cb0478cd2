//go:build hmbtrace_off

package measure

// Built with -tags hmbtrace_off, the probes are empty functions that the
// compiler removes: a program keeps its instrumentation in the source and
// pays nothing for it. Start returns a disabled measurement.

// ProbesCompiledIn reports whether the probes do anything: false in a
// program built with -tags hmbtrace_off.
const ProbesCompiledIn = false

// Enter does nothing: the probes are compiled out.
func (l *Location) Enter(r Region) {}

// Leave does nothing: the probes are compiled out.
func (l *Location) Leave(r Region) {}

// EnterAt does nothing: the probes are compiled out.
func (l *Location) EnterAt(r Region, t uint64) {}

// LeaveAt does nothing: the probes are compiled out.
func (l *Location) LeaveAt(r Region, t uint64) {}

// Send does nothing: the probes are compiled out.
func (l *Location) Send(to *Location, tag uint32, bytes uint64) {}

// Recv does nothing: the probes are compiled out.
func (l *Location) Recv(from *Location, tag uint32, bytes uint64) {}

// SendRank does nothing: the probes are compiled out.
func (l *Location) SendRank(rank int, tag uint32, bytes uint64) {}

// RecvRank does nothing: the probes are compiled out.
func (l *Location) RecvRank(rank int, tag uint32, bytes uint64) {}

// MessageAt does nothing: the probes are compiled out.
func (l *Location) MessageAt(msg Message, t uint64) {}
