package variation

import (
	"fmt"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// LocationRef is one location of one of several files, as the analysis
// labels it and places it in time.
type LocationRef struct {
	File     int                 // index into the files
	Index    int                 // index into the file's Locations
	Location *tracefile.Location // the file's Locations[Index]
	// Label is the location's name, prefixed with the rank when there are
	// several files (or with the file name when ranks repeat).
	Label string
	// Offset is the file's start on the common time axis of all files, in
	// ns (tracefile.Axis: clock-sync points, or else wall-clock starts).
	Offset int64
}

// Locations lists the locations of files in file order: the rows of the
// analysis.
func Locations(files []*tracefile.File) []LocationRef {
	byFile := tracefile.SharedRank(files)
	axis := tracefile.NewAxis(files)
	var refs []LocationRef
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
				label = rankLabel(f.Header.Rank, l.Name)
			}
			refs = append(refs, LocationRef{File: i, Index: j, Location: l, Label: label, Offset: offset})
		}
	}
	return refs
}

// rankLabel labels a location of one of a run's ranks.
func rankLabel(rank int, name string) string { return fmt.Sprintf("%d:%s", rank, name) }
