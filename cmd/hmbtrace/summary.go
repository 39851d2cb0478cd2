package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runSummary(args []string, out io.Writer) error {
	fs := newFlags("summary")
	width := fs.Int("width", summary.DefaultNameWidth, "print at most this many characters of a region's name: a longer one loses its parameters, template arguments and namespaces, then its middle, never the function's own name (0: full names)")
	tsv := fs.Bool("tsv", false, "print only the flat profile, with full names: <region>\\t<visits>\\t<inclusive-ns>\\t<exclusive-ns>; of a run, merged over its ranks (the visits timed, the times in ns summed)")
	ranks := fs.Bool("ranks", false, fmt.Sprintf("tell each rank of a run of more than %d ranks (its file's facts, its inclusive time per region, its buffer's story), as for a run of fewer; without it, such a run is told as a whole: its profile with min, mean and max over the ranks and the slowest rank, and one story of its buffers", summary.RunRanks))
	insitu := fs.Bool("insitu", false, "of a run archive, print the run's profile the ranks reduced over MPI at MPI_Finalize (its results), not the one of its ranks' files; the regions still open then (main, MPI_Finalize) are not in it")
	procs := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *width < 0 {
		return usageError{fmt.Sprintf("-width %d: want 0 (full names) or more", *width)}
	}
	opt := summary.Options{NameWidth: *width, Ranks: *ranks}
	if *width == 0 {
		opt.NameWidth = -1
	}
	if *insitu || resultsOnly(fs.Args()) {
		p, err := inSituProfile(fs.Args())
		if err != nil {
			return err
		}
		opt.InSitu = true
		if path, stale := staleBuffers(fs.Args(), p); stale {
			// The rest of the results stands; the buffers' story is told
			// from the ranks' files instead, and the note says so.
			files, _, err := openProcs(fs.Args(), *procs)
			if err != nil {
				return err
			}
			defer closeAll(files)
			p.Buffer = summary.Reduce(files).Buffer
			opt.InSitu = false
			fmt.Fprintf(noteOut, "hmbtrace: %s: its results were made by a version that left the events of the current bins out of the buffers' story; the story printed is the ranks' files' (at finalize), the rest the results' (at MPI_Finalize)\n", path)
		}
		if err := summary.WriteRun(out, p, opt); err != nil {
			return err
		}
		if err := writeWhyInSitu(out, fs.Args()); err != nil {
			return err
		}
		return writePassCosts(out, fs.Args())
	}
	files, nprocs, err := openProcs(fs.Args(), *procs)
	if err != nil {
		return err
	}
	defer closeAll(files)
	if *tsv {
		return summary.WriteTSV(out, files)
	}
	if err := summary.WriteOptions(out, files, opt); err != nil {
		return err
	}
	return writeWhy(out, files, nprocs)
}

// inSituProfile returns the run profile an archive's results hold: the
// archive named, or group 0's of the directory named.
func inSituProfile(paths []string) (*summary.RunProfile, error) {
	b, path, err := inSituResult(paths, tracefile.ResultRunProfile, "run profile")
	if err != nil {
		return nil, err
	}
	var p summary.RunProfile
	if err := p.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: the run's profile in its results: %v", path, err)
	}
	return &p, nil
}

// staleBuffers reports whether p, the run profile of the results of the
// archive paths name, holds the buffers' story of a version that counted
// a level's records only once their bin was sealed (the events of the
// current bins neither kept nor removed) while the archive holds the
// ranks' traces: no bin counted, yet events kept or the counts unbalanced
// (this version counts a bin for every event kept). It returns the
// archive's path.
func staleBuffers(paths []string, p *summary.RunProfile) (string, bool) {
	b := &p.Buffer
	if b.Bins > 0 || b.Kept == 0 && len(b.Unbalanced) == 0 || len(paths) != 1 {
		return "", false
	}
	path, err := groupZero(paths[0])
	if err != nil {
		return "", false
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		return "", false
	}
	defer a.Close()
	return path, !a.ResultsOnly() && !a.EventsNone
}

// procsFlag adds -procs to a command that reads traces in parallel.
func procsFlag(fs *flag.FlagSet) *int {
	return fs.Int("procs", 0, "workers reading locations and files in parallel (default HMB_TOOL_PROCS, else GOMAXPROCS; 1 reads sequentially); the output is the same for any number")
}
