package trend_test

import (
	"reflect"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/trend"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// The dynamics are the same whatever the number of workers: the series in
// location order, each analysed on its own.
func TestAnalyzeProcsIdentical(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 2, 3, 200, 0)
	want, err := Analyze(files, Options{Procs: 1, MinShare: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Series) < 2 || len(want.Findings) == 0 {
		t.Fatalf("%d series, %d findings: nothing to compare", len(want.Series), len(want.Findings))
	}
	for _, procs := range []int{2, 5} {
		got, err := Analyze(files, Options{Procs: procs, MinShare: -1})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d workers give another result than 1", procs)
		}
	}
}
