package waitstate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// WriteText prints the pattern totals (time, share of the run, instances)
// and the worst top waits with the delay that caused each.
func WriteText(w io.Writer, r *Result, top int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Wait states over %d locations, %s of run time in all", len(r.Locations), ms(r.Total))
	if !r.Synced && len(r.Locations) > 1 {
		fmt.Fprint(w, " (clocks aligned by wall-clock start only: waits between ranks are approximate)")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "time\tshare\tinstances\t\tpattern\t")
	for p := Pattern(0); p < NumPatterns; p++ {
		name := p.String()
		if _, ok := p.Parent(); ok {
			name = "  " + name
		}
		fmt.Fprintf(tw, "%s\t%.2f%%\t%d\t\t%s\t\n", ms(r.Totals[p]), 100*r.Share(p), r.Counts[p], name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := r.UnmatchedRecvs + r.UnmatchedSends + r.UnmatchedCollectives + r.Unresolved; n > 0 {
		fmt.Fprintf(w, "not replayed: %d receives and %d sends without their other end, %d collectives with a member missing, %d messages to no location of the files\n",
			r.UnmatchedRecvs, r.UnmatchedSends, r.UnmatchedCollectives, r.Unresolved)
	}
	if r.ClockViolations > 0 {
		fmt.Fprintf(w, "%d messages received before their send was entered (clock condition violated): their waits are clipped\n", r.ClockViolations)
	}
	if err := writeCriticalPath(w, r, top); err != nil {
		return err
	}
	if top == 0 || len(r.Worst) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Worst waits:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "wait\tpattern\tregion\tlocation\tat\tlate\tdelay")
	for i, in := range r.Worst {
		if top > 0 && i >= top {
			break
		}
		delay := "-"
		if d := in.Delay; d != nil {
			delay = fmt.Sprintf("%s in %s", ms(d.Time), textname.Escape(d.Region))
			if d.Work != nil {
				delay += fmt.Sprintf("; %s of work since its previous sync, most in %s", ms(*d.Work), textname.Escape(d.WorkRegion))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ms(in.Time), in.Pattern, textname.Escape(in.Region),
			textname.Escape(r.describe(in.Loc)), ms(in.Start), textname.Escape(r.describe(in.Peer)), delay)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Delays) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "During the waits (each charged to what the late party did meanwhile):")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "time\tcaused\tregion\tlocation")
		byCost := append([]Value(nil), r.Delays...)
		sortByTime(byCost)
		for i, v := range byCost {
			if top > 0 && i >= top {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ms(v.Time), v.Pattern, textname.Escape(v.Region), textname.Escape(r.describe(v.Loc)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return writeDelayCosts(w, r, top)
}

// writeDelayCosts prints the delay costs by cause, largest first: short-
// and long-term cost per (pattern, call path, location).
func writeDelayCosts(w io.Writer, r *Result, top int) error {
	causes := r.Causes()
	if len(causes) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Delay costs (Böhme et al.: the waits each call path caused, directly and through the waits they propagated into):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "cost\tshort-term\tlong-term\tcaused\tcall path\tlocation")
	for i, c := range causes {
		if top > 0 && i >= top {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ms(c.Short+c.Long), ms(c.Short), ms(c.Long), c.Pattern,
			textname.Escape(r.PathName(c.Path)), textname.Escape(r.describe(c.Loc)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.DelayUnexplained > 0 {
		fmt.Fprintf(w, "%s of waiting time found no delay on its late party (no excess, no wait of its own in the interval)\n", ms(r.DelayUnexplained))
	}
	return nil
}

// writeCriticalPath prints the critical path's length and its profile by
// region with the imbalance, then where on the locations most of it ran
// (top rows each; all for top < 0).
func writeCriticalPath(w io.Writer, r *Result, top int) error {
	cp := r.CriticalPath
	if cp == nil || cp.Length <= 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Critical path: %s, ends on %s, %s (a wait hands it to the party waited for)\n", ms(cp.Length),
		textname.Escape(r.describe(cp.Last)), units.Plural(cp.Hops, "hop", "hops"))
	rows := func(n int) int {
		if top < 0 {
			return n
		}
		return min(n, max(top, 3))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "on path\tshare\tmean per location\timbalance\t\tregion\t")
	for _, g := range cp.Regions[:rows(len(cp.Regions))] {
		fmt.Fprintf(tw, "%s\t%.1f%%\t%s\t%s\t\t%s\t\n", ms(g.Path), 100*float64(g.Path)/float64(cp.Length), ms(g.Mean), ms(g.Imbalance), textname.Escape(g.Region))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	byTime := slices.Clone(cp.Values)
	slices.SortStableFunc(byTime, func(a, b PathTime) int { return cmp.Compare(b.Time, a.Time) })
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "on path\tcall path\tlocation")
	for _, v := range byTime[:rows(len(byTime))] {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", ms(v.Time), textname.Escape(r.PathName(v.Path)), textname.Escape(r.describe(v.Loc)))
	}
	return tw.Flush()
}

// ms prints a duration in ns with a unit that fits it.
func ms(ns int64) string { return units.Duration(float64(ns)) }

// jsonResult is the -json form of a Result: patterns by metric name.
type jsonResult struct {
	Locations []Location        `json:"locations"`
	Paths     []CallPath        `json:"call_paths"`
	TotalNs   int64             `json:"total_ns"`
	Synced    bool              `json:"synced"`
	Patterns  []jsonPattern     `json:"patterns"`
	Worst     []jsonInstance    `json:"worst"`
	Delays    []jsonValue       `json:"delays"`
	Skipped   map[string]uint64 `json:"not_replayed"`
	Critical  *CriticalPath     `json:"critical_path,omitempty"`
	Costs     []jsonDelayCost   `json:"delay_costs"`
	// Unexplained is the waiting time without a delay, ns.
	Unexplained int64 `json:"delay_unexplained_ns"`
}

type jsonDelayCost struct {
	Metric string `json:"metric"` // the pattern of the waits caused
	DelayCost
}

type jsonPattern struct {
	Metric    string      `json:"metric"`
	Name      string      `json:"name"`
	Parent    string      `json:"parent,omitempty"`
	TimeNs    int64       `json:"time_ns"`
	Share     float64     `json:"share"`
	Instances int         `json:"instances"`
	Values    []jsonValue `json:"values"`
}

type jsonValue struct {
	Metric string `json:"metric,omitempty"`
	Region string `json:"region"`
	Path   *int   `json:"call_path,omitempty"` // an index of call_paths
	Loc    int    `json:"location"`
	TimeNs int64  `json:"time_ns"`
	Count  int    `json:"count"`
}

type jsonInstance struct {
	Metric  string `json:"metric"`
	Region  string `json:"region"`
	Path    int    `json:"call_path"`
	Loc     int    `json:"location"`
	StartNs int64  `json:"start_ns"`
	TimeNs  int64  `json:"time_ns"`
	Late    int    `json:"late_location"`
	Delay   *Delay `json:"delay,omitempty"`
}

// WriteJSON writes r as one JSON object.
func WriteJSON(w io.Writer, r *Result) error {
	j := jsonResult{Locations: r.Locations, Paths: r.Paths, TotalNs: r.Total, Synced: r.Synced, Patterns: []jsonPattern{}, Worst: []jsonInstance{}, Delays: []jsonValue{},
		Skipped: map[string]uint64{"receives": r.UnmatchedRecvs, "sends": r.UnmatchedSends, "collectives": r.UnmatchedCollectives,
			"unresolved": r.Unresolved, "clock_violations": r.ClockViolations}, Critical: r.CriticalPath}
	for p := Pattern(0); p < NumPatterns; p++ {
		jp := jsonPattern{Metric: p.Metric(), Name: p.String(), TimeNs: r.Totals[p], Share: r.Share(p), Instances: r.Counts[p], Values: []jsonValue{}}
		if q, ok := p.Parent(); ok {
			jp.Parent = q.Metric()
		}
		for _, v := range r.Pattern(p) {
			path := v.Path
			jp.Values = append(jp.Values, jsonValue{Region: v.Region, Path: &path, Loc: v.Loc, TimeNs: v.Time, Count: v.Count})
		}
		j.Patterns = append(j.Patterns, jp)
	}
	for _, in := range r.Worst {
		j.Worst = append(j.Worst, jsonInstance{Metric: in.Pattern.Metric(), Region: in.Region, Path: in.Path, Loc: in.Loc, StartNs: in.Start, TimeNs: in.Time, Late: in.Peer, Delay: in.Delay})
	}
	for _, v := range r.Delays {
		j.Delays = append(j.Delays, jsonValue{Metric: v.Pattern.Metric(), Region: v.Region, Loc: v.Loc, TimeNs: v.Time, Count: v.Count})
	}
	j.Costs, j.Unexplained = []jsonDelayCost{}, r.DelayUnexplained
	for _, c := range r.DelayCosts {
		j.Costs = append(j.Costs, jsonDelayCost{c.Pattern.Metric(), c})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// WriteInSitu prints the wait states the ranks of a run replayed in-situ
// (InSitu.Result), from the archive at path: everything WriteText prints
// (the patterns, the critical path, the worst waits, the delays and the
// delay costs), then the top (pattern, call path, location) values by
// time.
func WriteInSitu(w io.Writer, r *Result, path string, top int) error {
	fmt.Fprintf(w, "In-situ: replayed by the ranks at MPI_Finalize, each on its own events (%s)\n", path)
	if err := WriteText(w, r, top); err != nil {
		return err
	}
	if top != 0 && len(r.Values) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Where they waited most:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "time\tinstances\tpattern\tcall path\tlocation")
		byTime := append([]Value(nil), r.Values...)
		sortByTime(byTime)
		for i, v := range byTime {
			if top > 0 && i >= top {
				break
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", ms(v.Time), v.Count, v.Pattern, textname.Escape(r.PathName(v.Path)), textname.Escape(r.describe(v.Loc)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if r.DelayIncomplete > 0 {
		fmt.Fprintf(w, "\n%d waits' costs never reached their late party (a rank failed in the replay): the delay costs lack them\n", r.DelayIncomplete)
	}
	if r.CriticalPath == nil && len(r.Values) > 0 {
		// An archive of a version that replayed forward only.
		_, err := fmt.Fprintln(w, "\nThe critical path, the delays and the worst waits were not replayed in-situ: hmbtrace waitstate without -insitu, on a run written with its events")
		return err
	}
	return nil
}
