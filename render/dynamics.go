package render

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// amount formats a value of the series' unit: durations as every tool of
// hmbtrace does (internal/units), other units with four digits.
func amount(v float64, unit string) string {
	if unit == "ns" {
		return units.Duration(v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// axisAmount is amount without a unit other than time's: the panel's
// title names the metric, and the axis has little room.
func axisAmount(v float64, unit string) string {
	if unit == "ns" {
		return units.Duration(v)
	}
	return fmt.Sprintf("%.4g", v)
}

// sentence says what a finding is and costs, in one sentence.
func sentence(f trend.Finding) string {
	k := f.Feature.Kind
	var what string
	switch k {
	case dynamics.StepUp, dynamics.StepDown:
		what = fmt.Sprintf("a %v at iteration %d", k, f.To)
	case dynamics.TrendUp, dynamics.TrendDown:
		what = fmt.Sprintf("an %v over iterations %d–%d", k, f.From, f.To)
		if k == dynamics.TrendDown {
			what = fmt.Sprintf("a %v over iterations %d–%d", k, f.From, f.To)
		}
	case dynamics.Periodic:
		what = fmt.Sprintf("a peak every %d iterations over iterations %d–%d (%d of them)",
			uint64(f.Feature.Period)*f.Series.Width, f.From, f.To, f.Feature.Stability)
	default:
		what = fmt.Sprintf("a %v at iteration %d", k, f.From)
		if f.To > f.From {
			what = fmt.Sprintf("a %v over iterations %d–%d", k, f.From, f.To)
		}
	}
	cost := amount(math.Abs(f.Severity), f.Series.Unit)
	if s := f.Share(); !math.IsNaN(s) {
		cost += fmt.Sprintf(" (%s of the loop)", units.Share(math.Abs(f.Severity), f.Series.Loop))
	}
	var effect string
	switch {
	case f.Severity < 0:
		effect = "saving " + cost
	case f.Severity == 0:
		effect = "back from the rise before it"
	case k == dynamics.StepDown || k == dynamics.TrendDown:
		effect = "after slower iterations that cost " + cost
	default:
		effect = "costing " + cost
	}
	s := fmt.Sprintf("%q on %s, %s: %s, %s", f.Series.Region, f.Series.Location, f.Series.Metric, what, effect)
	if len(f.Also) > 0 {
		s += fmt.Sprintf("; also in %s around it", quoteList(f.Also))
	}
	return s
}

// counts says how many series there are and what became of them.
func dynamicsCounts(r *trend.Result) string {
	n := map[string]int{}
	with := 0
	for i := range r.Series {
		if r.Quiet[i] == "" {
			with++
		} else {
			n[r.Quiet[i]]++
		}
	}
	parts := []string{fmt.Sprintf("%d with findings", with)}
	for _, q := range []struct{ key, text string }{
		{trend.QuietFlat, "flat within their noise"},
		{trend.QuietSmall, fmt.Sprintf("with changes below %s of the loop's time", units.Share(r.MinShare, 1))},
		{trend.QuietEcho, "only echoing a region inside them"},
		{trend.QuietShort, fmt.Sprintf("too short (fewer than %d values)", dynamics.MinFeatureSamples)},
	} {
		if n[q.key] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[q.key], q.text))
		}
	}
	return fmt.Sprintf("%d series (region × location × metric): %s", len(r.Series), strings.Join(parts, ", "))
}

// DynamicsText writes the findings, costliest first (at most top of them; all
// if top <= 0), then a sentence per series that has any.
func DynamicsText(w io.Writer, r *trend.Result, top int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Iterations: %s.\n%s.\n", DynamicsSource(r.Source), dynamicsCounts(r))
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "note: %s\n", VariationNote(n))
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(bw, "\nNo relevant change over the iterations: no series changes by %s of the loop's time or more beyond its noise.\n", units.Share(r.MinShare, 1))
		return bw.Flush()
	}
	fmt.Fprintf(bw, "\nCostliest first (time over each series' baseline; %s of the loop's time or more):\n", units.Share(r.MinShare, 1))
	shown := r.Findings
	if top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	for i, f := range shown {
		fmt.Fprintf(bw, "%3d. %s\n", i+1, sentence(f))
	}
	if len(shown) < len(r.Findings) {
		fmt.Fprintf(bw, "     … and %d more (-top 0 lists all)\n", len(r.Findings)-len(shown))
	}
	fmt.Fprintln(bw, "\nPer series:")
	for i, s := range r.Series {
		fs := r.Relevant[i]
		if len(fs) == 0 {
			continue
		}
		width := float64(s.Width)
		format := func(v float64) string { return amount(v*width, s.Unit) }
		n := len(s.Values)
		if s.Width > 1 {
			fs, n = inIterations(fs, s), int(s.Iterations)
		}
		fmt.Fprintf(bw, "  %q on %s, %s: %s (dynamic energy %.0f%% of the total)\n", s.Region, s.Location, s.Metric,
			DescribeFeaturesWith(fs, n, format), 100*r.Analyses[i].Energy.Variability())
	}
	return bw.Flush()
}

