package summary

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// RunRanks is the most ranks of a run the summary tells one by one (each
// rank's file, facts and buffer); the summary of a run of more tells the
// run as a whole (WriteRun), unless Options.Ranks asks for each rank.
const RunRanks = 4

// runOf reports whether files are the ranks of one run that the summary
// tells as a whole: more than RunRanks files of one run name, no rank
// twice.
func runOf(files []*tracefile.File) bool {
	if len(files) <= RunRanks {
		return false
	}
	for _, f := range files[1:] {
		if f.Header.Name != files[0].Header.Name {
			return false
		}
	}
	_, _, same := tracefile.SameRank(files)
	return !same
}

// Reduce returns the run profile of the files, each one rank: LocalFile of
// each, merged in order. Only one rank's tables are held at a time beside
// the run's.
func Reduce(files []*tracefile.File) RunProfile {
	var p RunProfile
	for _, f := range files {
		l := LocalFile(f)
		p.Merge(&l)
	}
	return p
}

// WriteRun writes the summary of a run from its profile alone: the run's
// facts, its profile with the spread over the ranks, the counters and one
// story of the run's buffers. It is what the summary of the files of a run
// of more than RunRanks ranks prints, less what only the files say (notes
// on single files, the annotations).
func WriteRun(out io.Writer, p *RunProfile, opt Options) error {
	writeRun(out, p, nil, opt)
	return nil
}

// writeRun writes the run's summary from p, and the notes that need the
// files where there are files.
func writeRun(out io.Writer, p *RunProfile, files []*tracefile.File, opt Options) {
	width := opt.NameWidth
	if width == 0 {
		width = DefaultNameWidth
	}
	rows := runRows(p)
	shortNames(rows, width)
	runFactsOf(out, p)
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Regions (flat profile over all locations of the %d ranks; %% of the run's location-time)\n", p.Ranks.Len())
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "visits\tinclusive\texclusive\t%s\t%s\t  region\n", "%incl", "%excl")
	total := float64(p.Facts.LocationTime)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t  %s%s\n", units.Count(uint64(r.Visits.Sum)), units.Duration(float64(r.Inclusive.Sum)), units.Duration(float64(r.Exclusive.Sum)),
			units.Share(float64(r.Inclusive.Sum), total), units.Share(float64(r.Exclusive.Sum), total), r.label(width), r.mark())
	}
	tw.Flush()
	throttled := slices.ContainsFunc(rows, func(r runRow) bool { return r.Throttled })
	if throttled {
		fmt.Fprintln(out, "  [throttled]: switched off during the run (HMB_THROTTLE); visits count every call, the times only the timed ones")
	}
	if files != nil {
		overRunOfRun(out, files)
		throttling(out, files, width)
	}

	fmt.Fprintln(out)
	fmt.Fprintf(out, "Regions per rank (inclusive time over %d ranks, 0 on a rank that never entered the region; max/mean 1.00 is perfect balance)\n", p.Ranks.Len())
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "min\tmean\tmax\tmax/mean\tslowest rank\tranks\t  region\n")
	for _, r := range rows {
		lo, mean, hi := p.Spread(r.Inclusive, r.Ranks)
		ratio := "-"
		if mean > 0 {
			ratio = fmt.Sprintf("%.2f", float64(hi)/mean)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t  %s%s\n", units.Duration(float64(lo)), units.Duration(mean), units.Duration(float64(hi)), ratio,
			p.SlowestRank(r.RegionStats), r.Ranks, r.label(width), r.mark())
	}
	tw.Flush()
	if throttled {
		fmt.Fprintln(out, "  [throttled]: each rank timed the visits before it switched the region off, so its times do not measure balance")
	}

	if files != nil {
		countersMissingOfRun(out, files)
	}
	runCounters(out, rows, width)
	if files != nil {
		countersReadOfRun(out, files)
		annotations(out, files)
	}
	runBuffer(out, p, opt.InSitu)
}

// runRow is a region of the run's profile as the tables print it.
type runRow struct {
	*RegionStats
	shared bool   // another region of another paradigm has its name
	short  string // the name in the tables' width (shortNames)
}

