package tracefile

import (
	"fmt"
	"path/filepath"
)

// SharedRank reports whether two of files have the same rank. The ranks of
// one run differ; files that share one are unrelated runs (or one file given
// twice), whose locations the tools tell apart by file name instead.
func SharedRank(files []*File) bool {
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
// rule.
func LocationLabel(files []*File, i int, byFile bool, name string) string {
	switch {
	case byFile:
		return fmt.Sprintf("%s: %s", filepath.Base(files[i].Path), name)
	case len(files) > 1:
		return fmt.Sprintf("rank %d: %s", files[i].Header.Rank, name)
	}
	return name
}