// inIterations places the features of a series whose values hold Width
// iterations each (a merged phase series, or the report's segment groups)
// in iterations, as the findings are: from the first iteration of the
// first value to the last of the last.
func inIterations(fs []dynamics.Feature, s *trend.Series) []dynamics.Feature {
	out := make([]dynamics.Feature, len(fs))
	for i, f := range fs {
		from := uint64(f.From) * s.Width
		to := min(uint64(f.To+1)*s.Width, s.Iterations)
		f.From, f.To = int(from), int(max(to, from+1)-1)
		f.Period *= int(s.Width)
		out[i] = f
	}
	return out
}

// DynamicsTSVHeader is the first line DynamicsTSV writes.
const DynamicsTSVHeader = "region\tlocation\tmetric\tkind\tfrom_iteration\tto_iteration\tcost\tunit\tshare_of_loop\talso_in"

// DynamicsTSV writes a header line and every finding, costliest first: the
// cost in the series' unit × iterations (ns for times; negative for a dip),
// its share of the location's time in the loop (empty when the series is
// not a time), and the enclosing regions folded into it, comma-separated.
func DynamicsTSV(w io.Writer, r *trend.Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, DynamicsTSVHeader)
	for _, f := range r.Findings {
		share := ""
		if s := f.Share(); !math.IsNaN(s) {
			share = fmt.Sprintf("%.4f", s)
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%s\n", f.Series.Region, f.Series.Location, f.Series.Metric,
			f.Feature.Kind, f.From, f.To, f.Severity, f.Series.Unit, share, strings.Join(f.Also, ","))
	}
	return bw.Flush()
}

// SVG geometry, shared with the tests.
const (
	svgWidth     = 900.0
	svgPanel     = 190.0
	svgMargin    = 20.0
	svgLeft      = 78.0
	labelSize    = 10.0
	labelLanes   = 3
	labelLineGap = 13.0
	// charWidth bounds the advance of a character of the sans-serif font
	// at labelSize: wide enough for "m" and "w" in common sans fonts.
	charWidth = 0.62 * labelSize
)

// labelBox is the horizontal extent of a placed label.
type labelBox struct{ x0, x1 float64 }

// placeLabels places one label per span (start x, text) into up to
// labelLanes lanes, left to right, each in the first lane where it does not
// touch another; a label that fits in no lane is left out (its span keeps
// its tooltip). It returns the lane per label, -1 for left out, and the x
// of each label's start.
func placeLabels(starts []float64, texts []string, right float64) (lanes []int, xs []float64) {
	const pad = 4.0
	var lane [labelLanes][]labelBox
	lanes = make([]int, len(texts))
	xs = make([]float64, len(texts))
	for i, t := range texts {
		w := float64(utf8.RuneCountInString(t)) * charWidth
		x := math.Min(starts[i]+2, right-w)
		xs[i] = x
		lanes[i] = -1
		for l := range lane {
			free := true
			for _, b := range lane[l] {
				if x < b.x1+pad && x+w+pad > b.x0 {
					free = false
					break
				}
			}
			if free {
				lane[l] = append(lane[l], labelBox{x, x + w})
				lanes[i] = l
				break
			}
		}
	}
	return lanes, xs
}

// fit shortens s to at most width pixels of text, cutting its middle.
func fit(s string, width float64) string {
	n := int(width / charWidth)
	if n < 5 {
		return s
	}
	return Shorten(s, n)
}

// valueRange returns the axis range of a series: from its lowest value to
// its highest, unless a few outliers would flatten everything else, in
// which case the top is cut at the median plus eight times the distance
// from the median to the 95th percentile (or twice the 95th percentile,
// whichever is higher): rare iterations many times slower than the rest
// then leave room for the features, and are marked where they are cut.
func valueRange(v []float64) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 1
	}
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	lo, hi = sorted[0], sorted[len(sorted)-1]
	med, q := sorted[len(sorted)/2], sorted[len(sorted)*95/100]
	if cut := math.Max(med+8*(q-med), 2*q); cut > lo && cut < hi {
		hi = cut
	}
	if hi <= lo {
		hi = lo + math.Max(math.Abs(lo), 1)
	}
	return lo, hi
}

