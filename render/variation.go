package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/textname"

	"github.com/hmbtrace/hmbtrace/internal/units"
)

// WriteReport writes the analysis for a reader: the segment region and why,
// the synchronization regions, the SOS-time statistics, then the segments
// whose score is at least minScore, highest first, at most top of them
// (all if top <= 0).
func VariationText(out io.Writer, v *variation.Variation, minScore float64, top int) error {
	w := bufio.NewWriter(out)
	d := &v.Dominance
	if v.Picked {
		fmt.Fprintf(w, "variation.Segment region: %s (chosen by the user)\n", textname.Escape(v.Region))
		if v.HasDominance {
			fmt.Fprintf(w, "  the time-dominant region would be %s: %s invocations, %s aggregated inclusive time\n",
				textname.Escape(d.Region.Name), units.Count(d.Region.Visits), units.Duration(float64(d.Region.Inclusive)))
		}
	} else {
		if v.Between {
			fmt.Fprintf(w, "Iterations: between consecutive calls of %s (no region of the program carries them)\n", textname.Escape(v.Region))
			if d.ByRank {
				fmt.Fprintf(w, "  %s calls by the master thread of each rank, throughout the run; its calls cut all %d locations\n", units.Count(d.Region.Visits), d.Locations)
			} else {
				fmt.Fprintf(w, "  %s calls on %d locations, every location as many, throughout the run\n", units.Count(d.Region.Visits), d.Locations)
			}
		} else {
			fmt.Fprintf(w, "Time-dominant region: %s\n", textname.Escape(v.Region))
			fmt.Fprintf(w, "  %s invocations (at least 2p = %d for p = %d locations), %s aggregated inclusive time, %s of the run\n",
				units.Count(d.Region.Visits), d.MinVisits, d.Locations, units.Duration(float64(d.Region.Inclusive)), units.Share(d.Share, 1))
		}
		if d.HasRunnerUp {
			fmt.Fprintf(w, "  runner-up: %s, %s invocations, %s\n", textname.Escape(d.RunnerUp.Name), units.Count(d.RunnerUp.Visits), units.Duration(float64(d.RunnerUp.Inclusive)))
		} else if !v.Between {
			fmt.Fprintln(w, "  runner-up: none, no other region is invoked that often")
		}
		for _, t := range d.Ineligible {
			fmt.Fprintf(w, "  passed over: %s, %s but only %s invocations\n", textname.Escape(t.Name), units.Duration(float64(t.Inclusive)), units.Count(t.Visits))
		}
		for _, t := range d.Sync {
			fmt.Fprintf(w, "  passed over: %s, %s, a synchronization region\n", textname.Escape(t.Name), units.Duration(float64(t.Inclusive)))
		}
		for _, t := range d.Paradigm {
			fmt.Fprintf(w, "  passed over: %s, %s, an MPI call\n", textname.Escape(t.Name), units.Duration(float64(t.Inclusive)))
		}
		for _, t := range d.Minor {
			fmt.Fprintf(w, "  passed over: %s, %s, %s\n", textname.Escape(t.Name), units.Duration(float64(t.Inclusive)), minorWhy(d, t))
		}
	}
	if len(v.SyncRegions) > 0 {
		fmt.Fprintln(w, quoteLines("Synchronization regions: ", v.SyncRegions))
	}
	fmt.Fprintf(w, "Segments: %s; SOS-time median %s, MAD %s\n", segmentCount(v), units.Duration(v.Median), units.Duration(v.MAD))
	for _, n := range v.Notes {
		fmt.Fprintf(w, "  note: %s\n", VariationNote(n))
	}
	writeSlowestRows(w, v)

	ranked := v.Ranked()
	var standOut []variation.Segment
	for _, s := range ranked {
		if s.Score < minScore {
			break
		}
		standOut = append(standOut, s)
	}
	if len(ranked) == 0 {
		return w.Flush()
	}
	if len(standOut) == 0 {
		best := ranked[0]
		fmt.Fprintf(w, "\nNo segment stands out (robust z-score >= %g); the highest is %.2f: %s segment %d\n",
			minScore, best.Score, textname.Escape(v.Rows[best.Row].Label), best.Index)
		return w.Flush()
	}
	fmt.Fprintf(w, "\nSegments that stand out (robust z-score >= %g): %d of %s", minScore, len(standOut), units.Count(uint64(len(v.Segments))))
	if top > 0 && len(standOut) > top {
		fmt.Fprintf(w, ", the first %d", top)
		standOut = standOut[:top]
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "location\tsegment\tstart\tSOS-time\tduration\tscore\t")
	for _, s := range standOut {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.1f\t\n", textname.Escape(v.Rows[s.Row].Label), s.Index,
			units.Duration(float64(s.Start)), units.Duration(float64(s.SOS)), units.Duration(float64(s.Duration)), s.Score)
	}
	tw.Flush()
	return w.Flush()
}

