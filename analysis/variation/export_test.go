package variation

import (
	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// WaitShareOf is a region's waitShare for the tests of package
// variation_test, which are external so that they can render with package
// render.
type WaitShareOf struct {
	Traced, Waiting int64
	Share           float64
	Irregularity    float64
}

// WaitShares is waitSumsOf's shares with the default synchronization regions, on
// several workers.
func WaitShares(files []*tracefile.File) (map[string]WaitShareOf, error) {
	sums, _, err := waitSumsOf(files, newClassifier(files, analysis.SyncMatcher{}), 4)
	if err != nil {
		return nil, err
	}
	ws := sums.shares()
	out := make(map[string]WaitShareOf, len(ws))
	for name, w := range ws {
		out[name] = WaitShareOf{Traced: w.traced, Waiting: w.waiting, Share: w.share(), Irregularity: w.irregularity}
	}
	return out, nil
}
