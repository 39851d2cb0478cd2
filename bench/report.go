package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// report collects a section's samples: per subject and metric, one value
// per round.
type report struct {
	section
	rows    []*row
	skipped []string
	notes   []string
	elapsed time.Duration
}

type row struct {
	subject, metric string
	values          []float64
}

func newReport(s section) *report { return &report{section: s} }

// add records one sample.
func (r *report) add(subject, metric string, v float64) {
	for _, x := range r.rows {
		if x.subject == subject && x.metric == metric {
			x.values = append(x.values, v)
			return
		}
	}
	r.rows = append(r.rows, &row{subject: subject, metric: metric, values: []float64{v}})
}

func (r *report) skip(subject, why string) {
	r.skipped = append(r.skipped, fmt.Sprintf("%s: %s", subject, why))
}

func (r *report) note(format string, a ...any) { r.notes = append(r.notes, fmt.Sprintf(format, a...)) }

func (x *row) median() float64 { return median(x.values) }

// median returns the median of values, NaN if there are none.
func median(values []float64) float64 {
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func (x *row) minMax() (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x.values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// ratio returns a row's median over the reference subject's, same metric.
func (r *report) ratio(x *row) float64 {
	for _, ref := range r.rows {
		if ref.subject == r.reference && ref.metric == x.metric {
			if m := ref.median(); m != 0 {
				return x.median() / m
			}
		}
	}
	return math.NaN()
}

func format(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "-"
	case a >= 1e6:
		return fmt.Sprintf("%.3g", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func (r *report) writeTable(w io.Writer) {
	fmt.Fprintf(w, "== %s: %s (%d rounds, %.1f s) ==\n", r.name, r.about, r.maxRounds(), r.elapsed.Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "subject\tmetric\tmedian\tmin–max\tvs "+r.reference)
	for _, x := range r.rows {
		lo, hi := x.minMax()
		ratio := "-"
		if q := r.ratio(x); !math.IsNaN(q) {
			ratio = fmt.Sprintf("%.2fx", q)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s–%s\t%s\n", x.subject, x.metric, format(x.median()), format(lo), format(hi), ratio)
	}
	tw.Flush()
	for _, n := range r.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	for _, s := range r.skipped {
		fmt.Fprintf(w, "  skipped: %s\n", s)
	}
	fmt.Fprintln(w)
}

func (r *report) maxRounds() int {
	n := 0
	for _, x := range r.rows {
		n = max(n, len(x.values))
	}
	return n
}

// writeTSV prints the medians, one line per subject and metric.
func (r *report) writeTSV(w io.Writer) {
	for _, x := range r.rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%g\n", r.name, x.subject, strings.ReplaceAll(x.metric, "\t", " "), x.median())
	}
}
