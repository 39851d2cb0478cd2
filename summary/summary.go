// Package summary writes the text summary of trace files: the run's facts,
// the flat profile of its regions, and the buffer's story (what was kept,
// removed and reduced, and the usage errors). hmbtrace summary and the
// examples print it.
//
// It also owns the run profile (RunProfile): the summary of a run as a
// whole, from the ranks' statistics alone (flat profiles with their spread
// over the ranks, the buffers' story, the throttled regions), which ranks
// merge in any order (Local, Merge) and which encodes as a section of a
// run's results (MarshalBinary). The summary of a run of more than
// RunRanks ranks prints it (WriteRun) in place of each rank's story.
package summary

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// regionRow is a region's line of the profile, over all files and locations.
type regionRow struct {
	name   string // escaped (textname.Escape)
	short  string // name in the tables' width, told apart from the others'
	visits uint64 // timed visits: the flat profile's
	// after are the visits counted but not timed once the probes had
	// switched the region off (HMB_THROTTLE), on any location: its times
	// then cover only the visits before, and differ by rank with when each
	// rank switched it off.
	after      uint64
	throttled  bool
	incl, excl int64   // ns
	inclByFile []int64 // ns, by index in the files: for the per-rank table
	// counter sums by metric name, for regions that read counters
	cincl, cexcl map[string]uint64
}

// DefaultNameWidth is how many characters of a region's name the tables
// print by default: with the numbers before it, a line stays within about
// 120 columns.
const DefaultNameWidth = 60

// Options are the summary's settings; the zero value means the defaults.
type Options struct {
	// NameWidth is the longest region name the tables print, in
	// characters; a longer one loses its parameters, template arguments,
	// qualifiers, then its middle, never its own name (textname.Distinct).
	// 0 means DefaultNameWidth, a negative value full names.
	NameWidth int
	// Ranks tells each rank of a run of more than RunRanks ranks as the
	// summary of a few does (its file's facts, its regions per rank, its
	// buffer's story) rather than the run as a whole.
	Ranks bool
	// InSitu tells WriteRun that the profile is the one the ranks of an
	// MPI run reduced at its collective end (a run archive's results):
	// the story of the buffers says it is as they stood then.
	InSitu bool
}

// Write writes the summary of the files, which may be the ranks of one run
// or unrelated runs: regions are the run's (tracefile.ReadUnified).
func Write(out io.Writer, files []*tracefile.File) error {
	return WriteOptions(out, files, Options{})
}

// profile merges the flat profiles of the files, a row per region of the
// run (tracefile.ReadUnified: a region is its name, source location and
// paradigm, never its name alone), and returns the rows, most exclusive
// time first, and the run's location-time in ns. Regions of the run that
// share a name are told apart by their source (RunDefinitions.RegionLabels).
// inclByFile is filled when perFile is set: it takes a value per region
// and file, which only the per-rank table of a few ranks needs.
func profile(files []*tracefile.File, perFile bool) ([]*regionRow, int64, error) {
	u, err := tracefile.ReadUnified(files)
	if err != nil {
		return nil, 0, err
	}
	var totalNs int64 // location-time: each location counts the whole run
	// A region id a file does not define is keyed by the name the tools
	// give it (region#id), as it has no other.
	type rowKey struct {
		region uint32
		name   string
	}
	rows := map[rowKey]*regionRow{}
	labels := u.Defs.RegionLabels()
	for fi, f := range files {
		dur := f.Duration()
		totalNs += dur * int64(len(f.Locations))
		for _, l := range f.Locations {
			for _, p := range l.Profile {
				_, id := u.Region(fi, p.Region)
				k := rowKey{region: id}
				if id == 0 {
					k.name = f.RegionName(p.Region)
				}
				r := rows[k]
				if r == nil {
					r = &regionRow{name: textname.Escape(k.name)}
					if id != 0 {
						r.name = textname.Escape(labels[id-1])
					}
					if perFile {
						r.inclByFile = make([]int64, len(files))
					}
					rows[k] = r
				}
				incl := f.TicksToNanos(p.Inclusive)
				r.visits += p.Visits
				if p.Throttled {
					r.throttled = true
					r.after += p.VisitsAfter
				}
				r.incl += incl
				if perFile {
					r.inclByFile[fi] += incl
				}
				r.excl += f.TicksToNanos(p.Exclusive)
				for i, v := range p.CounterInclusive {
					name := u.Metric(fi, i)
					if name == "" {
						break
					}
					if r.cincl == nil {
						r.cincl, r.cexcl = map[string]uint64{}, map[string]uint64{}
					}
					r.cincl[name] += v
					r.cexcl[name] += p.CounterExclusive[i]
				}
			}
		}
	}
	sorted := make([]*regionRow, 0, len(rows))
	for _, r := range rows {
		sorted = append(sorted, r)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].excl != sorted[j].excl {
			return sorted[i].excl > sorted[j].excl
		}
		return sorted[i].name < sorted[j].name
	})
	return sorted, totalNs, nil
}