// DynamicsSVG plots the top series (those with the costliest findings) as lines
// over the iterations, with their features marked as shaded spans and
// labelled where the label fits without touching another.
func DynamicsSVG(w io.Writer, r *trend.Result, top int) error {
	if top <= 0 {
		top = 4
	}
	var picked []int
	seen := map[*trend.Series]bool{}
	for _, f := range r.Findings {
		if !seen[f.Series] && len(picked) < top {
			seen[f.Series] = true
			for i, s := range r.Series {
				if s == f.Series {
					picked = append(picked, i)
				}
			}
		}
	}
	height := svgMargin*2 + 30 + svgPanel*float64(max(len(picked), 1))
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", svgWidth, height, svgWidth, height)
	fmt.Fprintf(bw, `<title>Dynamics</title><rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="%.0f" font-size="14">%s</text>`+"\n",
		svgMargin, svgMargin+10, Esc(fit("Iterations: "+DynamicsSource(r.Source), (svgWidth-2*svgMargin)*labelSize/14)))
	if len(picked) == 0 {
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f">No relevant change over the iterations.</text>`+"\n", svgMargin, svgMargin+50)
	}
	colours := map[dynamics.Kind]string{dynamics.Peak: "#e4572e", dynamics.Dip: "#29335c", dynamics.StepUp: "#c77d00",
		dynamics.StepDown: "#3d7ea6", dynamics.TrendUp: "#a8201a", dynamics.TrendDown: "#4f772d", dynamics.Periodic: "#7b4fa8"}
	for p, i := range picked {
		s := r.Series[i]
		y0 := svgMargin + 30 + svgPanel*float64(p)
		x0, x1 := svgLeft, svgWidth-svgMargin
		top := y0 + 20 + labelLanes*labelLineGap // the plot starts below the label lanes
		ph := svgPanel - 40 - labelLanes*labelLineGap
		lo, hi := valueRange(s.Values)
		xAt := func(k float64) float64 { return x0 + (x1-x0)*k/math.Max(1, float64(len(s.Values)-1)) }
		yAt := func(v float64) float64 { return top + ph*(1-(math.Min(v, hi)-lo)/(hi-lo)) }
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", x0, y0+12,
			Esc(fit(fmt.Sprintf("%s on %s: %s", s.Region, s.Location, s.Metric), (x1-x0)*labelSize/11)))
		var starts []float64
		var texts []string
		var mine []trend.Finding
		for _, f := range r.Findings {
			if f.Series == s {
				mine = append(mine, f)
			}
		}
		for _, f := range mine {
			a, b := xAt(float64(f.Feature.From)-0.5), xAt(float64(f.Feature.To)+0.5)
			if f.Feature.Kind == dynamics.Periodic {
				// A tick at each of its places, not a span over the run.
				for i := f.Feature.From; i <= f.Feature.To && f.Feature.Period > 0; i += f.Feature.Period {
					fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="1.5" height="%.1f" fill="%s" fill-opacity="0.5"><title>%s</title></rect>`+"\n",
						xAt(float64(i))-0.75, top, ph, colours[f.Feature.Kind], Esc(sentence(f)))
				}
			} else {
				fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.25"><title>%s</title></rect>`+"\n",
					math.Max(a, x0), top, math.Max(1, math.Min(b, x1)-math.Max(a, x0)), ph, colours[f.Feature.Kind], Esc(sentence(f)))
			}
			starts = append(starts, math.Max(a, x0))
			texts = append(texts, f.Feature.Kind.String())
		}
		lanes, xs := placeLabels(starts, texts, x1)
		left := 0
		for k, l := range lanes {
			if l < 0 {
				left++
				continue
			}
			fmt.Fprintf(bw, `<text class="label" x="%.1f" y="%.1f" fill="%s" font-size="%.0f">%s<title>%s</title></text>`+"\n",
				xs[k], y0+20+labelLineGap*float64(l+1)-3, colours[mine[k].Feature.Kind], labelSize, texts[k], Esc(sentence(mine[k])))
		}
		var pts []string
		for k, v := range s.Values {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(float64(k)), yAt(v)))
		}
		fmt.Fprintf(bw, `<polyline points="%s" fill="none" stroke="#222" stroke-width="1"/>`+"\n", strings.Join(pts, " "))
		// Values above the axis, cut at its top: a caret each, the value
		// in its tooltip.
		for k, v := range s.Values {
			if v > hi {
				x := xAt(float64(k))
				fmt.Fprintf(bw, `<path d="M%.1f,%.1f l-3,5 h6 z" fill="#c00"><title>iteration %d: %s (above the axis)</title></path>`+"\n",
					x, top, uint64(k)*s.Width, amount(v, s.Unit))
			}
		}
		fmt.Fprintf(bw, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#999"/>`+"\n", x0, top+ph, x1, top+ph)
		fmt.Fprintf(bw, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			x0-4, top+4, axisAmount(hi, s.Unit), x0-4, top+ph, axisAmount(lo, s.Unit))
		last := fmt.Sprintf("iteration %d", s.Iterations-1)
		if left > 0 {
			last = fmt.Sprintf("%d more features unlabelled (hover the spans) · %s", left, last)
		}
		fmt.Fprintf(bw, `<text x="%.0f" y="%.1f">0</text><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			x0, top+ph+12, x1, top+ph+12, last)
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// DynamicsSource says where the iterations of a dynamics result come from.
func DynamicsSource(s trend.Source) string {
	switch {
	case s.Invocations && s.Between:
		return fmt.Sprintf("the intervals between consecutive calls of %q (no phase series in the trace, no region of the program that carries them)", s.Region)
	case s.Invocations:
		return fmt.Sprintf("the invocations of %q (no phase series in the trace)", s.Region)
	case s.Region != "":
		return fmt.Sprintf("the phase series of %q", s.Region)
	}
	return "the phase series"
}
