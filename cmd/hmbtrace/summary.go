package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runSummary(args []string, out io.Writer) error {
	fs := newFlags("summary")
	width := fs.Int("width", summary.DefaultNameWidth, "print at most this many characters of a region's name, cutting the middle of longer ones (0: full names)")
	tsv := fs.Bool("tsv", false, "print only the flat profile, with full names: <region>\\t<visits>\\t<inclusive-ns>\\t<exclusive-ns>")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *width < 0 {
		return usageError{fmt.Sprintf("-width %d: want 0 (full names) or more", *width)}
	}
	files, err := openAll(fs.Args())
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

// openAll opens the trace files named by paths, at least one (else it is
// a usage error). A directory stands for
// the *.hmb files in it (the ranks of a run: HMB_OUTPUT), in the order of
// their run name and rank.
func openAll(paths []string) ([]*tracefile.File, error) {
	if len(paths) == 0 {
		return nil, usageError{"want at least one trace file or directory"}
	}
	var files []*tracefile.File
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			closeAll(files)
			return nil, err
		}
		if !fi.IsDir() {
			f, err := tracefile.Open(p)
			if err != nil {
				closeAll(files)
				return nil, err
			}
			files = append(files, f)
			continue
		}
		inDir, err := traceFilesIn(p)
		if err == nil && len(inDir) == 0 {
			err = fmt.Errorf("%s: a directory with no trace files (*.hmb) in it", p)
		}
		if err != nil {
			closeAll(files)
			return nil, err
		}
		var ranks []*tracefile.File
		for _, q := range inDir {
			f, err := tracefile.Open(q)
			if err != nil {
				closeAll(files)
				closeAll(ranks)
				return nil, err
			}
			ranks = append(ranks, f)
		}
		sort.SliceStable(ranks, func(i, j int) bool {
			a, b := &ranks[i].Header, &ranks[j].Header
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			return a.Rank < b.Rank
		})
		files = append(files, ranks...)
	}
	return files, nil
}

// traceFilesIn lists the *.hmb files of directory dir.
func traceFilesIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".hmb") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, nil
}

func closeAll(files []*tracefile.File) {
	for _, f := range files {
		f.Close()
	}
}