// shortNames sets each row's short name: one a user can tell from the
// others' (textname.Distinct).
func shortNames(rows []runRow, width int) {
	names := make([]string, len(rows))
	for i := range rows {
		names[i] = rows[i].Name
	}
	for i, s := range textname.Distinct(names, width) {
		rows[i].short = s
	}
}

// label is the row's name as the tables print it; width is that of
// shortNames, which must have run.
func (r runRow) label(int) string {
	name := r.short
	if r.shared {
		// As the tools label the run's regions (RunDefinitions.RegionLabels).
		src := tracefile.Region{File: r.File, Line: r.Line, Paradigm: r.Paradigm}
		name += " (" + textname.Escape(src.Source()) + ")"
	}
	return name
}

func (r runRow) mark() string {
	if !r.Throttled {
		return ""
	}
	if r.VisitsAfter == 0 {
		return "  [throttled]"
	}
	return fmt.Sprintf("  [throttled: %s of the visits timed]", units.Count(uint64(r.Visits.Sum)-r.VisitsAfter))
}

// runRows returns the profile's regions most exclusive time first, as the
// flat profile orders them.
func runRows(p *RunProfile) []runRow {
	rows := make([]runRow, len(p.Regions))
	for i := range p.Regions {
		rows[i].RegionStats = &p.Regions[i]
		// Regions are sorted by name, so those sharing one are adjacent.
		rows[i].shared = i > 0 && p.Regions[i-1].Name == p.Regions[i].Name || i+1 < len(p.Regions) && p.Regions[i+1].Name == p.Regions[i].Name
	}
	slices.SortStableFunc(rows, func(a, b runRow) int {
		if c := cmp.Compare(b.Exclusive.Sum, a.Exclusive.Sum); c != 0 {
			return c
		}
		return cmp.Compare(textname.Escape(a.Name), textname.Escape(b.Name))
	})
	return rows
}

