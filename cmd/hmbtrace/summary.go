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
	tsv := fs.Bool("tsv", false, "print only the flat profile, with full names: <region>\\t<visits>\\t<inclusive-ns>\\t<exclusive-ns>")
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
	opt := summary.Options{NameWidth: *width}
	if *width == 0 {
		opt.NameWidth = -1
	}
	return summary.WriteOptions(out, files, opt)
}

// procsFlag adds -procs to a command that reads traces in parallel.
func procsFlag(fs *flag.FlagSet) *int {
	return fs.Int("procs", 0, "workers reading locations and files in parallel (default HMB_TOOL_PROCS, else GOMAXPROCS; 1 reads sequentially); the output is the same for any number")
}
