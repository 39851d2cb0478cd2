package measure

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Nothing a measurement got wrong or left out is silent. The probes count
// their usage errors and go on, as they must inside a program that runs on;
// the last one is kept in words (LastUsageError, and the C library's
// hmb_last_error), and at exit one line on stderr says what was wrong or
// missing and where the trace tells more. The counts are the trace's own
// statistics, so the line and hmbtrace summary agree.

// usageKind names a usage error the probes note for LastUsageError.
type usageKind uint8

const (
	usageNone usageKind = iota
	usageUnknownRegion
	usageLeaveNothingOpen
	usageLeaveNotOpen
	usageLeftImplicitly
	usageMessageNoPeer
)

// usageNote is the last usage error of a measurement: its kind, the
// region the probe named and, for a region left implicitly, the one that
// was open. Kept as numbers: the words are made when asked for.
type usageNote struct {
	kind     usageKind
	region   uint32
	open     uint32
	location string
	nanos    uint64 // CLOCK_MONOTONIC, for ordering against the C library's own errors
}

// exitState is what the measurement keeps for the line at exit.
type exitState struct {
	mu   sync.Mutex
	last usageNote
	run  *runTotals
}

// noteUsage keeps a usage error of location l as the measurement's last.
// It runs on the probes' error paths only, which may be frequent in a
// broken program but are never the common case: a mutex is cheap there.
//
//go:noinline
func (l *Location) noteUsage(k usageKind, region, open uint32) {
	m := l.m
	if m == nil {
		return
	}
	now := clock.Monotonic()
	m.exit.mu.Lock()
	m.exit.last = usageNote{kind: k, region: region, open: open, location: l.name, nanos: now}
	m.exit.mu.Unlock()
}

// LastUsageError returns the last usage error the probes met, in words,
// or "" if there was none: a leave of a region not open, a probe with an
// undefined region, a message without a peer. The probes count each and go
// on (Stats.Usage has the counts); this says which was the last, while the
// program runs. Safe for concurrent use.
func (m *Measurement) LastUsageError() string {
	msg, _ := m.lastUsage()
	return msg
}

// lastUsage returns LastUsageError and the CLOCK_MONOTONIC time it was
// noted at (0 if none).
func (m *Measurement) lastUsage() (string, uint64) {
	if !m.Enabled() {
		return "", 0
	}
	m.exit.mu.Lock()
	n := m.exit.last
	m.exit.mu.Unlock()
	if n.kind == usageNone {
		return "", 0
	}
	name := func(r uint32) string {
		m.mu.Lock()
		defer m.mu.Unlock()
		if r == 0 || int(r) > m.regions.len() {
			return fmt.Sprintf("region id %d", r)
		}
		return fmt.Sprintf("%q", m.regions.at(int(r)-1).name)
	}
	var what string
	switch n.kind {
	case usageUnknownRegion:
		what = fmt.Sprintf("a probe named %s, which the measurement never defined (a region of another measurement, "+
			"or one used before its definition: in C, a region id not returned by hmb_region); the probe was dropped", name(n.region))
	case usageLeaveNothingOpen:
		what = fmt.Sprintf("a leave of %s with no region open (a leave without its enter, or one too many); ignored", name(n.region))
	case usageLeaveNotOpen:
		what = fmt.Sprintf("a leave of %s, which is not open; ignored", name(n.region))
	case usageLeftImplicitly:
		what = fmt.Sprintf("a leave of %s while %s, entered inside it, was still open: %s was left there too (a missing leave)",
			name(n.region), name(n.open), name(n.open))
	case usageMessageNoPeer:
		what = "a message with no peer, or a peer of another measurement; not recorded"
	}
	return fmt.Sprintf("hmbtrace: usage error, location %q: %s", n.location, what), n.nanos
}

// runTotals are a whole MPI run's counts, reduced by its ranks at the
// collective end, for the one line rank 0 says at exit.
type runTotals struct {
	Ranks    int
	Recorded uint64 // events the probes accepted
	NotKept  uint64 // of them, removed by the buffer (not filtered)
	Usage    uint64 // usage errors
	// WorstRank kept the smallest share of its events, WorstNotKept of its
	// own events not kept.
	WorstRank    int
	WorstNotKept float64
}

// setRunTotals gives rank 0's measurement the run's totals.
func (m *Measurement) setRunTotals(t runTotals) {
	if !m.Enabled() {
		return
	}
	m.exit.mu.Lock()
	m.exit.run = &t
	m.exit.mu.Unlock()
}

