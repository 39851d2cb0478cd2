package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/summary"
)

func runSummary(args []string, out io.Writer) error {
	fs := newFlags("summary")
	width := fs.Int("width", summary.DefaultNameWidth, "print at most this many characters of a region's name, cutting the middle of longer ones (0: full names)")
	tsv := fs.Bool("tsv", false, "print only the flat profile, with full names: <region>\\t<visits>\\t<inclusive-ns>\\t<exclusive-ns>; of a run, merged over its ranks (the visits timed, the times in ns summed)")
	ranks := fs.Bool("ranks", false, fmt.Sprintf("tell each rank of a run of more than %d ranks (its file's facts, its inclusive time per region, its buffer's story), as for a run of fewer; without it, such a run is told as a whole: its profile with min, mean and max over the ranks and the slowest rank, and one story of its buffers", summary.RunRanks))
	procs := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *width < 0 {
		return usageError{fmt.Sprintf("-width %d: want 0 (full names) or more", *width)}
	}
	files, _, err := openProcs(fs.Args(), *procs)
	if err != nil {
		return err
	}
	defer closeAll(files)
	if *tsv {
		return summary.WriteTSV(out, files)
	}
	opt := summary.Options{NameWidth: *width, Ranks: *ranks}
	if *width == 0 {
		opt.NameWidth = -1
	}
	return summary.WriteOptions(out, files, opt)
}

// procsFlag adds -procs to a command that reads traces in parallel.
func procsFlag(fs *flag.FlagSet) *int {
	return fs.Int("procs", 0, "workers reading locations and files in parallel (default HMB_TOOL_PROCS, else GOMAXPROCS; 1 reads sequentially); the output is the same for any number")
}
