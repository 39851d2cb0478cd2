package main

import (
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/render"
)

func init() {
	helpOf["score"] = `Per region, as Score-P's scorep-score: visits, time, trace bytes and the estimated measurement
overhead, flagging the regions whose overhead is too large for their time (Oleynik, Automatic
Characterization of Performance Dynamics with Periscope, chapter 4); -g writes a filter file that
excludes them. MPI and OpenMP regions are never flagged: the run-time filter keeps them. The columns:
` + render.ScoreColumns(score.TotalOverhead) + "\n"
}

func runScore(args []string, out io.Writer) error {
	fs := newFlags("score")
	gen := fs.String("g", "", "write a filter file (HMB_FILTER_FILE) that excludes the flagged regions")
	threshold := fs.Float64("threshold", 100*score.DefaultThreshold, "flag regions whose relative overhead exceeds this many percent")
	property := fs.String("property", "total", "overhead property: total (the probes' whole cost) or prolog (the part inside the region's own time)")
	minShare := fs.Float64("min-share", 100*score.DefaultMinShare, "flag only regions with at least this many percent of all visits (0: any)")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	prop, err := score.ParseProperty(*property)
	if err != nil {
		return usageError{err.Error()}
	}
	if !(*threshold > 0) {
		return usageError{fmt.Sprintf("-threshold %v: want a positive percentage", *threshold)}
	}
	if !(*minShare >= 0 && *minShare <= 100) {
		return usageError{fmt.Sprintf("-min-share %v: want a percentage from 0 to 100", *minShare)}
	}
	opt := score.Options{Property: prop, Threshold: *threshold / 100, MinShare: *minShare / 100}
	if *minShare == 0 {
		opt.MinShare = -1 // any share
	}
	files, procs, err := openProcs(fs.Args(), *procsOpt)
	if err != nil {
		return err
	}
	defer closeAll(files)
	if err := requireEvents("hmbtrace score (trace bytes per region are counted from the events)", files); err != nil {
		return err
	}
	s, err := score.ComputeProcs(files, opt, procs)
	if err != nil {
		return err
	}
	if err := render.ScoreText(out, s); err != nil {
		return err
	}
	if *gen != "" {
		if err := writeFile(*gen, func(w io.Writer) error { return render.ScoreFilter(w, s) }); err != nil {
			return err
		}
		fmt.Fprintf(out, "filter file: %s (HMB_FILTER_FILE=%s excludes the %d flagged regions)\n", *gen, *gen, len(s.Flagged()))
	}
	return nil
}
