package cshim_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var threadID = regexp.MustCompile(`"thread [0-9]+"`)

// exitLines matches the lines a run says at its end when something was
// wrong or missing, and at its start when it moved an earlier run aside.
var exitLines = regexp.MustCompile(`(?m)^hmbtrace: (.*; see hmbtrace summary \S+|an earlier run's .* moved to .*)\n`)

// withoutExitLines returns stderr without those lines, for tests that
// check that a program says nothing else.
func withoutExitLines(stderr string) string {
	return exitLines.ReplaceAllString(stderr, "")
}

// TestLastErrorAndExitLine: a C program's usage errors are in
// hmb_last_error as they happen, in order with the library's own
// failures, and its exit says them in one line.
func TestLastErrorAndExitLine(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "lasterror", nil, filepath.Join(root, "cshim", "testdata", "c", "lasterror.c"))
	for _, mode := range []string{"direct", "staged"} {
		out, stderr := p.run(t, []string{"HMB_C_PROBE=" + mode})
		// The main thread's location is named by its thread id.
		out = threadID.ReplaceAllString(out, `"thread N"`)
		stderr = threadID.ReplaceAllString(stderr, `"thread N"`)
		for _, want := range []string{
			"before []",
			`implicit [hmbtrace: usage error, location "thread N": a leave of "a" while "b", entered inside it, was still open`,
			"region [hmbtrace: hmb_region: the name is NULL]",
			`nothing open [hmbtrace: usage error, location "thread N": a leave of "b" with no region open`,
			`fine [hmbtrace: usage error, location "thread N": a leave of "b" with no region open`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", mode, want, out)
			}
		}
		line := "hmbtrace: 2 usage errors (the last: usage error, location \"thread N\": a leave of \"b\" with no region open"
		if n := strings.Count(stderr, line); n != 1 {
			t.Errorf("%s: the exit line %d times in stderr:\n%s", mode, n, stderr)
		}
		if !strings.Contains(stderr, "see hmbtrace summary "+filepath.Join(p.out, "lasterror.0.hmb")+"\n") {
			t.Errorf("%s: the exit line does not name the trace:\n%s", mode, stderr)
		}
		f := tracetest.Open(t, filepath.Join(p.out, "lasterror.0.hmb"))
		if got, want := f.Locations[0].Usage, (tracefile.UsageErrors{LeftImplicitly: 1, LeaveNothingOpen: 1}); got != want {
			t.Errorf("%s: usage errors %+v, want %+v", mode, got, want)
		}
	}
}

// TestCRunTwice: a C program run twice into one output directory keeps
// both traces, the newest under the plain name.
func TestCRunTwice(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "jacobi", nil, filepath.Join(root, "cshim", "testdata", "c", "lasterror.c"))
	_, first := p.run(t, nil)
	if strings.Contains(first, "earlier run") {
		t.Errorf("the first run moved something:\n%s", first)
	}
	_, second := p.run(t, nil)
	want := "hmbtrace: an earlier run's jacobi.0.hmb moved to " + filepath.Join(p.out, "jacobi.run-")
	if strings.Count(second, want) != 1 {
		t.Errorf("the second run does not say where the first went:\n%s", second)
	}
	dirs, _ := filepath.Glob(filepath.Join(p.out, "jacobi.run-*"))
	if len(dirs) != 1 {
		t.Fatalf("earlier runs' directories %q, want 1", dirs)
	}
	old := tracetest.Open(t, filepath.Join(dirs[0], "jacobi.0.hmb"))
	cur := tracetest.Open(t, filepath.Join(p.out, "jacobi.0.hmb"))
	if old.Header.PID == cur.Header.PID {
		t.Errorf("both traces are pid %d's", cur.Header.PID)
	}
	if entries, _ := os.ReadDir(p.out); len(entries) != 2 {
		t.Errorf("%s holds %d entries, want the trace and the earlier run's directory", p.out, len(entries))
	}
}