// usageTotal returns the usage errors of u, those of Close at exit
// excepted: regions still open when the program exits are no error.
func usageTotal(u *tracefile.UsageErrors) uint64 {
	return u.UnknownRegion + u.LeaveNothingOpen + u.LeaveNotOpen + u.LeftImplicitly + u.OpenAtClose + u.AfterClose + u.MessageNoPeer
}

// exitLine returns the line said at exit, or "" when nothing went wrong:
// usage errors, events the buffer did not keep (a reduction, a level
// closed, no bin). path is the trace written. In an MPI run whose ranks
// reduced their totals (collective), rank 0 speaks for the run and the
// others say nothing; without them, each rank with something to say says
// it for itself.
func (m *Measurement) exitLine(st *Stats, path string, rank int, collective bool) string {
	m.exit.mu.Lock()
	run := m.exit.run
	m.exit.mu.Unlock()
	var who string
	usage := usageTotal(&st.Usage) + st.SharedLane
	recorded, notKept := st.Recorded, st.Dropped()
	switch {
	case run != nil:
		who = fmt.Sprintf("the run's %d ranks: ", run.Ranks)
		// The run's counts are those at MPI_Finalize; rank 0's own, at
		// exit, may have grown since (its usage errors after it).
		usage, recorded, notKept = max(run.Usage, usage), run.Recorded, run.NotKept
	case collective && rank != 0:
		return "" // rank 0 says it for the run
	case rank != 0 || collective:
		who = fmt.Sprintf("rank %d: ", rank)
	}
	var parts []string
	if usage > 0 {
		p := fmt.Sprintf("%d usage errors", usage)
		if usage == 1 {
			p = "1 usage error"
		}
		if last := m.LastUsageError(); last != "" && run == nil {
			p += " (the last: " + strings.TrimPrefix(last, "hmbtrace: ") + ")"
		}
		parts = append(parts, p)
	}
	if notKept > 0 && recorded > 0 {
		p := percentNotKept(notKept, recorded) + " of events not kept (the buffer was full: HMB_BUFFER_SIZE)"
		if run != nil && run.Ranks > 1 && run.WorstNotKept > 0 {
			p += fmt.Sprintf(", rank %d the most: %s", run.WorstRank, percent(run.WorstNotKept))
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("hmbtrace: %s%s; see hmbtrace summary %s", who, strings.Join(parts, ", "), path)
}

// percentNotKept says n of total as a percentage a reader can compare:
// whole percents, a decimal below 10 %, and never 0 % for a loss.
func percentNotKept(n, total uint64) string {
	return percent(float64(n) / float64(total))
}

func percent(f float64) string {
	p := 100 * f
	switch {
	case p >= 99.5 && f < 1:
		return ">99%" // never 100 % for a share that is not all
	case p >= 10:
		return fmt.Sprintf("%.0f%%", p)
	case p >= 0.1:
		return fmt.Sprintf("%.1f%%", p)
	}
	return "<0.1%"
}

// sayAtExit writes the exit line and the filter's unmatched rules to w,
// as the last things Close says.
func (m *Measurement) sayAtExit(w io.Writer, path string, rank int) {
	st := m.Stats()
	m.mu.Lock()
	collective := m.archive != nil
	m.mu.Unlock()
	if line := m.exitLine(&st, path, rank, collective); line != "" {
		fmt.Fprintln(w, line)
	}
	if rank == 0 {
		m.sayUnmatchedRules(w)
	}
}

// sayUnmatchedRules says which rules of HMB_FILTER_FILE matched none of
// the measurement's regions, in one line: they filtered nothing.
func (m *Measurement) sayUnmatchedRules(w io.Writer) {
	if m.filter == nil {
		return
	}
	mt := filter.NewMatcher(m.filter)
	m.mu.Lock()
	regions := m.regions.view()
	m.mu.Unlock()
	for i := 0; i < regions.len(); i++ {
		d := regions.at(i)
		mt.Region(d.name, d.file)
	}
	if line := unmatchedLine("HMB_FILTER_FILE "+m.cfg.FilterFile, mt.Unmatched()); line != "" {
		fmt.Fprintln(w, line)
	}
}

// unmatchedLine returns the one line that names the rules of source which
// matched no region, or "" if every rule matched one.
func unmatchedLine(source string, rules []filter.RuleUse) string {
	if len(rules) == 0 {
		return ""
	}
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.String()
	}
	what := "a rule"
	if len(rules) > 1 {
		what = fmt.Sprintf("%d rules", len(rules))
	}
	return fmt.Sprintf("hmbtrace: %s: %s matched no region of this run, so filtered nothing: %s "+
		"(names are as hmbtrace summary prints them)", source, what, strings.Join(names, "; "))
}
