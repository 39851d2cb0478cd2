package render

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/internal/textname"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// maxNameWidth is where score's tables cut a region's name; the filter
// file it writes has every name whole.
const maxNameWidth = 200

// shortName is the name as the score's table shows it, or shortened alone
// when the table has no row for it.
func shortName(shortOf map[string]string, name string) string {
	if s, ok := shortOf[name]; ok {
		return s
	}
	return textname.Shorten(name, maxNameWidth)
}

// ScoreText writes the score for a reader, in the manner of scorep-score:
// the run, the estimated overhead, one line per region (flagged ones marked
// +), the trace bytes and the buffer that would have kept the whole run.
func ScoreText(out io.Writer, s *score.Score) error {
	w := bufio.NewWriter(out)
	opt := s.Options
	fmt.Fprintf(w, "Score of %s, %s, %s of location-time\n", units.Plural(len(s.Files), "file", "files"), units.Plural(s.Locations, "location", "locations"), units.Duration(float64(s.LocationTime)))
	for _, f := range s.Files {
		if f.ProbeCost > 0 {
			fmt.Fprintf(w, "  %s: probe cost %.1f ns per event (measured at Start)\n", f.Path, f.ProbeCost)
		}
	}
	for _, p := range s.NoProbeCost {
		fmt.Fprintf(w, "  %s: no probe cost in the file\n", p)
	}
	if measured := len(s.Files) - len(s.NoProbeCost); s.ProbeCost > 0 && (measured > 1 || len(s.NoProbeCost) > 0) {
		fmt.Fprintf(w, "Overheads are estimated at %.1f ns per event, the least of the files' measurements (a rank preempted while it measured measures too much)\n", s.ProbeCost)
	} else if s.ProbeCost == 0 {
		fmt.Fprintln(w, "No file carries a probe cost: overheads count as 0")
	}
	var visits uint64
	for _, r := range s.Regions {
		visits += r.Visits
	}
	fmt.Fprintf(w, "Estimated measurement overhead: %s for %s visits (2 events each), %s of location-time\n",
		units.Duration(s.Overhead), units.Count(visits), percent(score.Ratio(s.Overhead, float64(s.LocationTime))))
	if s.ThrottledVisits > 0 {
		fmt.Fprintf(w, "  of which %s for the %s visits counted after a throttle, at %.1f ns per event (a throttled probe tests a flag and counts), the timed ones at the probe cost\n",
			units.Duration(s.Untimed), units.Count(s.ThrottledVisits), min(score.ThrottledProbeCost, s.ProbeCost))
	}

	fmt.Fprintln(w)
	// The name is the line's last cell, not tab-terminated, so that the
	// tabwriter does not pad every line to the longest name.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "flt\tvisits\tincl/visit\t%%excl\tkept bytes\tfull bytes\toverhead\t%s ovhd\t  region\n", opt.Property)
	names := make([]string, len(s.Regions))
	for i, r := range s.Regions {
		names[i] = r.Name
	}
	short := textname.Distinct(names, maxNameWidth)
	shortOf := make(map[string]string, len(names))
	for i, n := range names {
		shortOf[n] = short[i]
	}
	for i, r := range s.Regions {
		flag := ""
		switch {
		case r.Flagged:
			flag = "+"
		case r.Sync:
			flag = "s"
		case r.Paradigm:
			flag = "p"
		}
		perVisit := "-"
		if timed := r.Visits - r.VisitsAfter; timed > 0 {
			perVisit = units.Duration(float64(r.Inclusive) / float64(timed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", flag, units.Count(r.Visits), perVisit,
			percent(score.Ratio(float64(r.Exclusive), float64(s.LocationTime))), units.Size(r.KeptBytes), units.Size(r.FullBytes),
			units.Duration(r.Overhead), percent(r.Relative(opt.Property)), short[i])
	}
	tw.Flush()
	fmt.Fprint(w, ScoreColumns(opt.Property))
	if s.ShedLevels {
		fmt.Fprintln(w, "  the buffer removed events: calls nested in the removed levels are not counted, so the pure times above them are too large")
	}

	fmt.Fprintln(w, "\nTrace bytes (estimates: each kept event re-encoded with the file's encoding; full bytes add the removed visits at the region's bytes per event)")
	for i := range s.Files {
		f := &s.Files[i]
		fmt.Fprintf(w, "  %s: bins hold %s in %d bins; re-encoding gives %s (%s), of which %s are bin headers\n",
			f.Path, units.Size(float64(f.FileBytes)), f.FileBins, units.Size(float64(f.Reencoded)),
			percent(score.Ratio(float64(f.Reencoded), float64(f.FileBytes))), units.Size(float64(f.HeaderBytes)))
		fmt.Fprintf(w, "    events recorded %s, kept %s, filtered %s, removed %s\n", units.Count(f.Recorded), units.Count(f.Kept), units.Count(f.Filtered), units.Count(f.Removed))
		fmt.Fprintf(w, "    %s\n", bufferAdvice(f))
	}
	if s.UnattributedBytes > 0 {
		fmt.Fprintf(w, "  %s of records outside any region\n", units.Size(s.UnattributedBytes))
	}

	flagged := s.Flagged()
	fmt.Fprintln(w)
	crit := fmt.Sprintf("relative %s overhead above %s", opt.Property, percent(opt.Threshold))
	if opt.MinShare > 0 {
		crit += fmt.Sprintf(" and at least %s of all visits", percent(opt.MinShare))
	}
	for i, r := range s.Throttled {
		if i == 0 {
			fmt.Fprintf(w, "Throttled at run time (HMB_THROTTLE; -g excludes them too):\n")
		}
		fmt.Fprintf(w, "    %s at %s on %d location(s), %s visits after it (counted, not timed)\n", shortName(shortOf, r.Name), units.Duration(float64(r.FirstAt)), r.Locations, units.Count(r.VisitsAfter))
	}
	if len(flagged) == 0 {
		fmt.Fprintf(w, "No region has a %s.\n", crit)
	} else {
		fmt.Fprintln(w, quoteLines(fmt.Sprintf("Flagged (+) %d region(s) with a %s: ", len(flagged), crit), flagged))
	}
	return w.Flush()
}

// ScoreFilter writes a Score-P filter file that excludes the flagged
// regions and nothing else; HMB_FILTER_FILE and Score-P accept it. Its
// comment says why each region is excluded.
func ScoreFilter(out io.Writer, s *score.Score) error {
	opt := s.Options
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by hmbtrace score from %s.\n", fileList(s.Files))
	fmt.Fprintf(&b, "Excludes the regions whose relative %s overhead exceeds %s of their pure time", opt.Property, percent(opt.Threshold))
	if opt.MinShare > 0 {
		fmt.Fprintf(&b, "\nand that make at least %s of all visits", percent(opt.MinShare))
	}
	b.WriteString(" (estimates).")
	names := s.Flagged()
	for _, r := range s.Regions {
		if r.Flagged {
			fmt.Fprintf(&b, "\n%s: %s visits, %s per visit, overhead %s (%s)", r.Name, units.Count(r.Visits),
				units.Duration(float64(r.Inclusive)/float64(max(r.Visits-r.VisitsAfter, 1))), units.Duration(r.FullOverhead), percent(r.Relative(opt.Property)))
		}
	}
	// Regions the probes throttled were too short and too frequent to be
	// worth measuring: the next run excludes them from the start.
	for _, r := range s.Throttled {
		if !s.Filterable(r.Name) {
			continue // the run-time filter keeps MPI and OpenMP regions
		}
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
		fmt.Fprintf(&b, "\n%s: throttled at %s, %s visits after it", r.Name, units.Duration(float64(r.FirstAt)), units.Count(r.VisitsAfter))
	}
	return filter.Write(out, names, b.String())
}

func fileList(files []score.FileScore) string {
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f.Path))
	}
	if len(names) > 4 {
		names = append(names[:3], fmt.Sprintf("... (%d files)", len(files)))
	}
	return strings.Join(names, ", ")
}

