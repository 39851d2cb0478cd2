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
		tracetest.SameOutputForProcs(t, name, func(w *bytes.Buffer, procs int) error { return ExportProcs(w, fs, procs) })
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
