package main

import (
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/render"
)

func init() {
	helpOf["variation"] = `Cuts every location into segments at the invocations of one region and scores each segment's
synchronization-oblivious segment time (SOS-time: its duration less the time in synchronization
regions nested in it) by its robust z-score among all segments (Weber et al., Detection and
Visualization of Performance Variations).
` + variation.DominanceRule + "\n"
}

func runVariation(args []string, out io.Writer) error {
	fs := newFlags("variation")
	region := fs.String("region", "", "segment by this region instead of the time-dominant one")
	syncList := fs.String("sync", "", "more synchronization regions: comma-separated wildcard patterns")
	tsv := fs.Bool("tsv", false, "print every segment: location, segment, start ns, SOS ns, score")
	svg := fs.String("svg", "", "write the hot/cold view to this SVG file")
	minScore := fs.Float64("z", variation.DefaultMinScore, "robust z-score from which a segment stands out")
	top := fs.Int("top", 20, "list at most this many segments that stand out (0: all)")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sync, err := filter.ParsePatternList(*syncList)
	if err != nil {
		return usageError{fmt.Sprintf("-sync: %v", err)}
	}
	files, procs, err := openProcs(fs.Args(), *procsOpt)
	if err != nil {
		return err
	}
	defer closeAll(files)
	if err := requireEvents("hmbtrace variation (segments and SOS-times are cut from the events)", files); err != nil {
		return err
	}
	v, err := variation.Analyze(files, variation.Options{Region: *region, Sync: sync, Procs: procs})
	if err != nil {
		return err
	}
	if *svg != "" {
		if err := writeFile(*svg, func(w io.Writer) error { return render.VariationSVG(w, v) }); err != nil {
			return err
		}
	}
	if *tsv {
		return render.VariationTSV(out, v)
	}
	if err := render.VariationText(out, v, *minScore, *top); err != nil {
		return err
	}
	if *svg != "" {
		fmt.Fprintf(out, "\nhot/cold view: %s\n", *svg)
	}
	return nil
}
