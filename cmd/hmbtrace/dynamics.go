package main

import (
	"io"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
)

func runDynamics(args []string, out io.Writer) error {
	fs := newFlags("dynamics")
	tsv := fs.Bool("tsv", false, "print <region>\\t<location>\\t<metric>\\t<kind>\\t<from-iter>\\t<to-iter>\\t<severity> for every feature")
	svg := fs.String("svg", "", "plot the series with the worst features, features marked, to this SVG file")
	top := fs.Int("top", 10, "features to describe (0: all); series to plot with -svg")
	region := fs.String("region", "", "without a phase series: the region whose invocations are the iterations (default the time-dominant one)")
	minSev := fs.Float64("min-severity", 0, "drop features costing less than this fraction of a series' total (seed 004's thresholdTime)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *minSev < 0 || *minSev >= 1 {
		return usageError{"-min-severity wants a fraction in [0, 1)"}
	}
	files, err := openAll(fs.Args())
	if err != nil {
		return err
	}
	defer closeAll(files)
	opt := trend.Options{Region: *region}
	opt.Dynamics.MinRelativeSeverity = *minSev
	r, err := trend.Analyze(files, opt)
	if err != nil {
		return err
	}
	if *svg != "" {
		if err := writeFile(*svg, func(w io.Writer) error { return r.WriteSVG(w, *top) }); err != nil {
			return err
		}
	}
	if *tsv {
		return r.WriteTSV(out)
	}
	return r.WriteText(out, *top)
}
