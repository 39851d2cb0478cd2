package report

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
)

// The dynamics findings of a run without phase series, made from the
// streamed segment groups (segments.go) as trend.Analyze makes them from
// all segments: a group of several invocations is a sample of Width
// iterations, as a merged phase series' sample is, so that the dynamics
// analyse a bounded series, in time bounded by it.

// trendFromSegments returns the dynamics of the segments ss, which v (the
// trend's own variation: its region, no extra synchronization) describes.
func trendFromSegments(ss *segmentSet, v *variation.Variation, opt trend.Options) (*trend.Result, error) {
	r := &trend.Result{Source: trend.Source{Invocations: true, Region: v.Region}}
	r.Notes = append(r.Notes, v.Notes...)
	for _, sc := range ss.scans {
		if len(sc.groups) == 0 {
			continue
		}
		n := uint64(sc.row.Segments)
		name := sc.row.Label
		t := &trend.Series{Region: v.Region, Location: name, Metric: "time per iteration", Unit: "ns", Width: uint64(sc.width), Iterations: n}
		sos := &trend.Series{Region: v.Region, Location: name, Metric: "SOS-time per iteration", Unit: "ns", Width: uint64(sc.width), Iterations: n}
		for _, g := range sc.groups {
			if g.n == 1 {
				t.Values = append(t.Values, float64(g.dur))
				sos.Values = append(sos.Values, float64(g.dur-g.sync))
			} else {
				t.Values = append(t.Values, float64(g.dur)/float64(g.n))
				sos.Values = append(sos.Values, float64(g.dur-g.sync)/float64(g.n))
			}
			t.Loop += float64(g.dur)
		}
		sos.Loop = t.Loop
		r.Series = append(r.Series, t)
		// Without synchronization in the segments the SOS-time is the
		// time: the same series twice would tell every finding twice.
		if !slices.Equal(t.Values, sos.Values) {
			r.Series = append(r.Series, sos)
		}
	}
	return analyseSeries(r, opt)
}

// analyseSeries is trend.Analyze after its series are made: the dynamics
// of each, the relevant features, the findings.
func analyseSeries(r *trend.Result, opt trend.Options) (*trend.Result, error) {
	r.MinShare = opt.MinShare
	switch {
	case r.MinShare == 0:
		r.MinShare = trend.DefaultMinShare
	case r.MinShare < 0:
		r.MinShare = 0
	}
	dopt := opt.Dynamics
	dopt.MinRelativeSeverity = 0 // the floor is applied here, against the loop
	// The series are analysed on every core, each on its own.
	analyses := make([]dynamics.Analysis, len(r.Series))
	errs := make([]error, len(r.Series))
	parallel(len(r.Series), func(i int) { analyses[i], errs[i] = dynamics.Analyze(r.Series[i].Values, dopt) })
	var floors []float64
	for i, s := range r.Series {
		a, err := analyses[i], errs[i]
		if err != nil {
			return nil, fmt.Errorf("%s on %s (%s): %v", s.Region, s.Location, s.Metric, err)
		}
		r.Analyses = append(r.Analyses, a)
		ref := s.Total()
		if s.Unit == "ns" && s.Loop > 0 {
			ref = s.Loop
		}
		per := float64(s.Iterations) / float64(max(len(s.Values), 1))
		floors = append(floors, r.MinShare*ref/per)
		r.Relevant = append(r.Relevant, a.Relevant(floors[len(floors)-1]))
	}
	// trend folds a region's feature into the same feature of a region
	// inside it; these series are all of the segment region, none encloses
	// another, and nothing folds.
	for i, s := range r.Series {
		for _, ft := range r.Relevant[i] {
			// A fall that only ends a relevant rise completes the
			// series' story, not the list of what costs time.
			if math.Abs(ft.Severity) >= floors[i] {
				r.Findings = append(r.Findings, finding(s, ft))
			}
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Severity > r.Findings[j].Severity })
	r.Quiet = make([]string, len(r.Series))
	for i, s := range r.Series {
		switch {
		case len(r.Relevant[i]) > 0:
		case len(s.Values) < dynamics.MinFeatureSamples:
			r.Quiet[i] = trend.QuietShort
		case len(r.Analyses[i].Features) == 0:
			r.Quiet[i] = trend.QuietFlat
		default:
			r.Quiet[i] = trend.QuietSmall
		}
	}
	return r, nil
}

// finding places a feature of s in iterations of the loop: a value of
// Width iterations (the last of fewer) scales the cost by the iterations
// the feature's values hold.
func finding(s *trend.Series, ft dynamics.Feature) trend.Finding {
	iters := seriesIterations(s, ft.From, ft.To)
	return trend.Finding{Series: s, Feature: ft, From: uint64(ft.From) * s.Width, To: uint64(ft.From)*s.Width + iters - 1,
		Severity: ft.Severity * float64(iters) / float64(ft.To-ft.From+1)}
}

// seriesIterations returns how many iterations the values [from, to] of s
// hold.
func seriesIterations(s *trend.Series, from, to int) uint64 {
	return min(uint64(to+1)*s.Width, s.Iterations) - uint64(from)*s.Width
}
