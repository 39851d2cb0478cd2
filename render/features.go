package render

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
)

// DescribeFeaturesLimit is the number of features DescribeFeatures tells: a person reading
// a plot names a handful, the largest.
const DescribeFeaturesLimit = 10

// DescribeFeatures turns the features of a series of n iterations into sentences a
// person would say looking at the plot: first what happens in time order,
// with the quiet stretches between ("flat until iteration 99"), then the
// time the features add over the baseline, largest first (a fall is told
// by the slow stretch it ends), and the time the dips save. Of more than DescribeFeaturesLimit features it tells the largest by
// |Severity| and counts the others, calling the stretches that hold them
// "minor changes" instead of "flat". unit names the values' unit; severities
// are in unit × iterations, which is the unit itself when the values are
// per-iteration amounts such as times. Iterations are numbered from 0, as in
// dynamics.Feature.
func DescribeFeatures(features []dynamics.Feature, n int, unit string) string {
	return DescribeFeaturesWith(features, n, func(v float64) string { return quantity(v, unit) })
}

// DescribeFeaturesWith is DescribeFeatures with the amounts (value units × iterations)
// written by format, so that a caller can word them as it does elsewhere.
func DescribeFeaturesWith(features []dynamics.Feature, n int, format func(float64) string) string {
	if n <= 0 {
		return "Empty series."
	}
	if len(features) == 0 {
		return fmt.Sprintf("No significant change over the %d iterations.", n)
	}
	// dynamics.Periodic peaks are the series' regular work: told apart from the
	// changes, after them.
	var fs, periodic []dynamics.Feature
	for _, f := range features {
		if f.Kind == dynamics.Periodic {
			periodic = append(periodic, f)
		} else {
			fs = append(fs, f)
		}
	}
	var omitted []dynamics.Feature
	if len(fs) > DescribeFeaturesLimit {
		slices.SortStableFunc(fs, func(a, b dynamics.Feature) int {
			return -cmpFloat(math.Abs(a.Severity), math.Abs(b.Severity))
		})
		fs, omitted = fs[:DescribeFeaturesLimit], fs[DescribeFeaturesLimit:]
	}
	// In time order of where each is told: a step at its first new
	// iteration, the others at their first.
	slices.SortStableFunc(fs, func(a, b dynamics.Feature) int { return toldAt(a) - toldAt(b) })
	// quiet names a stretch [from, to] without told features.
	quiet := func(from, to int) string {
		for _, f := range omitted {
			if f.To >= from && f.From <= to {
				return "minor changes"
			}
		}
		return "flat"
	}

	var b strings.Builder
	var parts []string
	next := 0 // first iteration not yet described
	for _, f := range fs {
		start := toldAt(f)
		p := phrase(f, n)
		if start > next+1 {
			parts = append(parts, quiet(next, start-1)+" until iteration "+fmt.Sprint(start-1))
			p = "then " + p
		}
		parts = append(parts, p)
		next = max(next, f.To+1)
	}
	if next < n-1 || len(fs) == 0 {
		parts = append(parts, quiet(next, n-1)+" to the end")
	}
	s := strings.Join(parts, ", ")
	if len(fs) == 0 {
		s = fmt.Sprintf("no change over the %d iterations", n)
	}
	b.WriteString(strings.ToUpper(s[:1]) + s[1:] + ".")
	for _, f := range periodic {
		fmt.Fprintf(&b, " A peak every %d iterations from iteration %d to %d (%d of them).", f.Period, f.From, f.To, f.Stability)
	}
	fs = append(fs, periodic...)
	if len(omitted) > 0 {
		fmt.Fprintf(&b, " %d smaller features are not told.", len(omitted))
	}

	var worse, better []dynamics.Feature
	for _, f := range fs {
		switch {
		case f.Severity > 0:
			worse = append(worse, f)
		case f.Severity < 0:
			better = append(better, f)
		}
	}
	rank := func(title string, list []dynamics.Feature) {
		if len(list) == 0 {
			return
		}
		slices.SortStableFunc(list, func(a, c dynamics.Feature) int {
			return -cmpFloat(math.Abs(a.Severity), math.Abs(c.Severity))
		})
		b.WriteString(" " + title + ": ")
		for i, f := range list {
			if i > 0 {
				b.WriteString("; ")
			}
			amount := format(math.Abs(f.Severity))
			switch {
			case f.Severity < 0:
				fmt.Fprintf(&b, "%s saves %s", shortPhrase(f, n), amount)
			case f.Kind == dynamics.StepDown || f.Kind == dynamics.TrendDown:
				fmt.Fprintf(&b, "the slower iterations before %s cost %s", shortPhrase(f, n), amount)
			case f.Kind == dynamics.Periodic:
				fmt.Fprintf(&b, "%s cost %s", shortPhrase(f, n), amount)
			default:
				fmt.Fprintf(&b, "%s costs %s", shortPhrase(f, n), amount)
			}
		}
		b.WriteString(".")
	}
	rank("Cost over the baseline, largest first", worse)
	rank("Saved", better)
	return b.String()
}

// toldAt returns the iteration DescribeFeatures places a feature at: the
// iteration before a step is still at the old level.
func toldAt(f dynamics.Feature) int {
	if f.Kind == dynamics.StepUp || f.Kind == dynamics.StepDown {
		return f.To
	}
	return f.From
}

// phrase names a feature with its place in time.
func phrase(f dynamics.Feature, n int) string {
	switch f.Kind {
	case dynamics.Peak, dynamics.Dip:
		if f.From == f.To {
			return fmt.Sprintf("%s at iteration %d", article(f.Kind), f.From)
		}
		return fmt.Sprintf("%s near iteration %d (iterations %d–%d)", article(f.Kind), (f.From+f.To)/2, f.From, f.To)
	case dynamics.StepUp, dynamics.StepDown:
		return fmt.Sprintf("%s at iteration %d", article(f.Kind), f.To)
	default:
		if f.To >= n-1 {
			return fmt.Sprintf("%s from iteration %d to the end", article(f.Kind), f.From)
		}
		return fmt.Sprintf("%s from iteration %d to %d", article(f.Kind), f.From, f.To)
	}
}

// shortPhrase names a feature for the ranking.
func shortPhrase(f dynamics.Feature, n int) string {
	switch f.Kind {
	case dynamics.Peak, dynamics.Dip:
		return fmt.Sprintf("the %s at %d", noun(f.Kind), (f.From+f.To)/2)
	case dynamics.Periodic:
		return fmt.Sprintf("the peaks every %d iterations", f.Period)
	case dynamics.StepUp, dynamics.StepDown:
		return fmt.Sprintf("the %s at %d", noun(f.Kind), f.To)
	default:
		return fmt.Sprintf("the %s from %d", noun(f.Kind), f.From)
	}
}

func noun(k dynamics.Kind) string {
	switch k {
	case dynamics.StepUp:
		return "step increase"
	case dynamics.StepDown:
		return "step decrease"
	}
	return k.String()
}

func article(k dynamics.Kind) string {
	w := noun(k)
	if strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}

// quantity writes v to three significant digits, without an exponent
// between 1000 and a billion (1221 ms, not 1.22e+03 ms).
func quantity(v float64, unit string) string {
	s := fmt.Sprintf("%.3g", v)
	if v >= 1000 && v < 1e9 {
		s = fmt.Sprintf("%.0f", v)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
