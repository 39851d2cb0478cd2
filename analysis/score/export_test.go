package score

import "github.com/hmbtrace/hmbtrace/tracefile"

// WalkBins is the number of bins the re-encoding walk of f fills, for the
// tests of package score_test, which are external so that they can render
// with package render.
func WalkBins(f *tracefile.File) (int, error) {
	w, err := walkFile(f)
	if err != nil {
		return 0, err
	}
	return w.bins, nil
}
