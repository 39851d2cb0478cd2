package report

import (
	"cmp"
	"slices"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// waitInfo is the run's wait states (analysis/waitstate) as the page uses
// them: the result for the findings, and each location's waiting for the
// run table and the profile's system tree.
type waitInfo struct {
	res   *waitstate.Result
	byLoc [][]int64 // per file and location index: ns waited, all patterns
	any   bool      // some location waited
	// noSync: the trace has no MPI call or OpenMP barrier, and was not
	// replayed.
	noSync bool
}

// waitsOf replays the run's communication for its wait states.
func waitsOf(r *run) (*waitInfo, error) {
	if !waitstate.Replayable(r.files) {
		// No MPI call or OpenMP barrier: no wait state, and no replay
		// to pay for.
		w := newWaitInfo(r, &waitstate.Result{})
		w.noSync = true
		return w, nil
	}
	res, err := waitstate.Analyze(r.files, waitstate.Options{Procs: r.procs})
	if err != nil {
		return nil, err
	}
	w := newWaitInfo(r, res)
	for p := waitstate.Pattern(0); p < waitstate.NumPatterns; p++ {
		if _, sub := p.Parent(); sub {
			continue // its time is in its parent's
		}
		for li, ns := range res.ByLocation(p) {
			l := res.Locations[li]
			w.byLoc[l.File][l.Loc] += ns
			w.any = w.any || ns > 0
		}
	}
	return w, nil
}

// name labels location i of the result as the rest of the page does.
func (w *waitInfo) name(r *run, i int) string {
	if i < 0 || i >= len(w.res.Locations) {
		return "-"
	}
	l := w.res.Locations[i]
	return r.label(l.File, &r.files[l.File].Locations[l.Loc])
}

// waitSection renders the wait states as findings: the patterns' totals,
// the worst waits with the delay that caused each, and the delay costs.
func waitSection(r *run, w *waitInfo, err error, top int) []byte {
	b := section("waitstates", "Wait states", "Why the ranks waited: Scalasca's wait-state patterns, found by replaying the recorded messages and collectives (Geimer et al.); a wait's delay is what the late party did meanwhile (Böhme et al.). hmbtrace waitstate prints the same, and hmbtrace export -format cube writes them for Cube.")
	if err != nil {
		return unavailable(b, "wait states", err)
	}
	res := w.res
	type patternRow struct {
		Name, Time, Share string
		Sub               bool
		NS                int64
		Count             int
	}
	type worstRow struct {
		NS                                     int64
		Time, Pattern, Region, Where, At, Late string
		Delay                                  string
	}
	type costRow struct {
		NS                                   int64
		Time, Pattern, Region, Where, Shared string
	}
	data := struct {
		Unsynced  bool
		NoSync    bool
		None      bool
		Total     string
		Patterns  []patternRow
		Worst     []worstRow
		Costs     []costRow
		Unmatched string
		Clock     string
	}{Unsynced: !res.Synced && len(r.files) > 1, Total: units.Duration(float64(res.Total))}
	var all int64
	for p := waitstate.Pattern(0); p < waitstate.NumPatterns; p++ {
		if res.Totals[p] == 0 {
			continue
		}
		_, sub := p.Parent()
		if !sub {
			all += res.Totals[p]
		}
		data.Patterns = append(data.Patterns, patternRow{Name: p.String(), Sub: sub, NS: res.Totals[p], Time: units.Duration(float64(res.Totals[p])),
			Share: units.Share(float64(res.Totals[p]), float64(res.Total)), Count: res.Counts[p]})
	}
	data.None = all == 0
	data.NoSync = w.noSync
	for i, in := range res.Worst {
		if i >= top {
			break
		}
		row := worstRow{NS: in.Time, Time: units.Duration(float64(in.Time)), Pattern: in.Pattern.String(), Region: in.Region,
			Where: w.name(r, in.Loc), At: units.Duration(float64(in.Start)), Late: w.name(r, in.Peer)}
		if d := in.Delay; d != nil {
			row.Delay = units.Duration(float64(d.Time)) + " in " + d.Region
			if d.Work != nil {
				row.Delay += "; " + units.Duration(float64(*d.Work)) + " of work since its previous synchronisation, most in " + d.WorkRegion
			}
		}
		data.Worst = append(data.Worst, row)
	}
	costs := append([]waitstate.Value(nil), res.Delays...)
	sortValues(costs)
	for i, v := range costs {
		if i >= top {
			break
		}
		data.Costs = append(data.Costs, costRow{NS: v.Time, Time: units.Duration(float64(v.Time)), Pattern: v.Pattern.String(), Region: v.Region,
			Where: w.name(r, v.Loc), Shared: units.Share(float64(v.Time), float64(all))})
	}
	if res.UnmatchedRecvs+res.UnmatchedSends+res.UnmatchedCollectives+res.Unresolved > 0 {
		data.Unmatched = units.Plural(int(res.UnmatchedRecvs), "receive", "receives") + " and " + units.Plural(int(res.UnmatchedSends), "send", "sends") +
			" without their other end, " + units.Plural(int(res.UnmatchedCollectives), "collective", "collectives") + " with a member missing and " +
			units.Plural(int(res.Unresolved), "message", "messages") + " to no location of these files were not replayed (the buffer shed them, or a rank's file is missing)."
	}
	if res.ClockViolations > 0 {
		data.Clock = units.Plural(int(res.ClockViolations), "message was", "messages were") + " received before its send was entered (the clocks disagree): their waits are clipped there."
	}
	execTo(b, "waitstates", data)
	return b.Bytes()
}

// sortValues sorts delay costs by time, largest first, then as the result
// sorts them.
func sortValues(vs []waitstate.Value) {
	slices.SortStableFunc(vs, func(a, b waitstate.Value) int { return cmp.Compare(b.Time, a.Time) })
}

// newWaitInfo returns res with no location's wait summed yet.
func newWaitInfo(r *run, res *waitstate.Result) *waitInfo {
	w := &waitInfo{res: res, byLoc: make([][]int64, len(r.files))}
	for i, f := range r.files {
		w.byLoc[i] = make([]int64, len(f.Locations))
	}
	return w
}
