package cshim_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPICommRefs: 16 ranks split the run into irregular halves, and
// some of them again (testdata/mpi/split.c). Written as the run's
// archive, the ranks' slots refer to those groups in the run's unified
// definitions (COMM REFS) rather than list them; read back, every rank
// has the communicators its rank file of the same program has, the run's
// tables are those of the rank files unified by name, and the matrix and
// the definitions the tools print are the same from both layouts.
func TestMPICommRefs(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "split", "split.c")
	const np = 16
	dir := t.TempDir()
	archive, rankDir := filepath.Join(dir, "archive"), filepath.Join(dir, "ranks")
	mpirun(t, np, archive, nil, prog, "10")
	mpirun(t, np, rankDir, []string{"HMB_OUTPUT_LAYOUT=rank-files"}, prog, "10")

	path := filepath.Join(archive, "split.hmbrun")
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	raw, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Slots {
		_, err := tracefile.Read(io.NewSectionReader(raw, s.Off+32, s.Len), s.Len)
		if err != nil && strings.Contains(err.Error(), "COMM REFS") {
			refs++
		} else if err != nil {
			t.Errorf("%s: rank %d's slot: %v", path, s.Rank, err)
		}
	}
	raw.Close()
	a.Close()
	if refs != np {
		t.Errorf("%d of %d slots refer to the run's groups (COMM REFS)", refs, np)
	}

	files, rfiles := rankFiles(t, archive, "split", np), rankFiles(t, rankDir, "split", np)
	for r := range files {
		got, want := files[r].Comms, rfiles[r].Comms
		if !slices.EqualFunc(got, want, func(a, b tracefile.Comm) bool {
			return a.ID == b.ID && a.Parent == b.Parent && a.Name == b.Name && slices.Equal(a.Members, b.Members) && slices.Equal(a.Remote, b.Remote)
		}) {
			t.Errorf("rank %d: communicators from the archive\n%+v\nfrom its rank file\n%+v", r, got, want)
		}
	}
	run, err := tracefile.ReadUnified(files)
	if err != nil || !run.FromRun {
		t.Fatalf("%s: the run's definitions: from the run %v, %v", path, run != nil && run.FromRun, err)
	}
	byName, err := tracefile.ReadUnified(rfiles)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Defs.Equal(byName.Defs) {
		t.Errorf("the tree's tables\n%+v\nthe rank files' by name\n%+v", run.Defs, byName.Defs)
	}
	// Two runs: what does not depend on their times is the same.
	for _, args := range [][]string{{"comm", "-tsv"}, {"dump", "-definitions", "-maps"}} {
		a := rankNames(hmbtraceRun(t, append(args, archive)...))
		b := rankNames(hmbtraceRun(t, append(args, rankDir)...))
		if a != b {
			t.Errorf("hmbtrace %s: the archive\n%s\nthe rank files\n%s", strings.Join(args, " "), a, b)
		}
	}
}
