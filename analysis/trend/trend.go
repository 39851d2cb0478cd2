// Package trend describes how a run's behaviour changes over its
// iterations (Oleynik, chapter 6): it turns trace files into one series
// per region, location and metric, a value per iteration of the progress
// loop, finds their features with package dynamics (peaks, dips, steps,
// trends, each located and costed over the series' baseline), keeps those
// that cost a relevant share of the loop's time, folds a region's feature
// into the same feature of a region inside it, and reports the costliest
// first. The iterations are the samples of the phase series when the trace
// has one, else the invocations of the time-dominant region (Weber et al.).
package trend

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Series is one quantity per iteration.
type Series struct {
	Region, Location, Metric string
	Unit                     string    // of the values: "ns", "visits", or a counter's name
	Values                   []float64 // per iteration, averaged over each sample's iterations
	Width                    uint64    // iterations per value (a merged phase series holds several)
	Iterations               uint64    // iterations in all
	// Loop is the location's time in the progress loop, in ns, for a
	// series of times: what a time series' costs are a share of.
	Loop float64
}

// iterations returns how many iterations the values [from, to] hold: Width
// each, the last value of a merged phase series fewer.
func (s *Series) iterations(from, to int) uint64 {
	return min(uint64(to+1)*s.Width, s.Iterations) - uint64(from)*s.Width
}

// Total returns the sum of the series over all iterations.
func (s *Series) Total() float64 {
	var t float64
	for k, v := range s.Values {
		t += v * float64(s.iterations(k, k))
	}
	return t
}

// Finding is one feature of one series, in iterations of the progress loop.
type Finding struct {
	Series   *Series
	Feature  dynamics.Feature
	From, To uint64  // iterations, inclusive
	Severity float64 // what it adds over the baseline, value units × iterations; negative for a dip
	// Also names the regions around this one (on the same location, for
	// the same metric) whose same feature only echoed this one and was
	// folded into it.
	Also []string
}

// Source says where a Result's iterations come from: the phase series (of
// the phase region Region, "" if no location has one), or, without phase
// series, the invocations of the time-dominant region Region.
type Source struct {
	Invocations bool
	Region      string
	// Between says the iterations run from one call of Region (an MPI
	// collective) to the next, as variation falls back to when no region
	// of the program carries them.
	Between bool
}

// Result is the dynamics of a run.
type Result struct {
	Source   Source // where the iterations come from
	Series   []*Series
	Analyses []dynamics.Analysis // one per series
	Findings []Finding           // costliest first
	// Relevant holds, per series, its features that cost at least
	// Options.MinShare, with the falls that end them, and are not folded
	// into a region inside it. Findings holds those that cost MinShare.
	Relevant [][]dynamics.Feature
	// Per series: why it has no findings ("" if it has some).
	Quiet []string
	// Notes say what limits the iterations cut by the variation analysis.
	Notes []variation.Note
	// MinShare is the relevance floor used.
	MinShare float64

	folded []fold
	echoes map[*Series]bool // series all of whose features were folded
}

// DefaultMinShare is the default relevance floor: 1 % of the location's
// time in the loop (of the series' own total for counts and counters).
const DefaultMinShare = 0.01

// Options tune Analyze.
type Options struct {
	Dynamics dynamics.Options
	// Region picks the segment region when there is no phase series.
	Region string
	// MinShare drops features that cost less than this fraction of the
	// location's time in the loop, Oleynik's thresholdTime (for counts
	// and counters, of the series' own total). 0 means DefaultMinShare;
	// a negative value keeps every feature that stands out of its noise.
	MinShare float64
	// Procs is the number of workers reading the locations and analysing
	// the series; 0 means HMB_TOOL_PROCS, else GOMAXPROCS. The result is
	// the same for any.
	Procs int
}

// Why a series has no findings.
const (
	QuietShort = "too short"
	QuietFlat  = "flat within its noise"
	QuietSmall = "changes too small to matter"
	QuietEcho  = "echoes a region inside it"
)

// Analyze builds the series of the files and analyses each that has enough
// iterations.
func Analyze(files []*tracefile.File, opt Options) (*Result, error) {
	procs, err := parallel.Procs(opt.Procs)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	r := &Result{echoes: map[*Series]bool{}}
	phased := false
	for _, f := range files {
		for i := range f.Locations {
			if f.Locations[i].Phase != nil {
				phased = true
			}
		}
	}
	if phased {
		r.fromPhases(files)
	} else if err := r.fromSegments(files, opt.Region, procs); err != nil {
		return nil, err
	}
	if err := r.analyze(opt, procs); err != nil {
		return nil, err
	}
	return r, nil
}

