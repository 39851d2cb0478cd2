package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// runFile writes rank of a run named name: an MPI run if ref (rank 0's
// start, which every rank records) is not 0.
func runFile(t *testing.T, dir, name, program string, rank int, ref uint64, start time.Time) string {
	t.Helper()
	b := tracetest.NewBuilder(name, "node1", rank, start, "main", "work")
	b.Trace.Header.Program = program
	b.Trace.Header.ReferenceStart = ref
	l := b.Location("thread 0")
	l.Enter(10, 1)
	l.Enter(20, 2)
	l.Leave(80)
	l.Leave(100)
	return b.Write(t, dir).Path
}

// A directory holding the files of two runs (Nekbone's build ran a test
// program into the same HMB_OUTPUT) is refused by every tool that reads a
// directory, with the runs, their files and how to pick one; the glob it
// suggests reads the run.
func TestDirectoryOfTwoRuns(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 25, 6, 0, 0, 0, time.Local)
	runFile(t, dir, "a.out", "./a.out", 0, 0, t0)
	runFile(t, dir, "nekbone", "./nekbone ex1", 0, 12345, t0.Add(time.Minute))
	runFile(t, dir, "nekbone", "./nekbone ex1", 1, 12345, t0.Add(time.Minute+time.Millisecond))
	glob := filepath.Join(dir, "nekbone.*.hmb")
	tools := [][]string{{"summary"}, {"export", "-format", "otf2", "-o", filepath.Join(t.TempDir(), "otf2")}, {"comm"},
		{"report", "-o", filepath.Join(t.TempDir(), "r.html")}, {"variation"}, {"score"}, {"dynamics"}}
	for _, tool := range tools {
		var out, errOut bytes.Buffer
		if code := run(append(tool, dir), &out, &errOut); code != 1 {
			t.Errorf("%s on a directory of two runs: exit %d, stdout %s", tool[0], code, out.String())
		}
		msg := errOut.String()
		for _, want := range []string{dir + " holds the files of 2 runs",
			`"a.out" (a.out), started 2026-11-25 06:00:00, rank 0: a.out.0.hmb`,
			`"nekbone" (nekbone), started 2026-11-25 06:01:00, ranks 0, 1: nekbone.0.hmb, nekbone.1.hmb`,
			"name the files of one run: e.g. " + glob + ", or a list of files"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error lacks %q:\n%s", tool[0], want, msg)
			}
		}
	}
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) != 2 {
		t.Fatalf("the suggested glob %s gives %v, %v", glob, paths, err)
	}
	var out, errOut bytes.Buffer
	if code := run(append([]string{"summary"}, paths...), &out, &errOut); code != 0 || !strings.Contains(out.String(), "Regions per rank") {
		t.Errorf("summary of the glob's files: exit %d, stderr %s, stdout:\n%s", code, errOut.String(), out.String())
	}

	// Named one by one, the files are read together, and summary says why
	// it has no per-rank table.
	out.Reset()
	all, _ := filepath.Glob(filepath.Join(dir, "*.hmb"))
	if code := run(append([]string{"summary"}, all...), &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "No regions per rank: "+filepath.Join(dir, "a.out.0.hmb")+" and "+filepath.Join(dir, "nekbone.0.hmb")+" both hold rank 0") {
		t.Errorf("summary of both runs' files: exit %d, stderr %s, stdout:\n%s", code, errOut.String(), out.String())
	}
}

// The ranks of one run are read from a directory whatever their trace
// names (an MPI run of two programs shares rank 0's start) and without MPI
// when they share a trace name. Two MPI runs of one name (an earlier run's
// ranks 2 and 3 beside a later run's 0 and 1) are two runs, which no glob
// of the name tells apart.
func TestDirectoryRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 6, 0, 0, 0, time.Local)
	mpmd := t.TempDir()
	runFile(t, mpmd, "ocean", "./ocean", 0, 777, t0)
	runFile(t, mpmd, "atmos", "./atmos", 1, 777, t0)
	serial := t.TempDir()
	runFile(t, serial, "job", "./job", 0, 0, t0)
	runFile(t, serial, "job", "./job", 1, 0, t0.Add(time.Second))
	for _, dir := range []string{mpmd, serial} {
		var out, errOut bytes.Buffer
		if code := run([]string{"summary", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Regions per rank") {
			t.Errorf("summary %s: exit %d, stderr %s, stdout:\n%s", dir, code, errOut.String(), out.String())
		}
	}

	mixed := t.TempDir()
	runFile(t, mixed, "x", "./x", 2, 100, t0)
	runFile(t, mixed, "x", "./x", 3, 100, t0)
	runFile(t, mixed, "x", "./x", 0, 900, t0.Add(time.Hour))
	runFile(t, mixed, "x", "./x", 1, 900, t0.Add(time.Hour))
	var out, errOut bytes.Buffer
	if code := run([]string{"comm", mixed}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "holds the files of 2 runs") ||
		!strings.Contains(errOut.String(), "ranks 2, 3: x.2.hmb, x.3.hmb") ||
		!strings.Contains(errOut.String(), "e.g. "+filepath.Join(mixed, "x.0.hmb")+", or a list") {
		t.Errorf("comm on two runs of one name: exit %d, stderr:\n%s", code, errOut.String())
	}

	// A file copied under another name duplicates a rank of the run.
	dup := t.TempDir()
	p := runFile(t, dup, "y", "./y", 0, 0, t0)
	runFile(t, dup, "y", "./y", 1, 0, t0)
	data, _ := os.ReadFile(p)
	os.WriteFile(filepath.Join(dup, "copy.hmb"), data, 0o644)
	out.Reset()
	errOut.Reset()
	if code := run([]string{"summary", dup}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "both hold rank 0 of run \"y\"") {
		t.Errorf("summary with a copied file: exit %d, stderr:\n%s", code, errOut.String())
	}
}

// dump of a directory says that it takes one file and which files are
// there.
func TestDumpDirectory(t *testing.T) {
	dir := t.TempDir()
	runFile(t, dir, "nekbone", "./nekbone", 0, 5, time.Now())
	runFile(t, dir, "nekbone", "./nekbone", 1, 5, time.Now())
	var out, errOut bytes.Buffer
	want := dir + " is a directory; dump takes one trace file, e.g. " + filepath.Join(dir, "nekbone.0.hmb") +
		" (the files there: nekbone.0.hmb, nekbone.1.hmb)"
	if code := run([]string{"dump", dir}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("dump of a directory: exit %d, stderr:\n%s\nwant %s", code, errOut.String(), want)
	}
	empty := t.TempDir()
	errOut.Reset()
	if code := run([]string{"dump", empty}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no trace files (*.hmb) in it; dump takes one trace file") {
		t.Errorf("dump of an empty directory: exit %d, stderr:\n%s", code, errOut.String())
	}
}
