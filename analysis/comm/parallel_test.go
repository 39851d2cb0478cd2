package comm

import (
	"reflect"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The matrix is the same whatever the number of workers.
func TestFromFilesProcsIdentical(t *testing.T) {
	traces := map[string][]*tracefile.File{
		"whole": tracetest.Ranks(t, t.TempDir(), 3, 4, 100, 0),
		// Shed messages: the kept sends are counted from the events.
		"shed": tracetest.Ranks(t, t.TempDir(), 2, 3, 1500, 64<<10),
	}
	for name, files := range traces {
		want, err := FromFilesProcs(files, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Cells) < 2 {
			t.Fatalf("%s: %d cells, nothing to compare", name, len(want.Cells))
		}
		if name == "shed" && want.Shed == 0 {
			t.Fatalf("shed: the buffer kept every send")
		}
		for _, procs := range []int{2, 3, 8} {
			got, err := FromFilesProcs(files, procs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %d workers give another matrix than 1", name, procs)
			}
		}
	}
}
