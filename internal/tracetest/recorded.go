package tracetest

import (
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Finish closes m, which writes its trace file, and opens that file; the
// file is closed when the test ends.
func Finish(t testing.TB, m *measure.Measurement) *tracefile.File {
	t.Helper()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return Open(t, m.Path())
}

// Open opens the trace file at path; the file is closed when the test
// ends.
func Open(t testing.TB, path string) *tracefile.File {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
