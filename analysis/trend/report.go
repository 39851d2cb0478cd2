package trend

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
)

// amount formats a severity in the series' unit.
func amount(v float64, unit string) string {
	if unit != "ns" {
		return fmt.Sprintf("%.4g %s", v, unit)
	}
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.3g s", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3g ms", v/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3g µs", v/1e3)
	}
	return fmt.Sprintf("%.3g ns", v)
}

func (f Finding) sentence() string {
	what := map[dynamics.Kind]string{dynamics.Peak: "a peak", dynamics.Dip: "a dip", dynamics.StepUp: "a step up",
		dynamics.StepDown: "a step down", dynamics.TrendUp: "an upward trend", dynamics.TrendDown: "a downward trend"}[f.Feature.Kind]
	where := fmt.Sprintf("at iteration %d", f.From)
	if f.To > f.From {
		where = fmt.Sprintf("over iterations %d–%d", f.From, f.To)
	}
	effect := "costing"
	sev := f.Severity
	if sev < 0 {
		effect, sev = "saving", -sev
	}
	return fmt.Sprintf("%q on %s, %s: %s %s, %s %s", f.Series.Region, f.Series.Location, f.Series.Metric, what, where, effect, amount(sev, f.Series.Unit))
}

// WriteText writes the findings, worst degradation first (at most top of
// them; all if top <= 0), then a sentence per series that has any.
func (r *Result) WriteText(w io.Writer, top int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Iterations: %s; %d series analysed.\n", r.Source, len(r.Series))
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(bw, "\nNo relevant change over the iterations: every series is flat within its noise.")
		return bw.Flush()
	}
	fmt.Fprintln(bw, "\nDegradations first:")
	shown := r.Findings
	if top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	for i, f := range shown {
		fmt.Fprintf(bw, "%3d. %s\n", i+1, f.sentence())
	}
	if len(shown) < len(r.Findings) {
		fmt.Fprintf(bw, "     … and %d more (-top 0 lists all)\n", len(r.Findings)-len(shown))
	}
	fmt.Fprintln(bw, "\nPer series:")
	for i, s := range r.Series {
		a := r.Analyses[i]
		if len(a.Features) == 0 {
			continue
		}
		unit := s.Unit // severities are value × iterations: ns of time lost
		fmt.Fprintf(bw, "  %q on %s, %s: %s (dynamic energy %.0f%% of the total)\n", s.Region, s.Location, s.Metric,
			dynamics.Describe(a.Features, a.N, unit), 100*a.Energy.Variability())
	}
	return bw.Flush()
}

// WriteTSV writes every finding:
// <region>\t<location>\t<metric>\t<kind>\t<from-iter>\t<to-iter>\t<severity>.
func (r *Result) WriteTSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, f := range r.Findings {
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%d\t%d\t%g\n", f.Series.Region, f.Series.Location, f.Series.Metric, f.Feature.Kind, f.From, f.To, f.Severity)
	}
	return bw.Flush()
}

// WriteSVG plots the top series (those with the worst findings) as lines
// over the iterations, with their features marked as shaded spans.
func (r *Result) WriteSVG(w io.Writer, top int) error {
	if top <= 0 {
		top = 4
	}
	var picked []int
	seen := map[*Series]bool{}
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
	const width, panel, margin, left = 900.0, 170.0, 20.0, 70.0
	height := margin*2 + 30 + panel*float64(max(len(picked), 1))
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<title>Dynamics</title><rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="%.0f" font-size="14">Iterations: %s</text>`+"\n", margin, margin+10, html.EscapeString(r.Source))
	if len(picked) == 0 {
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f">No relevant change over the iterations.</text>`+"\n", margin, margin+50)
	}
	colours := map[dynamics.Kind]string{dynamics.Peak: "#e4572e", dynamics.Dip: "#29335c", dynamics.StepUp: "#f3a712",
		dynamics.StepDown: "#669bbc", dynamics.TrendUp: "#a8201a", dynamics.TrendDown: "#4f772d"}
	for p, i := range picked {
		s := r.Series[i]
		y0 := margin + 30 + panel*float64(p)
		x0, x1 := left, width-margin
		ph := panel - 40
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range s.Values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if hi <= lo {
			hi = lo + 1
		}
		xAt := func(k float64) float64 { return x0 + (x1-x0)*k/math.Max(1, float64(len(s.Values)-1)) }
		yAt := func(v float64) float64 { return y0 + 20 + ph*(1-(v-lo)/(hi-lo)) }
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", x0, y0+12,
			html.EscapeString(fmt.Sprintf("%s on %s: %s", s.Region, s.Location, s.Metric)))
		for _, f := range r.Findings {
			if f.Series != s {
				continue
			}
			a, b := xAt(float64(f.Feature.From)-0.5), xAt(float64(f.Feature.To)+0.5)
			fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.25"><title>%s</title></rect>`+"\n",
				math.Max(a, x0), y0+20, math.Max(1, math.Min(b, x1)-math.Max(a, x0)), ph, colours[f.Feature.Kind], html.EscapeString(f.sentence()))
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" fill="%s" font-size="10">%s</text>`+"\n", math.Max(a, x0)+2, y0+30, colours[f.Feature.Kind], f.Feature.Kind)
		}
		var pts []string
		for k, v := range s.Values {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(float64(k)), yAt(v)))
		}
		fmt.Fprintf(bw, `<polyline points="%s" fill="none" stroke="#222" stroke-width="1"/>`+"\n", strings.Join(pts, " "))
		fmt.Fprintf(bw, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#999"/>`+"\n", x0, y0+20+ph, x1, y0+20+ph)
		fmt.Fprintf(bw, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			x0-4, y0+24, amount(hi, s.Unit), x0-4, y0+20+ph, amount(lo, s.Unit))
		fmt.Fprintf(bw, `<text x="%.0f" y="%.1f">0</text><text x="%.0f" y="%.1f" text-anchor="end">iteration %d</text>`+"\n",
			x0, y0+20+ph+12, x1, y0+20+ph+12, s.Iterations-1)
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}
