package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// VariationNote words a limit of the variation analysis as one sentence
// without a final stop.
func VariationNote(n variation.Note) string {
	switch n.Kind {
	case variation.NoteNoSync:
		pats := "the MPI and OpenMP defaults"
		if n.Sync.Len() > 0 {
			pats += " and " + n.Sync.String()
		}
		return fmt.Sprintf("no region of the trace is a synchronization region (patterns: %s): SOS-times are the plain segment durations", pats)
	case variation.NoteShedInvocations:
		return fmt.Sprintf("%s of %s invocations of %s are not in the trace%s; they have no segment",
			units.Count(n.Missing), units.Count(n.Of), n.Region, lossText(n.Losses))
	case variation.NoteShedSync:
		return fmt.Sprintf("%s of %s synchronization calls on %d locations are not in the trace%s: segments that held them count that wait as their own time",
			units.Count(n.Missing), units.Count(n.Of), n.Locations, lossText(n.Losses))
	case variation.NoteTruncated:
		return fmt.Sprintf("%d segments began before the window the keep-last policy kept and are left out", n.Missing)
	case variation.NoteWeakChoice:
		return weakChoice(n)
	case variation.NoteRestarted:
		return fmt.Sprintf("%s of %s calls of %s on %s came after the location left the loop that made the one before (it returned above the depth it most often returns to between calls: a later phase): the iterations began again there, and the time between is no segment",
			units.Count(n.Missing), units.Count(n.Of), n.Region, units.Plural(n.Locations, "location", "locations"))
	}
	return fmt.Sprintf("note of unknown kind %d", n.Kind)
}

// lossText says how the buffers lost events, " (depth >= 4 closed;
// oldest events revoked)", or "" when they lost none.
func lossText(ls []variation.Loss) string {
	if len(ls) == 0 {
		return ""
	}
	why := make([]string, len(ls))
	for i, l := range ls {
		switch l.Kind {
		case variation.LossDepth:
			why[i] = fmt.Sprintf("depth >= %d closed", l.Depth)
		case variation.LossClass:
			why[i] = fmt.Sprintf("class %s closed", l.Class)
		case variation.LossFirst:
			why[i] = "recording stopped when the buffer was full"
		case variation.LossLast:
			why[i] = "oldest events revoked"
		case variation.LossNoBin:
			why[i] = "events dropped for want of a bin"
		case variation.LossDuration:
			why[i] = "calls shorter than the duration filter left out"
		default:
			why[i] = fmt.Sprintf("loss of unknown kind %d", l.Kind)
		}
	}
	return " (" + strings.Join(why, "; ") + ")"
}

// ErrorText is err's message for a reader: the analyses' typed errors,
// wrapped or not, with the names and numbers they carry worded in full.
func ErrorText(err error) string {
	msg := err.Error()
	var nc *variation.NoComputationError
	if errors.As(err, &nc) {
		d := &nc.Dominance
		return strings.Replace(msg, nc.Error(), fmt.Sprintf("analysis: %v: the regions invoked at least %d times (2 × %d locations) are %s; no MPI collective is called equally often on every location throughout the run; the time-dominant region must be of the program's own computation: instrument it (hmb_region, -finstrument-functions), mark the iterations with HMB_PHASE, or name the region to segment by",
			variation.ErrNoComputation, d.MinVisits, d.Locations, passedOver(d)), 1)
	}
	var ni *variation.NoInvocationError
	if errors.As(err, &ni) {
		return strings.Replace(msg, ni.Error(), ni.Error()+lossText(ni.Losses), 1)
	}
	return msg
}

// passedOver says why the regions invoked often enough are not candidates
// for the time-dominant region, the first few of each reason.
func passedOver(d *variation.Dominance) string {
	var parts []string
	names := func(ts []variation.RegionTotal) string {
		var ns []string
		for _, t := range ts {
			if t.Visits >= d.MinVisits {
				ns = append(ns, textname.Escape(t.Name))
			}
		}
		if len(ns) > 3 {
			ns = append(ns[:3], fmt.Sprintf("%d more", len(ns)-3))
		}
		return strings.Join(ns, ", ")
	}
	if s := names(d.Paradigm); s != "" {
		parts = append(parts, "MPI calls ("+s+")")
	}
	if s := names(d.Sync); s != "" {
		parts = append(parts, "synchronization ("+s+")")
	}
	return strings.Join(parts, ", ")
}

// weakToDo says how a user gives the analyses the iterations to cut at.
const weakToDo = "mark each iteration with HMB_PHASE or a user region (hmb_region), or build with -fno-inline so the solver's functions keep their probes, or name the region with -region"

// weakChoice words a NoteWeakChoice: why the segment region is a weak
// choice, and what to do.
func weakChoice(n variation.Note) string {
	region := textname.Escape(n.Region)
	switch n.Weak {
	case variation.WeakFallback:
		return fmt.Sprintf("no region of the program carries the iterations (none holds %s of the run's computation, its time outside MPI calls and synchronization, at one call per iteration: the compute is inlined into main or not instrumented): the iterations are cut between consecutive calls of %s, %s calls on %d locations; to cut them at the program's own loop, %s",
			units.Share(variation.WeakShare, 1), region, units.Count(n.Of), n.Locations, weakToDo)
	case variation.WeakRankFallback:
		return fmt.Sprintf("no region of the program carries the iterations (none holds %s of the run's computation, its time outside MPI calls and synchronization, at one call per iteration: the compute is inlined into main or runs in small OpenMP constructs): the iterations are cut between consecutive calls of %s, %s calls by the master thread of each rank, and the cut was taken from the master thread for the other threads of its rank (one process, one clock); to cut them at the program's own loop, %s",
			units.Share(variation.WeakShare, 1), region, units.Count(n.Of), weakToDo)
	case variation.WeakShareOfRun:
		return fmt.Sprintf("the time-dominant region %s covers only %s of the run, and no MPI collective is called throughout the run to cut the iterations at: its segments miss most of what the run does; %s",
			region, units.Share(n.Share, 1), weakToDo)
	case variation.WeakFewerThanLoop:
		return fmt.Sprintf("the time-dominant region %s is invoked %s times, fewer than half the %s calls of %s that a loop makes throughout the run: its segments may hold many iterations; %s",
			region, units.Count(n.Missing), units.Count(n.Of), textname.Escape(n.Loop), weakToDo)
	}
	return fmt.Sprintf("the time-dominant region %s is a weak choice (reason %d)", region, n.Weak)
}
