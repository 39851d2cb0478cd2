package pprof

import (
	"bytes"
	"io"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The profile is the same byte for byte whatever the number of workers:
// functions are numbered by their first call in location order.
func TestExportProcsIdentical(t *testing.T) {
	whole := tracetest.Ranks(t, t.TempDir(), 3, 4, 200, 0)
	shed := tracetest.Ranks(t, t.TempDir(), 2, 3, 2000, 64<<10)
	// Different regions first on different locations: the numbering of
	// functions depends on the order the locations are put together.
	b := tracetest.NewBuilder("order", "host", 0, whole[0].Header.StartWall, "a", "b", "c")
	for k, first := range []uint32{3, 1, 2} {
		l := b.Location("loc " + string(rune('0'+k)))
		l.Enter(10, first)
		l.Enter(20, 1+first%3)
		l.Leave(30)
		l.Leave(40)
	}
	mixed := []*tracefile.File{b.Write(t, t.TempDir())}
	for name, fs := range map[string][]*tracefile.File{"whole": whole, "shed": shed, "mixed": mixed} {
		var want bytes.Buffer
		if err := ExportProcs(&want, fs, 1); err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{2, 3, 8} {
			var got bytes.Buffer
			if err := ExportProcs(&got, fs, procs); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s: %d workers give another profile than 1 (%d bytes, %d)", name, procs, got.Len(), want.Len())
			}
		}
	}
}

// An error is the one a sequential export stops at, the first bad
// location's.
func TestExportProcsError(t *testing.T) {
	files := []*tracefile.File{tracetest.BadNesting(t, t.TempDir())}
	tracetest.SameErrorForProcs(t, func(procs int) error {
		return ExportProcs(io.Discard, files, procs)
	})
}
