package report

import (
	"bytes"
	"fmt"
	"math"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/render"
)

// The analyses' results as findings a reader scans: what the analysis
// chose, in a few lines, then a table of what stands out. hmbtrace
// variation and hmbtrace dynamics print the same as text.

// variationFindings renders v's choice of segments and the segments that
// stand out (robust z-score at least variation.DefaultMinScore), at most
// top of them.
func variationFindings(b *bytes.Buffer, v *variation.Variation, top int) {
	type segRow struct {
		Where                     string
		Index                     int
		Start, SOS, Duration      int64
		StartText, SOSText, DText string
		Score                     string
		ScoreV                    float64
	}
	data := struct {
		Facts    []nameValue
		Passed   []string
		Notes    []string
		Slowest  []string
		Balanced string
		Segments []segRow
		Standing string
	}{}
	fact := func(n, v string) { data.Facts = append(data.Facts, nameValue{n, v}) }
	d := &v.Dominance
	switch {
	case v.Picked:
		fact("iterations", "the calls of "+v.Region+" (chosen by the user)")
	case v.ByRank:
		fact("iterations", fmt.Sprintf("from one call of %s to the next (no region of the program carries them): %s calls by the master thread of each rank, whose calls cut all %d locations", v.Region, units.Count(d.Region.Visits), d.Locations))
	case v.Between:
		fact("iterations", fmt.Sprintf("from one call of %s to the next (no region of the program carries them): %s calls on %d locations", v.Region, units.Count(d.Region.Visits), d.Locations))
	default:
		fact("iterations", fmt.Sprintf("the calls of %s, the time-dominant region: %s calls, %s in all, %s of the run", v.Region, units.Count(d.Region.Visits), units.Duration(float64(d.Region.Inclusive)), units.Share(d.Share, 1)))
	}
	if v.HasDominance && d.HasRunnerUp {
		fact("runner-up", fmt.Sprintf("%s, %s calls, %s", d.RunnerUp.Name, units.Count(d.RunnerUp.Visits), units.Duration(float64(d.RunnerUp.Inclusive))))
	}
	if len(v.SyncRegions) > 0 {
		fact("not counted as work", fmt.Sprintf("%s synchronisation regions (their time is waiting): %s", units.Count(uint64(len(v.SyncRegions))), listShort(v.SyncRegions, 8)))
	}
	fact("segments", fmt.Sprintf("%s; SOS-time median %s, MAD %s", units.Count(uint64(len(v.Segments))), units.Duration(v.Median), units.Duration(v.MAD)))
	for _, t := range d.Ineligible {
		data.Passed = append(data.Passed, fmt.Sprintf("%s: %s but only %s calls", t.Name, units.Duration(float64(t.Inclusive)), units.Count(t.Visits)))
	}
	for _, n := range v.Notes {
		data.Notes = append(data.Notes, render.VariationNote(n))
	}
	if rows := v.SlowestRows(); len(rows) >= 2 && v.Median > 0 {
		if top := v.Rows[rows[0]]; top.Median < 1.1*v.Median {
			data.Balanced = fmt.Sprintf("No location stands out by its median SOS-time (the slowest, %s, is %.2f× the median of all).", top.Label, top.Median/v.Median)
		} else {
			for i, r := range rows {
				if i == 3 {
					break
				}
				data.Slowest = append(data.Slowest, fmt.Sprintf("%s: %s, %.2f× the median of all", v.Rows[r].Label, units.Duration(v.Rows[r].Median), v.Rows[r].Median/v.Median))
			}
		}
	}
	ranked := v.Ranked()
	n := 0
	for _, s := range ranked {
		if s.Score < variation.DefaultMinScore {
			break
		}
		n++
		if len(data.Segments) < top {
			data.Segments = append(data.Segments, segRow{Where: v.Rows[s.Row].Label, Index: s.Index, Start: s.Start, SOS: s.SOS, Duration: s.Duration,
				StartText: units.Duration(float64(s.Start)), SOSText: units.Duration(float64(s.SOS)), DText: units.Duration(float64(s.Duration)),
				Score: fmt.Sprintf("%.1f", s.Score), ScoreV: s.Score})
		}
	}
	switch {
	case n == 0 && len(ranked) > 0:
		data.Standing = fmt.Sprintf("No segment stands out (robust z-score %g or more); the highest scores %.2f: %s, segment %d.", variation.DefaultMinScore, ranked[0].Score, v.Rows[ranked[0].Row].Label, ranked[0].Index)
	case n > len(data.Segments):
		data.Standing = fmt.Sprintf("%d of the %s segments stand out (robust z-score %g or more); the %d highest:", n, units.Count(uint64(len(v.Segments))), variation.DefaultMinScore, len(data.Segments))
	case n > 0:
		data.Standing = fmt.Sprintf("%d of the %s segments stand out (robust z-score %g or more):", n, units.Count(uint64(len(v.Segments))), variation.DefaultMinScore)
	}
	execTo(b, "variation-findings", data)
}

// dynamicsFindings renders the dynamics' findings, costliest first, at
// most top of them.
func dynamicsFindings(b *bytes.Buffer, res *trend.Result, top int) {
	type row struct {
		Region, Where, Metric, What, Cost, Also string
		Severity                                float64
	}
	data := struct {
		Source string
		Notes  []string
		Rows   []row
		More   int
		None   string
	}{Source: render.DynamicsSource(res.Source)}
	for _, n := range res.Notes {
		data.Notes = append(data.Notes, render.VariationNote(n))
	}
	if len(res.Findings) == 0 {
		data.None = fmt.Sprintf("No relevant change over the iterations: no series changes by %s of the loop's time or more beyond its noise.", units.Share(res.MinShare, 1))
	}
	for i, f := range res.Findings {
		if i >= top {
			data.More = len(res.Findings) - top
			break
		}
		k := f.Feature.Kind
		what := fmt.Sprintf("%v at iteration %d", k, f.From)
		switch {
		case k == dynamics.StepUp || k == dynamics.StepDown:
			what = fmt.Sprintf("%v at iteration %d", k, f.To)
		case k == dynamics.Periodic:
			what = fmt.Sprintf("a peak every %d iterations, %d–%d", uint64(f.Feature.Period)*f.Series.Width, f.From, f.To)
		case f.To > f.From:
			what = fmt.Sprintf("%v over iterations %d–%d", k, f.From, f.To)
		}
		cost := amountOf(math.Abs(f.Severity), f.Series.Unit)
		if s := f.Share(); !math.IsNaN(s) {
			cost += " (" + units.Share(math.Abs(f.Severity), f.Series.Loop) + " of the loop)"
		}
		if f.Severity < 0 {
			cost = "saves " + cost
		}
		data.Rows = append(data.Rows, row{Region: f.Series.Region, Where: f.Series.Location, Metric: f.Series.Metric, What: what, Cost: cost,
			Also: listShort(f.Also, 4), Severity: f.Severity})
	}
	execTo(b, "dynamics-findings", data)
}

func amountOf(v float64, unit string) string {
	if unit == "ns" {
		return units.Duration(v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// listShort lists names, at most n of them and how many more: a list of
// thousands of regions stays one line.
func listShort(names []string, n int) string {
	s := ""
	for i, name := range names {
		if i == n {
			return s + fmt.Sprintf(" and %d more", len(names)-n)
		}
		if i > 0 {
			s += ", "
		}
		s += name
	}
	return s
}