// ranksText lists a rank set as ranges, at most max of them: the rest
// are counted.
func ranksText(s RankSet, most int) string {
	var parts []string
	for i, r := range s {
		if i == most {
			parts = append(parts, fmt.Sprintf("… %d ranges more", len(s)-most))
			break
		}
		if r.First == r.Last {
			parts = append(parts, fmt.Sprint(r.First))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
	}
	return strings.Join(parts, ", ")
}

// namesText lists names, at most most of them, escaped.
func namesText(names []string, most int) string {
	var parts []string
	for i, n := range names {
		if i == most {
			parts = append(parts, fmt.Sprintf("… %d more", len(names)-most))
			break
		}
		parts = append(parts, textname.Escape(n))
	}
	return strings.Join(parts, ", ")
}

// spanText words a quantity that may differ between ranks: "v" or "lo to hi".
func spanText(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + " to " + hi
}

// runFactsOf writes the run's facts: its name, ranks, hosts and clocks.
func runFactsOf(out io.Writer, p *RunProfile) {
	f := &p.Facts
	start := "start unknown"
	if f.Start != 0 {
		start = "started " + time.Unix(0, f.Start).Format("2006-01-02 15:04:05 MST")
	}
	fmt.Fprintf(out, "Run %s: %s (%s) on %s (%s), %s, %s\n", namesText(f.Names, 3), units.Plural(p.Ranks.Len(), "rank", "ranks"), ranksText(p.Ranks, 4),
		units.Plural(len(f.Hosts), "host", "hosts"), namesText(f.Hosts, 3), start, units.Plural(int(f.Locations), "location", "locations"))
	_, mean, _ := p.Spread(f.Duration, p.Ranks.Len())
	fmt.Fprintf(out, "  measured %s per rank (mean %s)\n", spanText(units.Duration(float64(f.Duration.Min)), units.Duration(float64(f.Duration.Max))), units.Duration(mean))
	// Each rank keeps timestamps to 2^shift ticks; the bounds are exact
	// when the ranks share a shift.
	res := func(shift uint8, rate float64) string {
		if rate <= 0 {
			rate = 1e9
		}
		return units.Duration(float64(uint64(1)<<shift) * 1e9 / rate)
	}
	fmt.Fprintf(out, "  clock %s at %s, timestamps kept to %s (shift %s); probe cost %s ns/event\n",
		strings.Join(f.Clocks, ", "), spanText(units.Rate(f.MinRate), units.Rate(f.MaxRate)), spanText(res(f.MinShift, f.MaxRate), res(f.MaxShift, f.MinRate)),
		spanText(fmt.Sprint(f.MinShift), fmt.Sprint(f.MaxShift)), spanText(fmt.Sprintf("%.1f", f.MinProbeCost), fmt.Sprintf("%.1f", f.MaxProbeCost)))
	fmt.Fprintln(out, "  hmbtrace summary -ranks tells each rank: its file, facts, regions and buffer")
}

// overRunOfRun is overRun for the ranks of a run: how many ranks have a
// region lasting longer than their run, and the longest of them.
func overRunOfRun(out io.Writer, files []*tracefile.File) {
	n := 0
	var worst, worstRun int64
	var where, what, path string
	for _, f := range files {
		run := f.Duration()
		fw, fl, fr := longestRegion(f)
		if float64(fw-run) > 2*f.Resolution() {
			n++
			if fw-run > worst-worstRun || n == 1 {
				worst, worstRun, where, what, path = fw, run, fl, fr, f.Path
			}
		}
	}
	if n > 0 {
		fmt.Fprintf(out, "  note: %s hold events outside the measurement's start and end, regions lasting longer than the rank's run; most: %s on %s of %s lasts %s, the run %s\n",
			units.Plural(n, "rank", "ranks"), textname.Escape(what), textname.Escape(where), path, units.Duration(float64(worst)), units.Duration(float64(worstRun)))
	}
}

// countersMissingOfRun is counterTable's notes for the ranks of a run: each
// distinct reason once, with how many ranks or locations gave it.
func countersMissingOfRun(out io.Writer, files []*tracefile.File) {
	type note struct {
		ranks, locs int
		first       string
	}
	notes := map[string]*note{}
	var order []string
	add := func(what, path string, loc bool) {
		nt := notes[what]
		if nt == nil {
			nt = &note{first: path}
			notes[what] = nt
			order = append(order, what)
		}
		if loc {
			nt.locs++
		} else {
			nt.ranks++
		}
	}
	for _, f := range files {
		for _, m := range f.Header.MetricsMissing {
			add("recorded without "+m, f.Path, false)
		}
		seen := map[string]bool{}
		for i := range f.Locations {
			if l := &f.Locations[i]; l.CountersMissing != "" {
				add("read no counters: "+l.CountersMissing, f.Path, true)
				if !seen[l.CountersMissing] {
					seen[l.CountersMissing] = true
					notes["read no counters: "+l.CountersMissing].ranks++
				}
			}
		}
	}
	for _, what := range order {
		nt := notes[what]
		who := units.Plural(nt.ranks, "rank", "ranks")
		if nt.locs > 0 {
			who = units.Plural(nt.locs, "location", "locations") + " of " + who
		}
		fmt.Fprintf(out, "\n%s (%s first): %s", who, nt.first, what)
	}
}

// countersReadOfRun says how the ranks read their counters.
func countersReadOfRun(out io.Writer, files []*tracefile.File) {
	byPath := map[string]int{}
	var paths []string
	mux := 0
	for _, f := range files {
		if p := f.Header.MetricsPath; p != "" {
			if byPath[p] == 0 {
				paths = append(paths, p)
			}
			byPath[p]++
		}
		for i := range f.Locations {
			if f.Locations[i].Multiplexed {
				mux++
			}
		}
	}
	for i, p := range paths {
		fmt.Fprintf(out, "  counters read with %s on %s", p, units.Plural(byPath[p], "rank", "ranks"))
		if i == len(paths)-1 && mux > 0 {
			fmt.Fprintf(out, "; multiplexed and extrapolated on %s", units.Plural(mux, "location", "locations"))
		}
		fmt.Fprintln(out)
	}
}

// runCounters is counterTable of the run's profile: the metrics by name.
func runCounters(out io.Writer, rows []runRow, width int) {
	var metrics []string
	for _, r := range rows {
		for _, c := range r.Counters {
			metrics = unionStrings(metrics, []string{c.Metric})
		}
	}
	if len(metrics) == 0 {
		return
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Counters per region (inclusive / exclusive, summed over the ranks)")
	ipc := slices.Contains(metrics, "instructions") && slices.Contains(metrics, "cycles")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, m := range metrics {
		fmt.Fprintf(tw, "%s\t", m)
	}
	if ipc {
		fmt.Fprint(tw, "IPC\t")
	}
	fmt.Fprint(tw, "  region\n")
	for _, r := range rows {
		if len(r.Counters) == 0 {
			continue
		}
		sums := map[string]CounterSums{}
		for _, c := range r.Counters {
			sums[c.Metric] = c
		}
		for _, m := range metrics {
			fmt.Fprintf(tw, "%s / %s\t", units.Count(sums[m].Inclusive), units.Count(sums[m].Exclusive))
		}
		if ipc {
			if c := sums["cycles"].Inclusive; c > 0 {
				fmt.Fprintf(tw, "%.2f\t", float64(sums["instructions"].Inclusive)/float64(c))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, "  %s\n", r.label(width))
	}
	tw.Flush()
}

// runBuffer tells the story of the run's buffers once: the sums, the rank
// that kept least, the ranks that reduced. With inSitu it says that the
// story is as the buffers stood at the collective end, which the files'
// events after it (MPI_Finalize's leave) are not in.
func runBuffer(out io.Writer, p *RunProfile, inSitu bool) {
	b := &p.Buffer
	n := p.Ranks.Len()
	when := ""
	if inSitu {
		when = " at the collective end in MPI_Finalize"
	}
	fmt.Fprintf(out, "\nBuffers of the run%s (%s, summed): %s in bins of %s per rank, reduction policy %s\n", when, units.Plural(n, "rank", "ranks"),
		spanText(units.Size(float64(b.BufferSize.Min)), units.Size(float64(b.BufferSize.Max))),
		spanText(units.Size(float64(b.BinSize.Min)), units.Size(float64(b.BinSize.Max))), strings.Join(b.Policies, ", "))
	fmt.Fprintf(out, "  events recorded  %s\n", units.Count(b.Recorded))
	fmt.Fprintf(out, "  events kept      %s (%s)", units.Count(b.Kept), units.Share(float64(b.Kept), float64(b.Recorded)))
	if b.Bins > 0 {
		fmt.Fprintf(out, ", %s in %d bins", units.Size(float64(b.Bytes)), b.Bins)
		if b.Kept > 0 {
			fmt.Fprintf(out, ", %.2f bytes/event", float64(b.Bytes)/float64(b.Kept))
		}
	} else if b.Kept > 0 {
		// Kept in the buffer, yet in no bin of the files.
		fmt.Fprint(out, ", not written: the run kept its results only (HMB_OUTPUT_EVENTS=none)")
	}
	fmt.Fprintln(out)
	if b.KeptByClass[tracefile.ClassRegion] != b.Kept {
		var parts []string
		for c, v := range b.KeptByClass {
			if v > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", tracefile.Class(c), units.Count(v)))
			}
		}
		fmt.Fprintf(out, "    by class       %s\n", strings.Join(parts, ", "))
	}
	if filtered := b.FilteredName + b.FilteredDuration; filtered > 0 {
		fmt.Fprintf(out, "  events filtered  %s; %s by name, %s of short calls\n", units.Count(filtered), units.Count(b.FilteredName), units.Count(b.FilteredDuration))
	}
	var parts []string
	for r, v := range b.Removed {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", tracefile.Reason(r), units.Count(v)))
		}
	}
	fmt.Fprintf(out, "  events removed   %s", units.Count(b.Removed.Total()))
	if len(parts) > 0 {
		fmt.Fprintf(out, " (by %s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(out)
	if w := b.Worst; n > 0 && w.Kept < w.Recorded {
		fmt.Fprintf(out, "  least kept       rank %d: %s of its %s events\n", w.Rank, units.Share(float64(w.Kept), float64(w.Recorded)), units.Count(w.Recorded))
	}
	if r := b.Unbalanced; len(r) > 0 {
		fmt.Fprintf(out, "  WARNING: recorded != kept + filtered + removed on %s (%s)\n", units.Plural(r.Len(), "rank", "ranks"), ranksText(r, 6))
	}
	if r := b.Recovered; len(r) > 0 {
		fmt.Fprintf(out, "  RECOVERED        %s (%s) by hmbtrace recover from the mappings left: their events recorded, filtered and dropped are lower bounds (%s more were published as recorded), their profiles built from the kept events, their runs at least as long as their last record or reduction\n",
			units.Plural(r.Len(), "rank", "ranks"), ranksText(r, 6), units.Count(b.Unaccounted))
		if d := b.Died; len(d) > 0 {
			fmt.Fprintf(out, "  ended unseen     %s (%s) died without a handler seeing a signal: SIGKILL, the OOM killer, a crash or _exit (hmbtrace summary -ranks says each rank's end)\n",
				units.Plural(d.Len(), "rank", "ranks"), ranksText(d, 6))
		}
	}
	if b.Interrupted > 0 {
		what := "the traces were written (a caught signal, or a probe under way past Close's wait)"
		if len(b.Died) > 0 {
			what = "the run ended (a caught signal, or a death no handler saw on the ranks above)"
		}
		fmt.Fprintf(out, "  %s still running when %s: their last event may be uncounted, their open regions stay open\n",
			units.Plural(int(b.Interrupted), "location was", "locations were"), what)
	}
	if len(b.Reduced) == 0 {
		fmt.Fprintln(out, "  reductions       none: the whole run fit on every rank")
	} else {
		var steps []string
		var total uint64
		for r, v := range b.Steps {
			if v > 0 {
				steps = append(steps, fmt.Sprintf("%s %s", tracefile.Reason(r), units.Count(v)))
				total += v
			}
		}
		fmt.Fprintf(out, "  reductions       on %d of %d ranks (%s): %s steps (by %s)\n", b.Reduced.Len(), n, ranksText(b.Reduced, 6),
			units.Count(total), strings.Join(steps, ", "))
		if b.Windowed > 0 {
			fmt.Fprintf(out, "    keep-last: %s complete only from a time on\n", units.Plural(int(b.Windowed), "location", "locations"))
		}
	}
	if len(b.Depths) > 0 {
		fmt.Fprintln(out, "  per depth:")
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "    depth\tkept\tremoved\t\t")
		for _, d := range b.Depths {
			removed := d.Removed.Total()
			if d.Kept == 0 && removed == 0 {
				continue
			}
			note := ""
			switch {
			case d.ClosedRanks == n:
				note = "closed"
			case d.ClosedRanks > 0:
				note = fmt.Sprintf("closed on %s", units.Plural(d.ClosedRanks, "rank", "ranks"))
			}
			fmt.Fprintf(tw, "    %d\t%s\t%s\t%s\t\n", d.Depth, units.Count(d.Kept), units.Count(removed), note)
		}
		tw.Flush()
	}
	for i, t := range p.Throttled {
		if i == 0 {
			fmt.Fprintln(out, "  throttled        regions switched off by HMB_THROTTLE (visits after it counted, not timed):")
		}
		fmt.Fprintf(out, "    %s on %d of %d ranks, %s, first at %s: %s visits timed before, %s after\n", textname.Escape(t.Name), t.Ranks, n,
			units.Plural(int(t.Locations), "location", "locations"), units.Duration(float64(t.FirstAt)), units.Count(t.Visits), units.Count(t.VisitsAfter))
	}
	if m := b.Messages; m.Locations > 0 {
		fmt.Fprintf(out, "  messages         sent %s (%s), received %s (%s); exact, counted at the probe on %s\n",
			units.Count(m.Sent), units.Size(float64(m.SentBytes)), units.Count(m.Received), units.Size(float64(m.ReceivedBytes)),
			units.Plural(int(m.Locations), "location", "locations"))
		if m.Shed > 0 {
			fmt.Fprintf(out, "    the buffers shed %s message events; the counts above include their messages\n", units.Count(m.Shed))
		}
	} else if m.Shed > 0 {
		fmt.Fprintf(out, "  messages         the buffers shed %s message events\n", units.Count(m.Shed))
	}
	if total := b.Usage.Total(); total == 0 {
		fmt.Fprintln(out, "  usage errors     none")
	} else {
		fmt.Fprintf(out, "  usage errors     %s:", units.Count(total))
		for _, u := range b.Usage.Counts() {
			if u.N > 0 {
				fmt.Fprintf(out, " %s %s;", units.Count(u.N), u.What)
			}
		}
		fmt.Fprintln(out)
	}
}
