package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// oneRun checks that the files read from directory dir are those of one
// run. A directory may hold files of several runs (a build that ran a test
// program into the same HMB_OUTPUT, an earlier run with more ranks): merged,
// they would give two rank 0s, messages whose peers are in the other run,
// and profiles summed over unrelated programs. Files named one by one are
// read together as given, which is how to merge such files on purpose.
func oneRun(dir string, files []*tracefile.File) error {
	runs := tracefile.Runs(files)
	if len(runs) == 1 {
		if a, b, ok := tracefile.SameRank(files); ok {
			return fmt.Errorf("%s: %s and %s both hold rank %d of run %q; name the files to read (a glob or a list of files)",
				dir, filepath.Base(files[a].Path), filepath.Base(files[b].Path), files[a].Header.Rank, runs[0].Name)
		}
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds the files of %d runs, which are not merged:", dir, len(runs))
	for _, r := range runs {
		h := &files[r.Files[0]].Header
		fmt.Fprintf(&b, "\n  %q (%s), started %s, %s: %s", r.Name, program(h.Program), r.Start.Format("2006-01-02 15:04:05"),
			rankList(r.Ranks), fileNames(files, r.Files))
	}
	fmt.Fprintf(&b, "\nname the files of one run: %s, or a list of files (files named one by one are read together)", runGlob(dir, files, runs))
	return fmt.Errorf("%s", b.String())
}

// program is a run's command name, without its arguments or directory.
func program(cmdline string) string {
	name, _, _ := strings.Cut(cmdline, " ")
	if name == "" {
		return "no command line"
	}
	return filepath.Base(name)
}

func rankList(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	parts := make([]string, 0, len(ranks))
	for i, r := range ranks {
		if i == 5 && len(ranks) > 6 {
			parts = append(parts, fmt.Sprintf("... (%d ranks)", len(ranks)))
			break
		}
		parts = append(parts, fmt.Sprint(r))
	}
	return "ranks " + strings.Join(parts, ", ")
}

func fileNames(files []*tracefile.File, idx []int) string {
	var names []string
	for i, k := range idx {
		if i == 3 && len(idx) > 4 {
			names = append(names, fmt.Sprintf("... (%d files)", len(idx)))
			break
		}
		names = append(names, filepath.Base(files[k].Path))
	}
	return strings.Join(names, ", ")
}

// runGlob suggests a glob that picks the files of one run, the one with
// the most files (the latest of equals): NAME.*.hmb, as the files are
// named, if it matches that run's files and no others; else the first
// file's path.
func runGlob(dir string, files []*tracefile.File, runs []tracefile.Run) string {
	best := 0
	for i, r := range runs {
		if len(r.Files) >= len(runs[best].Files) {
			best = i
		}
	}
	r := runs[best]
	glob := filepath.Join(dir, r.Name+".*.hmb")
	in := map[int]bool{}
	for _, k := range r.Files {
		in[k] = true
	}
	for i, f := range files {
		if ok, err := filepath.Match(glob, f.Path); err != nil || ok != in[i] {
			return "e.g. " + files[r.Files[0]].Path
		}
	}
	return "e.g. " + glob
}
