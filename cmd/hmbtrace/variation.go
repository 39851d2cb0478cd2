package main

import (
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
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
	insitu := fs.Bool("insitu", false, "of a run archive, the analysis the ranks ran on their own events at MPI_Finalize (its results; the time-dominant region, default synchronization), not one of its ranks' traces")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sync, err := filter.ParsePatternList(*syncList)
	if err != nil {
		return usageError{fmt.Sprintf("-sync: %v", err)}
	}
	var v *variation.Variation
	if *insitu || resultsOnly(fs.Args()) {
		if *region != "" || *syncList != "" {
			return usageError{"-insitu: the ranks chose the region and took the default synchronization; -region and -sync need the events"}
		}
		v, err = inSituVariation(fs.Args())
	} else {
		v, err = variationOfFiles(fs.Args(), *procsOpt, variation.Options{Region: *region, Sync: sync})
	}
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

// variationOfFiles runs the analysis on the traces at paths.
func variationOfFiles(paths []string, flagProcs int, opt variation.Options) (*variation.Variation, error) {
	files, procs, err := openProcs(paths, flagProcs)
	if err != nil {
		return nil, err
	}
	defer closeAll(files)
	if err := requireEvents("hmbtrace variation (segments and SOS-times are cut from the events; -insitu reads the analysis the ranks ran)", files); err != nil {
		return nil, err
	}
	opt.Procs = procs
	return variation.Analyze(files, opt)
}

// inSituVariation returns the analysis the ranks ran in-situ, which a run
// archive's results hold, or the error it ended with.
func inSituVariation(paths []string) (*variation.Variation, error) {
	b, path, err := inSituResult(paths, tracefile.ResultVariation, "variation analysis")
	if err != nil {
		return nil, err
	}
	var in variation.InSitu
	if err := variation.Decode(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if in.Variation == nil {
		return nil, fmt.Errorf("%s: the ranks' analysis at MPI_Finalize: %s", path, in.Error)
	}
	return in.Variation, nil
}
