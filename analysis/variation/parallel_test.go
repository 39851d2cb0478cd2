package variation_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The analysis is the same whatever the number of workers reading the
// locations: rows and segments in location order, the same wait shares.
func TestAnalyzeProcsIdentical(t *testing.T) {
	traces := map[string][]*tracefile.File{
		"whole": tracetest.Ranks(t, t.TempDir(), 3, 4, 150, 0),
		"shed":  tracetest.Ranks(t, t.TempDir(), 2, 3, 1500, 128<<10),
	}
	if len(traces["shed"][0].Reductions) == 0 {
		t.Fatal("the small buffer shed nothing")
	}
	for name, files := range traces {
		compared := 0
		for _, opt := range []variation.Options{{}, {Region: "kernel"}} {
			opt.Procs = 1
			// An error (the buffer shed every kernel) must be the same too.
			want, wantErr := variation.Analyze(files, opt)
			if wantErr == nil {
				compared++
				if len(want.Rows) < 2 || len(want.Segments) == 0 {
					t.Fatalf("%s: %d rows, %d segments: nothing to compare", name, len(want.Rows), len(want.Segments))
				}
			}
			for _, procs := range []int{2, 3, 8} {
				opt.Procs = procs
				got, err := variation.Analyze(files, opt)
				switch {
				case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
					t.Errorf("%s, region %q: %d workers: error %v, 1 worker %v", name, opt.Region, procs, err, wantErr)
				case !reflect.DeepEqual(got, want):
					t.Errorf("%s, region %q: %d workers give another result than 1", name, opt.Region, procs)
				}
			}
		}
		if compared == 0 {
			t.Errorf("%s: no analysis succeeded", name)
		}
	}
}

// A malformed HMB_TOOL_PROCS is an error naming it.
func TestAnalyzeBadProcs(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 1, 1, 10, 0)
	t.Setenv("HMB_TOOL_PROCS", "many")
	if _, err := variation.Analyze(files, variation.Options{}); err == nil || !strings.Contains(err.Error(), "HMB_TOOL_PROCS") {
		t.Errorf("err %v, want one naming HMB_TOOL_PROCS", err)
	}
}