// WriteOptions is Write with settings.
func WriteOptions(out io.Writer, files []*tracefile.File, opt Options) error {
	width := opt.NameWidth
	if width == 0 {
		width = DefaultNameWidth
	}
	if !opt.Ranks && runOf(files) {
		p := Reduce(files)
		writeRun(out, &p, files, opt)
		return nil
	}
	sorted, totalNs, err := profile(files, true)
	if err != nil {
		return err
	}
	names := make([]string, len(sorted))
	for i, r := range sorted {
		names[i] = r.name
	}
	for i, short := range textname.DistinctEscaped(names, width) {
		sorted[i].short = short
	}
	for _, f := range files {
		runFacts(out, f)
	}
	sameRank(out, files)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Regions (flat profile over all locations; % of the run's location-time)")
	// The name is the line's last cell, not tab-terminated, so the
	// tabwriter does not pad every line to the longest name.
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "visits\tinclusive\texclusive\t%s\t%s\t  region\n", "%incl", "%excl")
	for _, r := range sorted {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t  %s%s\n", units.Count(r.visits+r.after), units.Duration(float64(r.incl)), units.Duration(float64(r.excl)),
			units.Share(float64(r.incl), float64(totalNs)), units.Share(float64(r.excl), float64(totalNs)), r.short, throttledMark(r))
	}
	tw.Flush()
	for _, r := range sorted {
		if r.throttled {
			fmt.Fprintln(out, "  [throttled]: switched off during the run (HMB_THROTTLE); visits count every call, the times only the timed ones")
			break
		}
	}
	overRun(out, files)
	throttling(out, files, width)
	rankTable(out, sorted, files)
	counterTable(out, sorted, files)
	annotations(out, files)
	for _, f := range files {
		bufferStory(out, f)
	}
	return nil
}