// ScoreColumns explains the columns of the score's table, for the report
// and for hmbtrace score -h; p names the overhead property of the last
// column.
func ScoreColumns(p score.Property) string {
	what := map[score.Property]string{
		score.TotalOverhead:  "whole cost (2 events per visit)",
		score.PrologOverhead: "cost inside the region's own time (1 event per visit)",
	}[p]
	return fmt.Sprintf(`  flt         + flagged: the filter file (-g) excludes it; s: a synchronization region (MPI, OpenMP),
              never flagged, as variation subtracts its time from the segments; p: another MPI or
              OpenMP region, never flagged, as the run-time filter keeps them
  visits      calls, from the exact flat profile (what the buffer removed or the throttle left
              untimed counts too)
  incl/visit  inclusive time per timed call
  %%excl       exclusive time, in %% of the location-time of all files
  kept bytes  the trace bytes of its events in the files; full bytes: had the buffer removed none
  overhead    what its probes cost the run: 2 events per visit at the probe cost, the visits
              after a throttle at a throttled probe's cost
  %-11s the probes' %s relative to the region's pure time
              (inclusive less the probe costs inside it), every visit at the probe cost, as in a
              run that measures it; inf: the estimated probe costs are all of its time
`, p.String()+" ovhd", what)
}

// bufferAdvice says in a sentence which buffer would have kept the file's
// whole run, and how that compares with the run's.
func bufferAdvice(f *score.FileScore) string {
	s := fmt.Sprintf("The whole run unreduced takes about %s of records in %s bins of %s: HMB_BUFFER_SIZE=%s would keep it (an estimate).",
		units.Size(f.UnreducedBytes), units.Count(f.UnreducedBins), units.Size(float64(f.BinSize)), sizeSetting(f.UnreducedBuffer()))
	have := units.Size(float64(f.Buffer))
	if f.Removed > 0 {
		return s + fmt.Sprintf(" This run had %s and removed events.", have)
	}
	return s + fmt.Sprintf(" This run had %s and kept every event.", have)
}
