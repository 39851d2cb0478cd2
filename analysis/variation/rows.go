package variation

import (
	"fmt"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

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
	byFile := tracefile.SharedRank(files)
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
