package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hmbtrace/hmbtrace/internal/units"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The results the ranks of an MPI run computed in-situ at its collective
// end, which group 0's run archive holds: the commands' -insitu reads
// them, and a command whose view needs events reads them when the archive
// holds none (HMB_OUTPUT_EVENTS=none).

// errNoResult is wrapped by inSituResult's error when the archive holds
// no result of the kind asked for.
var errNoResult = errors.New("no such result")

// inSituResult returns the payload of the results section of kind (what
// names it) of the archive named, or of group 0's archive in the directory
// named, and that archive's path.
func inSituResult(paths []string, kind byte, what string) ([]byte, string, error) {
	if len(paths) != 1 {
		return nil, "", usageError{"-insitu wants one run archive (or the directory holding it)"}
	}
	path, err := groupZero(paths[0])
	if err != nil {
		return nil, "", err
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		return nil, path, err
	}
	defer a.Close()
	b, ok, err := a.Result(kind)
	if err != nil {
		return nil, path, err
	}
	if !ok {
		why := "the ranks reduce it at MPI_Finalize from this version on; a group other than 0 holds none"
		if kind == tracefile.ResultWaitStates {
			why = "the run had HMB_WAITSTATES=off, its replay failed (said on stderr at MPI_Finalize), or an older version wrote it; without -insitu, waitstate replays the ranks' traces"
		}
		return nil, path, fmt.Errorf("%s: its results hold no %s (%w: %s)", path, what, errNoResult, why)
	}
	return b, path, nil
}

// groupZero returns path, or, when it is a directory, the run archive of
// group 0 in it.
func groupZero(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return path, nil
	}
	names, err := filesIn(path, tracefile.ArchiveExt)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if a, err := tracefile.OpenArchive(n); err == nil {
			group := a.Group
			a.Close()
			if group == 0 {
				return n, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no run archive (*%s) of group 0 in it", path, tracefile.ArchiveExt)
}

// readPassCosts returns the costs of the collective end's passes the
// run archive's results hold: nil without an error when it holds none.
func readPassCosts(paths []string) ([]tracefile.PassCost, error) {
	b, path, err := inSituResult(paths, tracefile.ResultCosts, "costs of the collective end")
	if errors.Is(err, errNoResult) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var costs []tracefile.PassCost
	if err := json.Unmarshal(b, &costs); err != nil {
		return nil, fmt.Errorf("%s: the costs of the collective end: %v", path, err)
	}
	return costs, nil
}

// writePassCosts says what each pass of the collective end cost rank 0,
// when the archive's results say (nothing for an archive without them).
func writePassCosts(out io.Writer, paths []string) error {
	costs, err := readPassCosts(paths)
	if costs == nil || err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe collective end at MPI_Finalize, as rank 0 saw it (its passes' time, the parts' bytes it took):\n")
	for _, c := range costs {
		fmt.Fprintf(out, "  %-36s %10s  %s\n", c.Pass, units.Duration(c.Seconds*1e9), units.Size(float64(c.Bytes)))
	}
	return nil
}

// fromResults says which commands read a run archive of results only
// (HMB_OUTPUT_EVENTS=none): the run-wide results the ranks computed.
const fromResults = "summary (the run's profile), comm (the exact matrix), variation, dynamics and waitstate (the analyses the ranks ran)"

// resultsOnlyError is the error of a command, or view, that needs the
// ranks' traces, given the archive at path of the run's results only.
func resultsOnlyError(path string) error {
	return fmt.Errorf("%s holds the run's results only, no rank's trace (it was written with HMB_OUTPUT_EVENTS=none): %s read them; this view needs the events (HMB_OUTPUT_EVENTS=all, the default)", path, fromResults)
}

// resultsOnly reports whether paths name one run archive of results only,
// or a directory whose group 0 archive is one: then summary, comm,
// variation and dynamics read its results, and say so on noteOut.
func resultsOnly(paths []string) bool {
	if len(paths) != 1 {
		return false
	}
	path, err := groupZero(paths[0])
	if err != nil || !tracefile.IsArchive(path) {
		return false
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		return false
	}
	defer a.Close()
	if a.ResultsOnly() {
		fmt.Fprintf(noteOut, "hmbtrace: %s holds the run's results only (HMB_OUTPUT_EVENTS=none): what the ranks computed at MPI_Finalize\n", path)
	}
	return a.ResultsOnly()
}
