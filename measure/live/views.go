package live

import (
	"net/http"
	"time"

	"github.com/google/pprof/profile"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// profile writes the call-path profile: one sample per call path and
// location, valued by calls and exclusive time, so that pprof's cumulative
// time is the inclusive time. Without call paths, one frame per region.
func (h *handler) profile(w http.ResponseWriter, t *tracefile.Trace) {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "calls", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}},
		DefaultSampleType: "time",
		PeriodType:        &profile.ValueType{Type: "time", Unit: "nanoseconds"},
		Period:            1,
		TimeNanos:         t.Header.StartWall.UnixNano(),
		DurationNanos:     t.Duration(),
	}
	locs := map[uint32]*profile.Location{}
	location := func(region uint32) *profile.Location {
		if l := locs[region]; l != nil {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: t.RegionName(region), SystemName: t.RegionName(region)}
		line := int64(0)
		for _, r := range t.Regions {
			if r.ID == region {
				fn.Filename, fn.StartLine, line = r.File, int64(r.Line), int64(r.Line)
			}
		}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn, Line: line}}}
		p.Location = append(p.Location, l)
		locs[region] = l
		return l
	}
	for _, l := range t.Locations {
		label := map[string][]string{"location": {l.Name}}
		if len(l.CallPaths) > 0 {
			for i, c := range l.CallPaths {
				var stack []*profile.Location
				for n := i + 1; n > 0; n = int(l.CallPaths[n-1].Parent) {
					stack = append(stack, location(l.CallPaths[n-1].Region))
				}
				p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{int64(c.Visits), t.TicksToNanos(c.Exclusive)}, Label: label})
			}
			continue
		}
		for _, e := range l.Profile {
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{location(e.Region)}, Value: []int64{int64(e.Visits), t.TicksToNanos(e.Exclusive)}, Label: label})
		}
	}
	if err := p.CheckValid(); err != nil {
		http.Error(w, "building the profile: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="hmbtrace.pb.gz"`)
	p.Write(w)
}

// PhasesJSON is what /phases serves.
type PhasesJSON struct {
	Region    string              `json:"region"` // the phase region
	Locations []PhaseLocationJSON `json:"locations"`
}

// PhaseLocationJSON is one location's series.
type PhaseLocationJSON struct {
	Name       string            `json:"name"`
	Width      uint64            `json:"width"` // iterations per sample
	Iterations uint64            `json:"iterations"`
	Samples    []PhaseSampleJSON `json:"samples"`
}

// PhaseSampleJSON is one sample: per region name, its figures.
type PhaseSampleJSON map[string]PhaseEntryJSON

// PhaseEntryJSON is a region's figures in a sample, times in ns.
type PhaseEntryJSON struct {
	Visits      uint64            `json:"visits"`
	InclusiveNs int64             `json:"inclusive_ns"`
	ExclusiveNs int64             `json:"exclusive_ns"`
	Counters    map[string]uint64 `json:"counters,omitempty"` // inclusive sums
}

func (h *handler) phases(w http.ResponseWriter, t *tracefile.Trace) {
	out := PhasesJSON{Locations: []PhaseLocationJSON{}}
	for _, l := range t.Locations {
		ps := l.Phase
		if ps == nil {
			continue
		}
		out.Region = t.RegionName(ps.Region)
		pl := PhaseLocationJSON{Name: l.Name, Width: ps.Width, Iterations: ps.Iterations, Samples: []PhaseSampleJSON{}}
		for _, s := range ps.Samples {
			js := PhaseSampleJSON{}
			for _, e := range s.Entries {
				je := PhaseEntryJSON{Visits: e.Visits, InclusiveNs: t.TicksToNanos(e.Inclusive), ExclusiveNs: t.TicksToNanos(e.Exclusive)}
				for i, v := range e.CounterInclusive {
					if i < len(t.Header.Metrics) {
						if je.Counters == nil {
							je.Counters = map[string]uint64{}
						}
						je.Counters[t.Header.Metrics[i]] = v
					}
				}
				js[t.RegionName(e.Region)] = je
			}
			pl.Samples = append(pl.Samples, js)
		}
		out.Locations = append(out.Locations, pl)
	}
	writeJSON(w, out)
}

// StatsJSON is what /stats serves.
type StatsJSON struct {
	Elapsed     string              `json:"elapsed"`
	Recorded    uint64              `json:"recorded"` // as last published by the locations
	Filtered    uint64              `json:"filtered"`
	BinsInUse   int                 `json:"bins_in_use"`
	BinsPeak    int                 `json:"bins_peak"`
	Bins        int                 `json:"bins"`
	BinSize     uint64              `json:"bin_size"`
	Policy      string              `json:"policy"`
	MinDuration string              `json:"min_duration"`
	Reductions  []ReductionJSON     `json:"reductions"`
	Locations   []LocationStatsJSON `json:"locations"`
}

// ReductionJSON is one reduction step.
type ReductionJSON struct {
	Reason  string `json:"reason"`
	Depth   int    `json:"depth,omitempty"`
	Class   string `json:"class,omitempty"`
	AtNs    int64  `json:"at_ns"`
	Bins    int    `json:"bins"`
	Records uint64 `json:"records"`
	Steps   int    `json:"steps"`
}

// LocationStatsJSON is one location's counts.
type LocationStatsJSON struct {
	Name     string `json:"name"`
	Recorded uint64 `json:"recorded"`
	Filtered uint64 `json:"filtered"`
}

func (h *handler) stats(w http.ResponseWriter, t *tracefile.Trace) {
	used, peak, total := h.m.BinsInUse()
	out := StatsJSON{Elapsed: time.Duration(t.Duration()).String(), BinsInUse: used, BinsPeak: peak, Bins: total,
		BinSize: t.Header.BinSize, Policy: t.Header.Policy, MinDuration: time.Duration(t.Header.MinDuration).String(),
		Reductions: []ReductionJSON{}, Locations: []LocationStatsJSON{}}
	for _, r := range t.Reductions {
		j := ReductionJSON{Reason: r.Reason.String(), AtNs: t.Nanos(r.Time), Bins: r.Bins, Records: r.Records, Steps: r.Steps}
		switch r.Reason {
		case tracefile.ByDepth:
			j.Depth = r.Depth
		case tracefile.ByClass:
			j.Class = r.Class.String()
		}
		out.Reductions = append(out.Reductions, j)
	}
	for _, l := range t.Locations {
		out.Recorded += l.Recorded
		out.Filtered += l.FilteredName
		out.Locations = append(out.Locations, LocationStatsJSON{Name: l.Name, Recorded: l.Recorded, Filtered: l.FilteredName})
	}
	writeJSON(w, out)
}
