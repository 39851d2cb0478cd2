package analysis

import (
	"fmt"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// SharedRank reports whether two of files have the same rank. The ranks of
// one run differ; files that share one are unrelated runs (or one file given
// twice), whose locations the tools tell apart by file name instead.
func SharedRank(files []*tracefile.File) bool {
	seen := make(map[int]bool, len(files))
	for _, f := range files {
		if seen[f.Header.Rank] {
			return true
		}
		seen[f.Header.Rank] = true
	}
	return false
}

// LocationLabel names location name of file i among files, as the
// communication matrix, the dynamics and the report's timeline print it:
// the name alone for one file, "rank N: name" for the ranks of one run, and
// "FILE: name" (the file's base name) when files share a rank (byFile, from
// SharedRank). The variation analysis's rows use a compact form of the same
// rule (locations).
func LocationLabel(files []*tracefile.File, i int, byFile bool, name string) string {
	switch {
	case byFile:
		return fmt.Sprintf("%s: %s", filepath.Base(files[i].Path), name)
	case len(files) > 1:
		return fmt.Sprintf("rank %d: %s", files[i].Header.Rank, name)
	}
	return name
}

// locationRef names one location of one of several files.
type locationRef struct {
	file  int
	loc   *tracefile.Location
	label string
	// offset is the file's start on the common time axis of all files, in ns
	// (tracefile.Axis: clock-sync points, or else wall-clock starts).
	offset int64
}

// locations lists the locations of files in file order. Labels are the
// location names, prefixed with the rank when there are several files (or
// with the file name when ranks repeat).
func locations(files []*tracefile.File) []locationRef {
	byFile := SharedRank(files)
	axis := tracefile.NewAxis(files)
	var refs []locationRef
	for i, f := range files {
		offset := axis.Nanos(i, f, f.Header.StartTicks>>f.Header.TimerShift)
		for j := range f.Locations {
			l := &f.Locations[j]
			label := l.Name
			switch {
			case len(files) == 1:
			case byFile:
				label = fmt.Sprintf("%s:%s", filepath.Base(f.Path), l.Name)
			default:
				label = fmt.Sprintf("%d:%s", f.Header.Rank, l.Name)
			}
			refs = append(refs, locationRef{file: i, loc: l, label: label, offset: offset})
		}
	}
	return refs
}