// AnalyzeSeries analyses series made elsewhere, as Analyze analyses the
// series it makes: a tool that reads the events itself (the report) makes
// them with InvocationSeries. src and notes say where their iterations
// come from and what limits them; the series are analysed on opt.Procs
// workers.
func AnalyzeSeries(src Source, series []*Series, notes []variation.Note, opt Options) (*Result, error) {
	procs, err := parallel.Procs(opt.Procs)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	r := &Result{Source: src, Series: series, Notes: notes, echoes: map[*Series]bool{}}
	if err := r.analyze(opt, procs); err != nil {
		return nil, err
	}
	return r, nil
}

// analyze finds the dynamics of r's series, their relevant features and
// the findings, on procs workers.
func (r *Result) analyze(opt Options, procs int) error {
	r.MinShare = opt.MinShare
	switch {
	case r.MinShare == 0:
		r.MinShare = DefaultMinShare
	case r.MinShare < 0:
		r.MinShare = 0
	}
	dopt := opt.Dynamics
	dopt.MinRelativeSeverity = 0 // the floor is applied here, against the loop
	// The series are analysed each on its own, on the workers.
	r.Analyses = make([]dynamics.Analysis, len(r.Series))
	err := parallel.Do(procs, len(r.Series), func(i int) error {
		s := r.Series[i]
		a, err := dynamics.Analyze(s.Values, dopt)
		if err != nil {
			return fmt.Errorf("%s on %s (%s): %v", s.Region, s.Location, s.Metric, err)
		}
		r.Analyses[i] = a
		return nil
	})
	if err != nil {
		return err
	}
	var floors []float64
	for i, s := range r.Series {
		a := r.Analyses[i]
		ref := s.Total()
		if s.Unit == "ns" && s.Loop > 0 {
			ref = s.Loop
		}
		// The floor in the series' units: value × samples.
		per := float64(s.Iterations) / float64(max(len(s.Values), 1))
		floors = append(floors, r.MinShare*ref/per)
		r.Relevant = append(r.Relevant, a.Relevant(floors[len(floors)-1]))
	}
	r.fold()
	for i, s := range r.Series {
		for _, ft := range r.Relevant[i] {
			// A fall that only ends a relevant rise completes the
			// series' story, not the list of what costs time.
			if math.Abs(ft.Severity) >= floors[i] {
				r.Findings = append(r.Findings, r.finding(s, ft))
			}
		}
	}
	for _, f := range r.folded {
		for k := range r.Findings {
			if r.Findings[k].Series == f.into.s && r.Findings[k].Feature == f.into.f && !slices.Contains(r.Findings[k].Also, f.region) {
				r.Findings[k].Also = append(r.Findings[k].Also, f.region)
			}
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Severity > r.Findings[j].Severity })
	r.Quiet = make([]string, len(r.Series))
	for i, s := range r.Series {
		switch {
		case len(r.Relevant[i]) > 0:
		case len(s.Values) < dynamics.MinFeatureSamples:
			r.Quiet[i] = QuietShort
		case r.echoes[s]:
			r.Quiet[i] = QuietEcho
		case len(r.Analyses[i].Features) == 0:
			r.Quiet[i] = QuietFlat
		default:
			r.Quiet[i] = QuietSmall
		}
	}
	return nil
}

// finding places a feature of s in iterations of the loop. A value of a
// merged phase series stands for Width iterations (the last for fewer): the
// cost is scaled by the iterations the feature's values hold.
func (r *Result) finding(s *Series, ft dynamics.Feature) Finding {
	iters := s.iterations(ft.From, ft.To)
	return Finding{Series: s, Feature: ft, From: uint64(ft.From) * s.Width, To: uint64(ft.From)*s.Width + iters - 1,
		Severity: ft.Severity * float64(iters) / float64(ft.To-ft.From+1)}
}

// fromPhases makes series from the phase samples: inclusive time and
// visits of every region, and its counters, per location.
func (r *Result) fromPhases(files []*tracefile.File) {
	byFile := tracefile.SharedRank(files)
	r.Source, r.Series = phaseSeries(files, func(fi int, name string) string {
		return tracefile.LocationLabel(files, fi, byFile, name)
	})
}

// RankPhaseSeries returns the series of the phase samples of one rank of a
// run of several, whose trace f is, as Analyze makes them from the run's
// files, and their Source: what each rank cuts in-situ at the collective
// end of the run, to be analysed with AnalyzeSeries.
func RankPhaseSeries(f *tracefile.File) (Source, []*Series) {
	return phaseSeries([]*tracefile.File{f}, func(_ int, name string) string {
		return tracefile.RankLabel(f.Header.Rank, name)
	})
}

