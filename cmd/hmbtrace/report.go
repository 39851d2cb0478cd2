package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/report"
)

func runReport(args []string, out io.Writer) error {
	fs := newFlags("report")
	output := fs.String("o", "report.html", "write the HTML page to this file")
	title := fs.String("title", "", "the page's title (default: the trace files' names)")
	region := fs.String("region", "", "segment the variation heat map by this region instead of the time-dominant one")
	syncList := fs.String("sync", "", "more synchronization regions for the heat map: comma-separated wildcard patterns")
	findings := fs.Int("top", 10, "dynamics findings to list")
	rows := fs.Int("rows", report.DefaultRows, "timeline rows to draw before consecutive ranks are drawn as groups")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	paths := fs.Args()
	if *output == "" {
		return usageError{"-o wants a file name"}
	}
	if *findings < 1 {
		return usageError{"-top wants at least 1"}
	}
	if *rows < 1 {
		return usageError{"-rows wants at least 1"}
	}
	sync, err := filter.ParsePatternList(*syncList)
	if err != nil {
		return usageError{fmt.Sprintf("-sync: %v", err)}
	}
	// The page is written to a temporary file next to it: name the page,
	// not that file, when its directory is missing.
	if _, err := os.Stat(filepath.Dir(*output)); err != nil {
		return fmt.Errorf("%s: %w", *output, err)
	}
	files, procs, err := openProcs(paths, *procsOpt)
	if err != nil {
		return err
	}
	defer closeAll(files)
	if err := requireEvents("hmbtrace report (its timeline, heat map and analyses)", files); err != nil {
		return err
	}
	opt := report.Options{Title: *title, Findings: *findings, Procs: procs, Rows: *rows}
	opt.Variation.Region, opt.Variation.Sync = *region, sync
	opt.Dynamics.Region = *region
	if err := writeFile(*output, func(w io.Writer) error { return report.Write(w, files, opt) }); err != nil {
		return oneLine(err)
	}
	st, err := os.Stat(*output)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %.1f MiB\n", *output, float64(st.Size())/(1<<20))
	return nil
}
