// Package trend describes how a run's behaviour changes over its
// iterations (seed 004, chapter 6): it turns trace files into one series
// per region, location and metric, a value per iteration of the progress
// loop, finds their relevant features with package dynamics (peaks, dips,
// steps, trends, each located and costed), and reports the worst
// degradations first. The iterations are the samples of the phase series
// when the trace has one, else the invocations of the time-dominant region
// (seed 000).
package trend

import (
	"fmt"
	"sort"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Series is one quantity per iteration.
type Series struct {
	Region, Location, Metric string
	Unit                     string    // of the values: "ns", "visits", or a counter's name
	Values                   []float64 // per iteration, averaged over each sample's iterations
	Width                    uint64    // iterations per value (a merged phase series holds several)
	Iterations               uint64    // iterations in all
}

// Finding is one feature of one series, in iterations of the progress loop.
type Finding struct {
	Series   *Series
	Feature  dynamics.Feature
	From, To uint64  // iterations, inclusive
	Severity float64 // value units × iterations; positive is a degradation
}

// Result is the dynamics of a run.
type Result struct {
	Source   string // where the iterations come from
	Series   []*Series
	Analyses []dynamics.Analysis // one per series
	Findings []Finding           // worst degradation first
	Notes    []string
}

// Options tune Analyze.
type Options struct {
	Dynamics dynamics.Options
	// Region picks the segment region when there is no phase series.
	Region string
}

// Analyze builds the series of the files and analyses each that has enough
// iterations.
func Analyze(files []*tracefile.File, opt Options) (*Result, error) {
	r := &Result{}
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
	} else if err := r.fromSegments(files, opt.Region); err != nil {
		return nil, err
	}
	for _, s := range r.Series {
		a, err := dynamics.Analyze(s.Values, opt.Dynamics)
		if err != nil {
			return nil, fmt.Errorf("%s on %s (%s): %v", s.Region, s.Location, s.Metric, err)
		}
		r.Analyses = append(r.Analyses, a)
		for _, ft := range a.Features {
			to := min(uint64(ft.To+1)*s.Width, s.Iterations) - 1
			r.Findings = append(r.Findings, Finding{Series: s, Feature: ft, From: uint64(ft.From) * s.Width, To: to, Severity: ft.Severity * float64(s.Width)})
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Severity > r.Findings[j].Severity })
	short := 0
	for _, s := range r.Series {
		if len(s.Values) < dynamics.MinFeatureSamples {
			short++
		}
	}
	if short > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d series have fewer than %d values: too short for features", short, dynamics.MinFeatureSamples))
	}
	return r, nil
}

// fromPhases makes series from the phase samples: inclusive time and
// visits of every region, and its counters, per location.
func (r *Result) fromPhases(files []*tracefile.File) {
	r.Source = "the phase series"
	byFile := analysis.SharedRank(files)
	for fi, f := range files {
		for i := range f.Locations {
			l := &f.Locations[i]
			ps := l.Phase
			if ps == nil || len(ps.Samples) == 0 {
				continue
			}
			r.Source = fmt.Sprintf("the phase series of %q", f.RegionName(ps.Region))
			where := analysis.LocationLabel(files, fi, byFile, l.Name)
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
			for _, k := range order {
				// A region with a value in one sample only, such as one that
				// encloses the whole loop, has no dynamics to speak of.
				if nonzero(series[k].Values) >= 2 {
					r.Series = append(r.Series, series[k])
				}
			}
		}
	}
}

// fromSegments makes series from the invocations of the time-dominant
// region (or the one named): each invocation is an iteration.
func (r *Result) fromSegments(files []*tracefile.File, region string) error {
	v, err := analysis.Analyze(files, analysis.Options{Region: region})
	if err != nil {
		return err
	}
	r.Source = fmt.Sprintf("the invocations of %q (no phase series in the trace)", v.Region)
	r.Notes = append(r.Notes, v.Notes...)
	byRow := map[int][]analysis.Segment{}
	for _, s := range v.Segments {
		byRow[s.Row] = append(byRow[s.Row], s)
	}
	for row := range v.Rows {
		segs := byRow[row]
		if len(segs) == 0 {
			continue
		}
		name := v.Rows[row].Label
		t := &Series{Region: v.Region, Location: name, Metric: "time per iteration", Unit: "ns", Width: 1, Iterations: uint64(len(segs))}
		sos := &Series{Region: v.Region, Location: name, Metric: "SOS-time per iteration", Unit: "ns", Width: 1, Iterations: uint64(len(segs))}
		for _, s := range segs {
			t.Values = append(t.Values, float64(s.Duration))
			sos.Values = append(sos.Values, float64(s.SOS))
		}
		r.Series = append(r.Series, t, sos)
	}
	return nil
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
