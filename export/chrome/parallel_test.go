package chrome

import (
	"bytes"
	"io"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The document is the same byte for byte whatever the number of workers,
// also when the locations read ahead go to temporary files.
func TestExportProcsIdentical(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	files := tracetest.Ranks(t, t.TempDir(), 3, 4, 300, 0)
	shed := tracetest.Ranks(t, t.TempDir(), 2, 3, 2000, 64<<10)
	if len(shed[0].Reductions) == 0 {
		t.Fatal("the small buffer shed nothing")
	}
	// The whole trace's locations outgrow a spool's memory: the test
	// reads some back from their temporary files.
	big := tracetest.Ranks(t, t.TempDir(), 1, 3, 1500, 0)
	for name, fs := range map[string][]*tracefile.File{"whole": files, "shed": shed, "big": big} {
		want := tracetest.SameOutputForProcs(t, name, func(w *bytes.Buffer, procs int) error { return ExportProcs(w, fs, procs) })
		if name == "big" && len(want)/3 < 3*spoolMemory/2 {
			t.Fatalf("big: %d bytes for 3 locations, want more than 1.5 spools' memory each", len(want))
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
