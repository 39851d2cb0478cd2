package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func init() {
	helpOf["dynamics"] = `One series per region, location and metric, a value per iteration of the progress loop:
the phase series (m.Phase, HMB_PHASE), else the invocations of the time-dominant region
(Weber et al.). Each series is analysed as Oleynik describes (Haar wavelets, scale space):
its noise is estimated from its finest wavelet coefficients (a robust MAD, in logarithms
when the noise grows with the level), isolated outliers are set apart, and a peak, dip,
step or trend is reported only where it stands out of that noise at its scale. Adjacent
pieces of one monotone change are one trend. A feature's cost is the time it adds over the
series' baseline (the lowest level it holds for a while); no feature, nor all together,
costs more than the series. Features costing less than -min-share of the location's time
in the loop are not listed, and a region's feature that only echoes the same feature of a
region inside it is told once, at the inner region ("also in ... around it").
-tsv prints a header line, then
  <region> <location> <metric> <kind> <from-iter> <to-iter> <cost> <unit> <share-of-loop> <also-in>
cost in the unit × iterations (ns for times; negative for a dip).
`
}

func runDynamics(args []string, out io.Writer) error {
	fs := newFlags("dynamics")
	tsv := fs.Bool("tsv", false, "print a header line and one tab-separated line per finding")
	svg := fs.String("svg", "", "plot the series with the costliest findings, features marked, to this SVG file")
	top := fs.Int("top", 10, "findings to list (0: all); series to plot with -svg")
	region := fs.String("region", "", "without a phase series: the region whose invocations are the iterations (default the time-dominant one)")
	minShare := fs.Float64("min-share", trend.DefaultMinShare, "list features costing at least this fraction of the location's time in the loop (Oleynik's thresholdTime; 0 lists every feature that stands out of the noise)")
	insitu := fs.Bool("insitu", false, "of a run archive, the series the ranks cut at MPI_Finalize (its results: the phase series, else the segments of their variation analysis), not those of its ranks' traces")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *minShare < 0 || *minShare >= 1 {
		return usageError{fmt.Sprintf("-min-share %v: want a fraction in [0, 1)", *minShare)}
	}
	opt := trend.Options{Region: *region, MinShare: *minShare, Procs: *procsOpt}
	if *minShare == 0 {
		opt.MinShare = -1 // every feature that stands out of its noise
	}
	var r *trend.Result
	var err error
	if *insitu || resultsOnly(fs.Args()) {
		if *region != "" {
			return usageError{"-insitu: the ranks cut the iterations by the phase series or the time-dominant region; -region needs the events"}
		}
		r, err = inSituDynamics(fs.Args(), opt)
	} else {
		r, err = dynamicsOfFiles(fs.Args(), opt)
	}
	if err != nil {
		return err
	}
	if *svg != "" {
		if err := writeFile(*svg, func(w io.Writer) error { return render.DynamicsSVG(w, r, *top) }); err != nil {
			return err
		}
	}
	if *tsv {
		return render.DynamicsTSV(out, r)
	}
	return render.DynamicsText(out, r, *top)
}

// dynamicsOfFiles analyses the series of the traces at paths.
func dynamicsOfFiles(paths []string, opt trend.Options) (*trend.Result, error) {
	files, procs, err := openProcs(paths, opt.Procs)
	if err != nil {
		return nil, err
	}
	defer closeAll(files)
	if !phased(files) {
		// Without a phase series the iterations are the invocations of
		// the time-dominant region, found in the events.
		if err := requireEvents("hmbtrace dynamics without a phase series (HMB_PHASE; -insitu reads the series the ranks cut)", files); err != nil {
			return nil, err
		}
	}
	opt.Procs = procs
	return trend.Analyze(files, opt)
}

// inSituDynamics analyses the series the ranks cut in-situ, which a run
// archive's results hold: the phase series, or else the segments of the
// variation analysis the ranks ran.
func inSituDynamics(paths []string, opt trend.Options) (*trend.Result, error) {
	b, path, err := inSituResult(paths, tracefile.ResultDynamics, "phase series")
	if errors.Is(err, errNoResult) {
		v, err := inSituVariation(paths)
		if err != nil {
			return nil, err
		}
		src, series := trend.SegmentSeries(v)
		return trend.AnalyzeSeries(src, series, v.Notes, opt)
	}
	if err != nil {
		return nil, err
	}
	in, err := trend.DecodeInSitu(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return in.Analyze(opt)
}

// phased reports whether every location of files has a phase series.
func phased(files []*tracefile.File) bool {
	for _, f := range files {
		for _, l := range f.Locations {
			if l.Phase == nil {
				return false
			}
		}
	}
	return true
}