// annotations lists what the files' marks, region parameters and channels
// are called, merged by name: the definitions, which the summary has
// without reading events. hmbtrace dump shows each record, hmbtrace comm
// the channel messages.
func annotations(out io.Writer, files []*tracefile.File) {
	var marks, params, chans []string
	seen := map[string]bool{}
	add := func(list *[]string, kind, s string) {
		if !seen[kind+s] {
			seen[kind+s] = true
			*list = append(*list, textname.Escape(s))
		}
	}
	for _, f := range files {
		for _, m := range f.Marks {
			add(&marks, "m", m)
		}
		for _, p := range f.Params {
			add(&params, "p", fmt.Sprintf("%s (%v)", p.Name, p.Type))
		}
		for _, c := range f.Channels {
			add(&chans, "c", c)
		}
	}
	if len(marks)+len(params)+len(chans) == 0 {
		return
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Annotations (hmbtrace dump lists them, hmbtrace comm the channel messages)")
	for _, l := range []struct {
		what  string
		names []string
	}{{"marks", marks}, {"region parameters", params}, {"channels", chans}} {
		if len(l.names) > 0 {
			// A program may name thousands of marks: they wrap.
			fmt.Fprintln(out, textname.Wrap("  "+l.what+": ", l.names, 100, "    "))
		}
	}
}

// longestRegion returns the longest inclusive time of a region on a
// location of f, in ns, with the location's and the region's names.
func longestRegion(f *tracefile.File) (incl int64, loc, region string) {
	for i := range f.Locations {
		l := &f.Locations[i]
		for _, p := range l.Profile {
			if t := f.TicksToNanos(p.Inclusive); t > incl {
				incl, loc, region = t, l.Name, f.RegionName(p.Region)
			}
		}
	}
	return incl, loc, region
}

// overRun notes the regions that last longer on a location than its file's
// run, which the percentages above then exceed 100 % for: events outside
// the measurement's start and end (a file written before hmbtrace moved
// its start back to events recorded before it, or times given to EnterAt
// and LeaveAt after Close). It names the longest per file.
func overRun(out io.Writer, files []*tracefile.File) {
	for _, f := range files {
		run := f.Duration()
		worst, where, what := longestRegion(f)
		if float64(worst-run) > 2*f.Resolution() {
			fmt.Fprintf(out, "  note: %s on %s of %s lasts %s, longer than the file's run of %s: it holds events outside the measurement's start and end\n",
				textname.Escape(what), textname.Escape(where), f.Path, units.Duration(float64(worst)), units.Duration(float64(run)))
		}
	}
}

// rankTable prints, for the ranks of a parallel run (several files with
// distinct ranks), each region's inclusive time per rank: min, mean and
// max over the ranks (a rank that never entered the region counts 0), and
// the slowest rank. Rows follow the flat profile's order.
func rankTable(out io.Writer, rows []*regionRow, files []*tracefile.File) {
	if len(files) < 2 {
		return
	}
	if a, b, ok := tracefile.SameRank(files); ok {
		// Unrelated runs, or one run's files twice: no per-rank view, and
		// the reader is told why rather than left to wonder.
		fmt.Fprintf(out, "\nNo regions per rank: %s and %s both hold rank %d (files of different runs, or a file given twice)\n",
			files[a].Path, files[b].Path, files[a].Header.Rank)
		return
	}
	byRank := make([]int, len(files)) // file indices in rank order
	for i := range byRank {
		byRank[i] = i
	}
	sort.Slice(byRank, func(a, b int) bool { return files[byRank[a]].Header.Rank < files[byRank[b]].Header.Rank })
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Regions per rank (inclusive time over %d ranks; max/mean 1.00 is perfect balance)\n", len(files))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "min\tmean\tmax\tmax/mean\tslowest rank\t  region\n")
	for _, row := range rows {
		var sum, lo, hi int64
		slowest := 0
		for k, fi := range byRank {
			v := row.inclByFile[fi]
			sum += v
			if k == 0 || v < lo {
				lo = v
			}
			if k == 0 || v > hi {
				hi, slowest = v, files[fi].Header.Rank
			}
		}
		mean := float64(sum) / float64(len(files))
		ratio := "-"
		if mean > 0 {
			ratio = fmt.Sprintf("%.2f", float64(hi)/mean)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t  %s%s\n", units.Duration(float64(lo)), units.Duration(mean), units.Duration(float64(hi)), ratio, slowest, row.short, throttledMark(row))
	}
	tw.Flush()
	for _, row := range rows {
		if row.throttled {
			fmt.Fprintln(out, "  [throttled]: each rank timed the visits before it switched the region off, so its times do not measure balance")
			break
		}
	}
}

// throttledMark is the tables' mark of a region the probes switched off.
func throttledMark(r *regionRow) string {
	if !r.throttled {
		return ""
	}
	if r.after == 0 {
		return "  [throttled]"
	}
	return fmt.Sprintf("  [throttled: %s of the visits timed]", units.Count(r.visits))
}

// counterTable prints the regions' counter sums, inclusive/exclusive, and
// instructions per cycle where both were counted.
func counterTable(out io.Writer, rows []*regionRow, files []*tracefile.File) {
	var metrics []string
	seen := map[string]bool{}
	for _, f := range files {
		for _, m := range f.Header.Metrics {
			if !seen[m] {
				seen[m] = true
				metrics = append(metrics, m)
			}
		}
	}
	for _, f := range files {
		for _, m := range f.Header.MetricsMissing {
			fmt.Fprintf(out, "\n%s: recorded without %s", f.Path, m)
		}
		for i := range f.Locations {
			if l := &f.Locations[i]; l.CountersMissing != "" {
				fmt.Fprintf(out, "\n%s: %s read no counters: %s", f.Path, textname.Escape(l.Name), l.CountersMissing)
			}
		}
	}
	if len(metrics) == 0 {
		return
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Counters per region (inclusive / exclusive)")
	ipc := seen["instructions"] && seen["cycles"]
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, m := range metrics {
		fmt.Fprintf(tw, "%s\t", m)
	}
	if ipc {
		fmt.Fprint(tw, "IPC\t")
	}
	fmt.Fprint(tw, "  region\n")
	for _, r := range rows {
		if r.cincl == nil {
			continue
		}
		for _, m := range metrics {
			fmt.Fprintf(tw, "%s / %s\t", units.Count(r.cincl[m]), units.Count(r.cexcl[m]))
		}
		if ipc {
			if c := r.cincl["cycles"]; c > 0 {
				fmt.Fprintf(tw, "%.2f\t", float64(r.cincl["instructions"])/float64(c))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, "  %s\n", r.short)
	}
	tw.Flush()
	for _, f := range files {
		if f.Header.MetricsPath != "" {
			fmt.Fprintf(out, "  %s: counters read with %s", f.Path, f.Header.MetricsPath)
			var mux []string
			for i := range f.Locations {
				if f.Locations[i].Multiplexed {
					mux = append(mux, textname.Escape(f.Locations[i].Name))
				}
			}
			if len(mux) > 0 {
				fmt.Fprintf(out, "; multiplexed and extrapolated on %s", strings.Join(mux, ", "))
			}
			fmt.Fprintln(out)
		}
	}
}

// sameRank notes the files that are one rank of one run twice: processes
// given the same rank, whose second trace was written under a distinct
// name (tracefile.WriteNew).
func sameRank(out io.Writer, files []*tracefile.File) {
	type key struct {
		name string
		rank int
	}
	byKey := map[key][]string{}
	var order []key
	for _, f := range files {
		k := key{f.Header.Name, f.Header.Rank}
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], f.Path)
	}
	for _, k := range order {
		if paths := byKey[k]; len(paths) > 1 {
			fmt.Fprintf(out, "  note: rank %d of %s has %d traces, %s: processes given the same rank (HMB_RANK, or a launcher whose rank variable was not read)\n",
				k.rank, textname.Escape(k.name), len(paths), strings.Join(paths, ", "))
		}
	}
}

func runFacts(out io.Writer, f *tracefile.File) {
	h := &f.Header
	fmt.Fprintf(out, "%s: %s, rank %d on %s (pid %d), %s, %s, %s\n",
		f.Path, textname.Escape(h.Name), h.Rank, h.Host, h.PID, h.StartWall.Format("2006-01-02 15:04:05 MST"), units.Duration(float64(f.Duration())), units.Plural(len(f.Locations), "location", "locations"))
	fmt.Fprintf(out, "  clock %s at %s, timestamps kept to %s (shift %d); probe cost %.1f ns/event\n",
		h.Clock, units.Rate(h.TicksPerSecond), units.Duration(f.Resolution()), h.TimerShift, h.ProbeCost)
	recovered(out, f.Recovered)
}

// interruptedBy names what interrupted a location: a signal for a trace
// its process wrote (only a caught signal writes one with locations still
// running); for a recovered one, what its mapping tells.
func interruptedBy(r *tracefile.Recovered) string {
	switch {
	case r == nil:
		// Written by the process: a signal's (HMB_SIGNALS) or a Close
		// that found the location inside a probe past its wait.
		return "the trace was written (a caught signal, or a probe under way past Close's wait)"
	case r.End == tracefile.EndSignal:
		return "a signal ended the run"
	case r.End == tracefile.EndRunning:
		return "its buffer was read"
	}
	return "the process died (no handler saw a signal: SIGKILL, the OOM killer, a crash or _exit)"
}

// recovered says that a trace was recovered from its process's mapping,
// what ended the run, and which figures are therefore lower bounds
// (marked ">=" where they are printed).
func recovered(out io.Writer, r *tracefile.Recovered) {
	if r == nil {
		return
	}
	fmt.Fprintf(out, "  RECOVERED by hmbtrace recover from the mapping the process left: %s\n", r.EndText())
	for _, s := range r.LowerBounds() {
		fmt.Fprintf(out, "    lower bound: %s\n", s)
	}
	if r.Cut > 0 || r.Orphans > 0 || r.LostDefs > 0 || r.LostLevels > 0 {
		fmt.Fprintf(out, "    damaged: %d bins cut at their last complete record, %d bins without a level, %d definitions and %d levels that did not fit the mapping\n",
			r.Cut, r.Orphans, r.LostDefs, r.LostLevels)
	}
}

// bufferStory tells the file's Story as text.
func bufferStory(out io.Writer, f *tracefile.File) {
	h := &f.Header
	st := f.Story()
	fmt.Fprintf(out, "\nBuffer of %s (rank %d): %s in %d bins of %s, reduction policy %s\n", f.Path, h.Rank, units.Size(float64(h.BufferSize)),
		h.BufferSize/max(h.BinSize, 1), units.Size(float64(h.BinSize)), h.Policy)
	if r := f.Recovered; r != nil {
		// Recorded is what the file accounts for; the locations had
		// published more as recorded, and recorded more after that.
		fmt.Fprintf(out, "  events recorded  >= %s (a lower bound: the counts as last published", units.Count(st.Recorded+r.Unaccounted))
		if r.Unaccounted > 0 {
			fmt.Fprintf(out, "; %s of them unaccounted for: dropped at a closed level or held by the duration filter after the last publication", units.Count(r.Unaccounted))
		}
		fmt.Fprintln(out, ")")
	} else {
		fmt.Fprintf(out, "  events recorded  %s\n", units.Count(st.Recorded))
	}
	fmt.Fprintf(out, "  events kept      %s (%s)", units.Count(st.Kept), units.Share(float64(st.Kept), float64(st.Recorded)))
	switch {
	case f.EventsNone:
		fmt.Fprint(out, ", not written: the run kept its results only (HMB_OUTPUT_EVENTS=none)")
	case st.Kept > 0:
		fmt.Fprintf(out, ", %s in %d bins, %.2f bytes/event", units.Size(float64(st.Bytes)), st.Bins, st.BytesPerEvent())
	default:
		fmt.Fprintf(out, ", %s in %d bins", units.Size(float64(st.Bytes)), st.Bins)
	}
	fmt.Fprintln(out)
	if st.KeptByClass[tracefile.ClassRegion] != st.Kept {
		var parts []string
		for _, c := range st.KeptClasses {
			parts = append(parts, fmt.Sprintf("%s %s", c.Class, units.Count(c.N)))
		}
		fmt.Fprintf(out, "    by class       %s\n", strings.Join(parts, ", "))
	}
	if h.FilterFile != "" || h.MinDuration > 0 || st.Filtered > 0 {
		fmt.Fprintf(out, "  events filtered  %s", units.Count(st.Filtered))
		switch {
		case h.FilterFile != "":
			fmt.Fprintf(out, "; %s of regions excluded by %s", units.Count(st.FilteredName), h.FilterFile)
		case st.FilteredName > 0:
			// Without a filter file, only Clang's outlined OpenMP bodies are excluded (measure's outlinedBody).
			fmt.Fprintf(out, "; %s of Clang's outlined OpenMP bodies", units.Count(st.FilteredName))
		}
		if h.MinDuration > 0 {
			fmt.Fprintf(out, "; %s of calls shorter than %s", units.Count(st.FilteredDuration), units.Duration(float64(h.MinDuration)))
		}
		fmt.Fprintln(out)
	}
	var parts []string
	for _, r := range st.RemovedBy {
		parts = append(parts, fmt.Sprintf("%s %s", r.Reason, units.Count(r.N)))
	}
	fmt.Fprintf(out, "  events removed   %s", units.Count(st.RemovedTotal))
	if len(parts) > 0 {
		fmt.Fprintf(out, " (by %s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(out)
	if !st.Balanced {
		fmt.Fprintf(out, "  WARNING: recorded != kept + filtered + removed (%d != %d + %d + %d)\n", st.Recorded, st.Kept, st.Filtered, st.RemovedTotal)
	}
	for _, name := range st.Interrupted {
		fmt.Fprintf(out, "  %s was still running when %s: its last event may be uncounted, its open regions stay open\n", textname.Escape(name), interruptedBy(f.Recovered))
	}
	if len(st.Reductions) == 0 {
		fmt.Fprintln(out, "  reductions       none: the whole run fit")
	} else {
		fmt.Fprintf(out, "  reductions       %d\n", len(st.Reductions))
		for _, r := range st.Reductions {
			at := units.Duration(float64(r.At))
			switch r.Reason {
			case tracefile.ByDepth:
				what := "closed depth %d and deeper"
				switch r.Class {
				case tracefile.ClassParadigm:
					what = "closed depth %d and deeper of MPI and OpenMP regions"
				case tracefile.ClassMessage:
					what = "closed depth %d and deeper of messages and collectives"
				}
				fmt.Fprintf(out, "    at %s: "+what+", revoking %d bins (%s events)\n", at, r.Depth, r.Bins, units.Count(r.Records))
			case tracefile.ByClass:
				fmt.Fprintf(out, "    at %s: closed event class %s, revoking %d bins (%s events)\n", at, r.Class, r.Bins, units.Count(r.Records))
			case tracefile.ByFirst:
				if r.Depth > 0 {
					fmt.Fprintf(out, "    at %s: buffer full with only depth %d left, recording stopped\n", at, r.Depth)
				} else {
					fmt.Fprintf(out, "    at %s: buffer full, recording stopped (keep first)\n", at)
				}
			case tracefile.ByLast:
				fmt.Fprintf(out, "    until %s: revoked the oldest bin %d times (%s events), keeping the last\n", at, r.Steps, units.Count(r.Records))
				for _, w := range st.Windows {
					fmt.Fprintf(out, "      %s: complete from %s on\n", textname.Escape(w.Name), units.Duration(float64(w.At)))
				}
			}
		}
	}
	if len(st.Depths) > 0 {
		fmt.Fprintln(out, "  per depth:")
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "    depth\tkept\tremoved\t\t")
		for _, row := range st.Depths {
			removed := row.Removed.Total()
			if row.Kept == 0 && removed == 0 {
				continue
			}
			note := ""
			if row.Closed {
				note = "closed"
			}
			fmt.Fprintf(tw, "    %d\t%s\t%s\t%s\t\n", row.Depth, units.Count(row.Kept), units.Count(removed), note)
		}
		tw.Flush()
	}
	for i, r := range st.Throttled {
		if i == 0 {
			fmt.Fprintln(out, "  throttled        regions switched off by HMB_THROTTLE (visits after it counted, not timed):")
		}
		fmt.Fprintf(out, "    %s at %s on %s: %s visits timed before, %s after\n", textname.Escape(r.Name), units.Duration(float64(r.FirstAt)),
			units.Plural(r.Locations, "location", "locations"), units.Count(r.Visits), units.Count(r.VisitsAfter))
	}
	messageStory(out, st.Messages)
	if st.UsageTotal == 0 {
		fmt.Fprintln(out, "  usage errors     none")
	} else {
		fmt.Fprintf(out, "  usage errors     %s:", units.Count(st.UsageTotal))
		for _, u := range st.UsageKinds {
			fmt.Fprintf(out, " %s %s;", units.Count(u.N), u.What)
		}
		fmt.Fprintln(out)
	}
}

// messageStory prints the file's messages (tracefile.MessageStory).
func messageStory(out io.Writer, m tracefile.MessageStory) {
	if m.Annotated > 0 {
		fmt.Fprintf(out, "  marks, channels  %s records kept in the message class on locations that sent no other message (hmbtrace dump lists them, hmbtrace comm counts the channel messages)\n",
			units.Count(m.Annotated))
	}
	if m.Exact == 0 && m.Counted == 0 {
		return
	}
	if m.Exact > 0 {
		fmt.Fprintf(out, "  messages         sent %s (%s), received %s (%s), %s; exact, counted at the probe\n",
			units.Count(m.Sent), units.Size(float64(m.SentBytes)), units.Count(m.Received), units.Size(float64(m.ReceivedBytes)), units.Plural(m.Peers, "peer", "peers"))
	}
	if m.Counted > 0 {
		fmt.Fprintf(out, "  message events   %s kept on %s without an exact matrix (a file written before it was kept)\n",
			units.Count(m.KeptEvents), units.Plural(m.Counted, "location", "locations"))
	}
	if m.Shed > 0 {
		if m.Counted == 0 {
			fmt.Fprintf(out, "    the buffer shed %s message events; the counts above include their messages\n", units.Count(m.Shed))
		} else {
			fmt.Fprintf(out, "    the buffer shed %s message events, missing from the events kept\n", units.Count(m.Shed))
		}
	}
}

// WriteTSV writes the merged flat profile of the files, one region a line,
// most exclusive time first, with full names:
// <region>\t<visits>\t<inclusive ns>\t<exclusive ns>. Names are escaped
// (textname.Escape), so that a tab or newline in one does not break the line.
func WriteTSV(out io.Writer, files []*tracefile.File) error {
	rows, _, err := profile(files, false)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(out, "%s\t%d\t%d\t%d\n", r.name, r.visits, r.incl, r.excl); err != nil {
			return err
		}
	}
	return nil
}