// WriteTSV writes every segment as a line
// <location>\t<segment>\t<start-ns>\t<sos-ns>\t<score>, by location then
// segment.
func VariationTSV(out io.Writer, v *variation.Variation) error {
	w := bufio.NewWriterSize(out, 1<<16)
	var b []byte
	for _, s := range v.Segments {
		b = append(b[:0], textname.Escape(v.Rows[s.Row].Label)...)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(s.Index), 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, s.Start, 10)
		b = append(b, '\t')
		b = strconv.AppendInt(b, s.SOS, 10)
		b = append(b, '\t')
		b = strconv.AppendFloat(b, s.Score, 'f', 3, 64)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Flush()
}

// segmentCount says how many segments each location has: "120, 30 on each
// of 4 locations", or the count per location when they differ, the
// locations without any named.
func segmentCount(v *variation.Variation) string {
	total := units.Count(uint64(len(v.Segments)))
	same := true
	for _, r := range v.Rows {
		same = same && r.Segments == v.Rows[0].Segments
	}
	switch {
	case len(v.Rows) == 1:
		return total + " on 1 location"
	case same:
		return fmt.Sprintf("%s, %s on each of %d locations", total, units.Count(uint64(v.Rows[0].Segments)), len(v.Rows))
	}
	var with []string
	var without []string
	lo, hi := -1, 0
	for _, r := range v.Rows {
		if r.Segments == 0 {
			without = append(without, textname.Escape(r.Label))
			continue
		}
		with = append(with, fmt.Sprintf("%s on %s", units.Count(uint64(r.Segments)), textname.Escape(r.Label)))
		if lo < 0 || r.Segments < lo {
			lo = r.Segments
		}
		hi = max(hi, r.Segments)
	}
	s := fmt.Sprintf("%s on %d of %d locations", total, len(with), len(v.Rows))
	if len(with) <= 8 {
		s += " (" + strings.Join(with, ", ") + ")"
	} else {
		s += fmt.Sprintf(" (%s to %s each)", units.Count(uint64(lo)), units.Count(uint64(hi)))
	}
	switch {
	case len(without) == 0:
	case len(without) <= 8:
		s += "; none on " + strings.Join(without, ", ")
	default:
		s += fmt.Sprintf("; none on %d locations, %s ...", len(without), strings.Join(without[:8], ", "))
	}
	return s
}

// balanced is the ratio of the slowest location's median SOS-time to the
// median of all segments below which no location stands out: the
// difference is within what a run's noise makes.
const balanced = 1.1

// writeSlowestRows names the locations whose segments are slowest as a
// whole, by their median SOS-time: a rank with more work than the others
// (a load imbalance) is slow in every segment, which single segments'
// scores do not tell when the machine's noise makes others stand out more.
func writeSlowestRows(w io.Writer, v *variation.Variation) {
	rows := v.SlowestRows()
	if len(rows) < 2 || v.Median <= 0 {
		return
	}
	if top := v.Rows[rows[0]]; top.Median < balanced*v.Median {
		fmt.Fprintf(w, "Locations by median SOS-time: none stands out (the slowest, %s, %.2f× the median of all)\n",
			textname.Escape(top.Label), top.Median/v.Median)
		return
	}
	const show = 3
	fmt.Fprint(w, "Slowest locations by median SOS-time:")
	for i, r := range rows {
		if i == show {
			fmt.Fprintf(w, "; %d more", len(rows)-show)
			break
		}
		sep := ";"
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(w, "%s %s %s (%.2f× the median of all)", sep, textname.Escape(v.Rows[r].Label),
			units.Duration(v.Rows[r].Median), v.Rows[r].Median/v.Median)
	}
	fmt.Fprintln(w)
}

// minorWhy says why a candidate with more inclusive time than the
// time-dominant region was passed over.
func minorWhy(d *variation.Dominance, t variation.MinorRegion) string {
	chosenSOS := float64(d.Region.Inclusive) * (1 - d.Waiting)
	switch {
	case d.Between || t.SOS < variation.StrongShare*chosenSOS:
		return fmt.Sprintf("%s of it in MPI calls and synchronization: SOS-time %s", units.Share(t.Waiting, 1), units.Duration(t.SOS))
	case !t.Regular:
		return fmt.Sprintf("%s invocations at an irregular period", units.Count(t.Visits))
	}
	return fmt.Sprintf("SOS-time %s, %s invocations", units.Duration(t.SOS), units.Count(t.Visits))
}