// phaseSeries makes the series of the phase samples of files, a location
// of file fi named name labelled label(fi, name).
func phaseSeries(files []*tracefile.File, label func(fi int, name string) string) (Source, []*Series) {
	var src Source
	var out []*Series
	for fi, f := range files {
		for i := range f.Locations {
			l := &f.Locations[i]
			ps := l.Phase
			if ps == nil || len(ps.Samples) == 0 {
				continue
			}
			src = Source{Region: f.RegionName(ps.Region)}
			where := label(fi, l.Name)
			n := len(ps.Samples)
			iters := func(k int) float64 {
				if k < n-1 {
					return float64(ps.Width)
				}
				return float64(ps.Iterations - uint64(n-1)*ps.Width)
			}
			type key struct {
				region uint32
				metric int // -2 time, -1 visits, k counter k
			}
			series := map[key]*Series{}
			var order []key
			get := func(k key, metric, unit string) *Series {
				s := series[k]
				if s == nil {
					s = &Series{Region: f.RegionName(k.region), Location: where, Metric: metric, Unit: unit,
						Values: make([]float64, n), Width: ps.Width, Iterations: ps.Iterations}
					series[k] = s
					order = append(order, k)
				}
				return s
			}
			for k, smp := range ps.Samples {
				w := iters(k)
				for _, e := range smp.Entries {
					get(key{e.Region, -2}, "time per iteration", "ns").Values[k] = float64(f.TicksToNanos(e.Inclusive)) / w
					get(key{e.Region, -1}, "visits per iteration", "visits").Values[k] = float64(e.Visits) / w
					for c, v := range e.CounterInclusive {
						if c < len(f.Header.Metrics) {
							name := f.Header.Metrics[c]
							get(key{e.Region, c}, name+" per iteration", name).Values[k] = float64(v) / w
						}
					}
				}
			}
			var loop float64
			for _, smp := range ps.Samples {
				for _, e := range smp.Entries {
					if e.Region == ps.Region {
						loop += float64(f.TicksToNanos(e.Inclusive))
					}
				}
			}
			for _, k := range order {
				series[k].Loop = loop
				// A region with a value in one sample only, such as one that
				// encloses the whole loop, has no dynamics to speak of.
				if nonzero(series[k].Values) >= 2 {
					out = append(out, series[k])
				}
			}
		}
	}
	return src, out
}

// fromSegments makes series from the invocations of the time-dominant
// region (or the one named): each invocation is an iteration.
func (r *Result) fromSegments(files []*tracefile.File, region string, procs int) error {
	v, err := variation.Analyze(files, variation.Options{Region: region, Procs: procs})
	if err != nil {
		return err
	}
	r.Source, r.Series = SegmentSeries(v)
	r.Notes = append(r.Notes, v.Notes...)
	return nil
}

// SegmentSeries returns the series of the invocations of the segment
// region of a variation analysis, each an iteration, and their Source:
// what Analyze analyses without phase series (also of an analysis the
// ranks ran in-situ).
func SegmentSeries(v *variation.Variation) (Source, []*Series) {
	src := Source{Invocations: true, Region: v.Region, Between: v.Between}
	byRow := make([][]Invocations, len(v.Rows))
	for _, s := range v.Segments {
		byRow[s.Row] = append(byRow[s.Row], Invocations{N: 1, Duration: s.Duration, SOS: s.SOS})
	}
	var out []*Series
	for row, groups := range byRow {
		out = append(out, InvocationSeries(v.Region, v.Rows[row].Label, 1, groups)...)
	}
	return src, out
}

// Invocations are N consecutive invocations of the segment region on one
// location, their inclusive and synchronization-oblivious times summed, in
// ns.
type Invocations struct {
	N             int
	Duration, SOS int64
}

// InvocationSeries returns the series of one location's invocations of
// region, in groups of width consecutive ones (every group but the last
// full): time and SOS-time per iteration, each value a group's mean, the
// SOS-time only when it differs from the time. It returns none without
// invocations.
func InvocationSeries(region, location string, width uint64, groups []Invocations) []*Series {
	if len(groups) == 0 {
		return nil
	}
	var n uint64
	for _, g := range groups {
		n += uint64(g.N)
	}
	t := &Series{Region: region, Location: location, Metric: "time per iteration", Unit: "ns", Width: width, Iterations: n}
	sos := &Series{Region: region, Location: location, Metric: "SOS-time per iteration", Unit: "ns", Width: width, Iterations: n}
	for _, g := range groups {
		t.Values = append(t.Values, float64(g.Duration)/float64(g.N))
		sos.Values = append(sos.Values, float64(g.SOS)/float64(g.N))
		t.Loop += float64(g.Duration)
	}
	sos.Loop = t.Loop
	// Without synchronization in the segments the SOS-time is the time:
	// the same series twice would tell every finding twice.
	if slices.Equal(t.Values, sos.Values) {
		return []*Series{t}
	}
	return []*Series{t, sos}
}

func nonzero(v []float64) int {
	n := 0
	for _, x := range v {
		if x != 0 {
			n++
		}
	}
	return n
}

// Share returns the finding's cost as a fraction of the location's time in
// the loop, or NaN when that is not a time or not known.
func (f Finding) Share() float64 {
	if f.Series.Unit != "ns" || f.Series.Loop <= 0 {
		return math.NaN()
	}
	return f.Severity / f.Series.Loop
}
