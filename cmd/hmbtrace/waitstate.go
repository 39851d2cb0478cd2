package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/internal/units"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func init() {
	helpOf["waitstate"] = `Replays the run's recorded communication and says why the ranks waited: Scalasca's wait-state
patterns (Geimer et al.): Late Sender (and its wrong-order part), Late Receiver, Wait at N x N, Wait at
Barrier, Late Broadcast, Early Reduce, and the waits at OpenMP barriers; per pattern the time and its
share of the run (summed over the locations); the run's critical path, its profile by region and the
critical-path imbalance (path less the region's mean per location); the worst waits with the late
party and the region it was in while the others waited; and the delay costs (Böhme et al.): the call
paths whose excess time in the wait's synchronisation interval caused the waits, directly (short-term)
and through the waits those propagated into (long-term). Of an MPI run's archive, -insitu prints the
same the ranks replayed at MPI_Finalize, each on its own events, exchanging over MPI the times the
patterns need (forward) and the waits' costs and the critical path (backward), and what that cost.
`
}

func runWaitstate(args []string, out io.Writer) error {
	fs := newFlags("waitstate")
	top := fs.Int("top", 10, "list the worst N waits and delay costs (0: none)")
	asJSON := fs.Bool("json", false, "print the whole result as JSON: per pattern, region and location")
	insitu := fs.Bool("insitu", false, "of a run archive, the wait states the ranks replayed over MPI at MPI_Finalize, each on its own events (its results), not a replay of its ranks' traces")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *top < 0 {
		return usageError{"-top: want 0 or more"}
	}
	if *insitu || resultsOnly(fs.Args()) {
		r, path, err := inSituWaitStates(fs.Args())
		if err != nil {
			return err
		}
		if *asJSON {
			return waitstate.WriteJSON(out, r)
		}
		if err := waitstate.WriteInSitu(out, r, path, *top); err != nil {
			return err
		}
		return writeReplayCost(out, fs.Args(), r)
	}
	files, procs, err := openProcs(fs.Args(), *procsOpt)
	if err != nil {
		return err
	}
	defer closeAll(files)
	worst := *top
	if *asJSON {
		worst = waitstate.DefaultWorst
	} else if worst == 0 {
		worst = -1
	}
	r, err := waitstate.Analyze(files, waitstate.Options{Procs: procs, Worst: worst})
	if err != nil {
		return err
	}
	if *asJSON {
		return waitstate.WriteJSON(out, r)
	}
	return waitstate.WriteText(out, r, *top)
}

// inSituWaitStates returns the wait states the ranks replayed in-situ,
// which the results of the archive named (or of group 0's archive in the
// directory named) hold, and that archive's path.
func inSituWaitStates(paths []string) (*waitstate.Result, string, error) {
	b, path, err := inSituResult(paths, tracefile.ResultWaitStates, "wait states")
	if err != nil {
		return nil, path, err
	}
	in, err := waitstate.DecodeInSitu(b)
	if err != nil {
		return nil, path, fmt.Errorf("%s: %w", path, err)
	}
	return in.Result(), path, nil
}

// writeReplayCost says what the replay in-situ cost rank 0, from the
// costs of the collective end the archive holds: its rounds (reading its
// events, the exchanges, its own replay) and the gathering of the ranks'
// parts, and their share of the run's mean time per location (up to the
// collective end). Nothing when the archive holds no costs.
func writeReplayCost(out io.Writer, paths []string, r *waitstate.Result) error {
	costs, err := readPassCosts(paths)
	if costs == nil || err != nil {
		return err
	}
	var rounds, gather float64
	for _, c := range costs {
		switch c.Pass {
		case "wait-state replay":
			rounds = c.Seconds
		case "wait states":
			gather = c.Seconds
		}
	}
	if rounds == 0 && gather == 0 || len(r.Locations) == 0 || r.Total <= 0 {
		return nil
	}
	mean := float64(r.Total) / float64(len(r.Locations)) / 1e9
	_, err = fmt.Fprintf(out, "The replay cost rank 0 %s (its rounds %s, gathering the ranks' parts %s): %.2f%% of the run's mean time per location, %s\n",
		units.Duration((rounds+gather)*1e9), units.Duration(rounds*1e9), units.Duration(gather*1e9), 100*(rounds+gather)/mean, units.Duration(mean*1e9))
	return err
}

// writeWhyInSitu ends the summary of a run's results with why its ranks
// waited, from the wait states they replayed in-situ; nothing when the
// results hold none (an archive of an older version, or a failed replay).
func writeWhyInSitu(out io.Writer, paths []string) error {
	r, _, err := inSituWaitStates(paths)
	if errors.Is(err, errNoResult) {
		return nil
	}
	if err != nil {
		return err
	}
	return waitstate.WriteWhy(out, r, 3)
}

// whyMaxLocations bounds the runs whose summary replays the waits: the
// replay holds every location's calls and windows (about 90 KB a rank of
// a 20-step halo code), which past a thousand locations outweighs what
// summary itself needs; waitstate replays any run.
var whyMaxLocations = 1024

// writeWhy ends a summary with why the ranks waited (the top three
// patterns, their places and causes, the critical path), when the run has
// MPI or OpenMP synchronisation to replay and waited in it.
func writeWhy(out io.Writer, files []*tracefile.File, procs int) error {
	if !waitstate.Replayable(files) {
		return nil
	}
	locs := 0
	for _, f := range files {
		locs += len(f.Locations)
	}
	if locs > whyMaxLocations {
		_, err := fmt.Fprintf(out, "\nWhy ranks wait: not replayed here for %d locations (more than %d); hmbtrace waitstate replays them\n", locs, whyMaxLocations)
		return err
	}
	r, err := waitstate.Analyze(files, waitstate.Options{Procs: procs, Worst: -1})
	if err != nil {
		return err
	}
	return waitstate.WriteWhy(out, r, 3)
}
