package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
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

// openAllProcs opens the trace files named by paths, at least one (else it
// is a usage error), with procs workers. A directory stands for the *.hmb
// files in it (the ranks of a run: HMB_OUTPUT), in the order of their run
// name and rank; they must be the files of one run (oneRun). The files are
// opened (and their checksums verified) on the workers.
func openAllProcs(paths []string, procs int) ([]*tracefile.File, error) {
	if len(paths) == 0 {
		return nil, usageError{"want at least one trace file or directory"}
	}
	// The files to open, and the groups a directory makes: they are put
	// in run and rank order once their headers are read.
	var names []string
	type dirFiles struct {
		path       string
		first, end int // in names
	}
	var dirs []dirFiles
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			names = append(names, p)
			continue
		}
		inDir, err := traceFilesIn(p)
		if err == nil && len(inDir) == 0 {
			err = fmt.Errorf("%s: a directory with no trace files (*.hmb) in it", p)
		}
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, dirFiles{p, len(names), len(names) + len(inDir)})
		names = append(names, inDir...)
	}
	files := make([]*tracefile.File, len(names))
	err := parallel.Do(procs, len(names), func(i int) error {
		f, err := tracefile.Open(names[i])
		files[i] = f
		return err
	})
	if err != nil {
		// Workers may have opened files past the one that failed.
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
		return nil, err
	}
	for _, d := range dirs {
		ranks := files[d.first:d.end]
		sort.SliceStable(ranks, func(i, j int) bool {
			a, b := &ranks[i].Header, &ranks[j].Header
			if a.Name != b.Name {
				return a.Name < b.Name
			}
			return a.Rank < b.Rank
		})
		if err := oneRun(d.path, ranks); err != nil {
			closeAll(files)
			return nil, err
		}
	}
	return files, nil
}

// procsFlag adds -procs to a command that reads traces in parallel.
func procsFlag(fs *flag.FlagSet) *int {
	return fs.Int("procs", 0, "workers reading locations and files in parallel (default HMB_TOOL_PROCS, else GOMAXPROCS; 1 reads sequentially); the output is the same for any number")
}

// openProcs resolves -procs and opens the files with that many workers.
func openProcs(paths []string, flagProcs int) ([]*tracefile.File, int, error) {
	procs, err := parallel.Procs(flagProcs)
	if err != nil {
		return nil, 0, usageError{"-procs: " + err.Error()}
	}
	files, err := openAllProcs(paths, procs)
	return files, procs, err
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
