package main

import (
	"errors"
	"fmt"
	"os"

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
		return nil, path, fmt.Errorf("%s: its results hold no %s (%w: the ranks reduce it at MPI_Finalize from this version on; a group other than 0 holds none)", path, what, errNoResult)
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
