//go:build amd64 && !race

package measure

import (
	"context"
	"sync/atomic"
)

// On amd64 the common case of Enter and Leave is one leaf function in
// assembly (probe_amd64.s): the profile entry, RDTSC, the checks, the
// bookkeeping and the record's bytes in registers, in one frame with
// nothing spilled, so that the CPU does the bookkeeping while the clock
// read is under way, as it does for the C probe. A Go call spills every
// live register (Go has no callee-saved ones), and the probe written in Go
// paid that around its call of the clock, about 6 ns per event. Anything
// else (a bin boundary, a new depth or level, a closed depth, an encoder
// state the one- and two-byte records do not cover, a throttling
// decision, a shared lane, a location on CLOCK_MONOTONIC) goes to enterAt
// and leaveAt, with the clock's time if it was read, before the assembly
// has changed anything. Under the race detector, which does not see what
// assembly writes, the probes are Go's (probe_other.go).

// enterProbe records an enter of region r on l at the clock's time, the
// body of Enter. Callers ignore t: it is the slot where the assembly puts
// the time it read before it jumps to enterSlow, whose third argument sits
// there (a result, not an argument, keeps Enter within the inliner's
// budget).
func enterProbe(l *Location, r Region) (t uint64)

// leaveProbe records a leave of region r on l at the clock's time, the
// body of Leave and of Span.End, as enterProbe does.
func leaveProbe(l *Location, r Region) (t uint64)

// laneEnter is StartRegion's common case: it enters r on the running
// goroutine's lane if the table holds that lane in the goroutine's slot,
// active for it, and returns it; else it returns nil and records nothing.
// It does in one call what goroutine.Key, the table and enterProbe did in
// two, with no Go frame between them. Callers ignore t, enterProbe's slot.
func laneEnter(tab *[laneSlots]atomic.Pointer[Location], r Region) (t uint64, l *Location)

// spanStart is StartRegion: its common cases, a region nested in one the
// goroutine has open and the goroutine's outermost region on its idle
// lane, in one assembly routine that finds the lane and runs enterProbe's
// body in place; anything else jumps to startRegion, with the same frame.
// The Go caller thus makes one call, where a Go StartRegion made two with
// its frame, spills and checks between them (about 30 instructions).
func spanStart(ctx context.Context, s *Site) (sp Span)

// enterSlow is where enterProbe jumps for every case but the common one,
// with the time it read, or 0.
//
//lint:ignore U1000 the assembly jumps here, which staticcheck does not see
func enterSlow(l *Location, r Region, t uint64) { l.enterAt(r, t) }

// leaveSlow is leaveProbe's enterSlow, which also ends a Span's outermost
// region (leaveAny).
//
//lint:ignore U1000 the assembly jumps here, which staticcheck does not see
func leaveSlow(l *Location, r Region, t uint64) { leaveAny(l, r, t) }
