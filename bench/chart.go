package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writeSVG draws the section's medians as dots with min–max whiskers, one
// line per subject and metric, on a log scale where the values span more
// than two decades.
func (r *report) writeSVG(dir string) error {
	if len(r.rows) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s", r.name, r.about)
	var labels []string
	var medians, lows, highs plotter.Values
	lo, hi := math.Inf(1), math.Inf(-1)
	metrics := map[string]bool{}
	for _, x := range r.rows {
		metrics[x.metric] = true
	}
	for i := len(r.rows) - 1; i >= 0; i-- { // top to bottom as in the table
		x := r.rows[i]
		m := x.median()
		a, b := x.minMax()
		label := x.subject
		if len(metrics) > 1 {
			label += " (" + x.metric + ")"
		}
		// Trailing spaces keep the labels off the plot where a renderer
		// substitutes a wider font than the one the widths were taken with.
		labels = append(labels, label+"     ")
		medians = append(medians, m)
		lows, highs = append(lows, a), append(highs, b)
		lo, hi = math.Min(lo, a), math.Max(hi, b)
	}
	logScale := lo > 0 && hi/lo > 100
	if logScale {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = lo/2, hi*2
	} else {
		p.X.Min, p.X.Max = math.Min(0, lo), hi*1.1
	}
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	errs := make(plotter.XErrors, len(medians))
	pts := make(plotter.XYs, len(medians))
	for i := range medians {
		pts[i] = plotter.XY{X: medians[i], Y: float64(i)}
		errs[i] = struct{ Low, High float64 }{Low: medians[i] - lows[i], High: highs[i] - medians[i]}
	}
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	dots.GlyphStyle.Radius = vg.Points(3.5)
	p.Add(dots)
	whiskers, err := plotter.NewXErrorBars(struct {
		plotter.XYer
		plotter.XErrorer
	}{pts, errs})
	if err != nil {
		return err
	}
	p.Add(whiskers)
	p.Add(plotter.NewGrid())
	p.NominalY(labels...)
	p.X.Label.Text = "median, whiskers min–max"
	height := vg.Length(40+18*len(labels)) * vg.Millimeter / 4
	path := filepath.Join(dir, strings.ReplaceAll(r.name, "/", "-")+".svg")
	return p.Save(22*vg.Centimeter, max(height, 6*vg.Centimeter), path)
}
