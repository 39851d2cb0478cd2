package score_test

import (
	"reflect"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/score"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The score is the same whatever the number of workers walking the
// locations.
func TestComputeProcsIdentical(t *testing.T) {
	traces := map[string][]*tracefile.File{
		"whole": tracetest.Ranks(t, t.TempDir(), 3, 4, 100, 0),
		"shed":  tracetest.Ranks(t, t.TempDir(), 2, 3, 1500, 64<<10),
	}
	for name, files := range traces {
		want, err := score.ComputeProcs(files, score.Options{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{2, 3, 8} {
			got, err := score.ComputeProcs(files, score.Options{}, procs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %d workers give another score than 1", name, procs)
			}
		}
	}
}

// An error is the one a sequential walk stops at, the first bad
// location's.
func TestComputeProcsError(t *testing.T) {
	files := []*tracefile.File{tracetest.BadNesting(t, t.TempDir())}
	tracetest.SameErrorForProcs(t, func(procs int) error {
		_, err := score.ComputeProcs(files, score.Options{}, procs)
		return err
	})
}
