package tracefile

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"
)

// SharedRank reports whether two of files have the same rank. The ranks of
// one run differ; files that share one are unrelated runs (or one file given
// twice), whose locations the tools tell apart by file name instead.
func SharedRank(files []*File) bool {
	_, _, ok := SameRank(files)
	return ok
}

// SameRank returns the indices of the first two files of the same rank.
func SameRank(files []*File) (a, b int, ok bool) {
	seen := make(map[int]int, len(files))
	for i, f := range files {
		if j, dup := seen[f.Header.Rank]; dup {
			return j, i, true
		}
		seen[f.Header.Rank] = i
	}
	return 0, 0, false
}

// LocationLabel names location name of file i among files, as the
// communication matrix, the dynamics and the report's timeline print it:
// the name alone for one file, "rank N: name" for the ranks of one run, and
// "FILE: name" (the file's base name) when files share a rank (byFile, from
// SharedRank). The variation analysis's rows use a compact form of the same
// rule.
func LocationLabel(files []*File, i int, byFile bool, name string) string {
	switch {
	case byFile:
		return fmt.Sprintf("%s: %s", filepath.Base(files[i].Path), name)
	case len(files) > 1:
		return RankLabel(files[i].Header.Rank, name)
	}
	return name
}

// RankLabel is LocationLabel of a location of one of a run's ranks, each in
// a file of its own: what a rank calls its locations in-situ.
func RankLabel(rank int, name string) string { return fmt.Sprintf("rank %d: %s", rank, name) }

// Run is the files of one run among a set of files.
type Run struct {
	Name  string    // the trace name of its first file
	Files []int     // indices into the files, in their order
	Ranks []int     // the files' ranks, in the same order
	Start time.Time // the earliest start of its files
}

// Runs groups files by the run they come from. In an MPI run every rank
// records rank 0's start at MPI_Init to map its clock onto rank 0's
// (Header.ReferenceStart), so that identifies the run, whatever each rank's
// trace name. Files without it (no MPI, or older files) are grouped by trace
// name and command line: one directory holds one file per name and rank.
// Runs are ordered by start, then name.
func Runs(files []*File) []Run {
	type key struct {
		ref           uint64
		name, program string
	}
	idx := map[key]int{}
	var runs []Run
	for i, f := range files {
		k := key{ref: f.Header.ReferenceStart}
		if k.ref == 0 {
			k.name, k.program = f.Header.Name, f.Header.Program
		}
		j, ok := idx[k]
		if !ok {
			j = len(runs)
			idx[k] = j
			runs = append(runs, Run{Name: f.Header.Name, Start: f.Header.StartWall})
		}
		r := &runs[j]
		r.Files = append(r.Files, i)
		r.Ranks = append(r.Ranks, f.Header.Rank)
		if f.Header.StartWall.Before(r.Start) {
			r.Start = f.Header.StartWall
		}
	}
	sort.SliceStable(runs, func(a, b int) bool {
		if !runs[a].Start.Equal(runs[b].Start) {
			return runs[a].Start.Before(runs[b].Start)
		}
		return runs[a].Name < runs[b].Name
	})
	return runs
}
