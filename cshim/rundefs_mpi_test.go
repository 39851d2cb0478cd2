package cshim_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIUnifiedDefinitions: 8 ranks of halo.c's "partial" mode, where the
// even ranks make a communicator of their own and broadcast on it. The
// archive's group 0 keeps the definitions the ranks unified in the tree at
// the collective end: MPI_Bcast (a region only some ranks entered) and the
// even ranks' communicator (one only some ranks made) once each; the same
// tables, in the same order, as the reader unifies by name from the ranks'
// slots; and every command prints the same from the archive as from those
// slots as rank files, and as from a run written as rank files.
func TestMPIUnifiedDefinitions(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "halo", "halo.c")
	const np = 8
	dir := t.TempDir()
	archive, rankDir, extracted := filepath.Join(dir, "archive"), filepath.Join(dir, "ranks"), filepath.Join(dir, "extracted")
	mpirun(t, np, archive, nil, prog, "10", "64", "partial")
	mpirun(t, np, rankDir, []string{"HMB_OUTPUT_LAYOUT=rank-files"}, prog, "10", "64", "partial")
	path := filepath.Join(archive, "halo.hmbrun")
	os.Mkdir(extracted, 0o755)
	extractSlots(t, path, extracted)

	files := rankFiles(t, archive, "halo", np)
	run, fromRun, err := tracefile.ReadRunDefinitions(files)
	if err != nil {
		t.Fatal(err)
	}
	if !fromRun {
		t.Fatalf("%s: no unified definitions in the archive", path)
	}
	if byName := tracefile.UnifyDefinitions(files); !run.Equal(byName) {
		t.Errorf("the tree's tables\n%+v\nthe reader's by name\n%+v", run, byName)
	}
	bcast := 0
	for _, r := range run.Regions {
		if r.Name == "MPI_Bcast" {
			bcast++
		}
	}
	even := 0
	for _, c := range run.Comms {
		if len(c.Members) == np/2 && c.Members[0] == 0 && c.Members[1] == 2 && c.Members[np/2-1] == np-2 {
			even++
		}
	}
	if bcast != 1 || even != 1 {
		t.Errorf("MPI_Bcast defined %d times, the even ranks' communicator %d times, want once each: %+v %+v", bcast, even, run.Regions, run.Comms)
	}
	if len(run.Locations) != np {
		t.Errorf("%d locations, want %d: %+v", len(run.Locations), np, run.Locations)
	}

	defs := func(in string) (string, string) {
		cmd := exec.Command(built.hmbtrace, "dump", "-definitions", in)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("hmbtrace dump -definitions %s: %v\n%s", in, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	a, note := defs(archive)
	if !strings.Contains(note, "unified at the collective end") {
		t.Errorf("dump -definitions of the archive says %q, want the run's tables", note)
	}
	if !strings.Contains(a, "\tMPI_Bcast\t") || !strings.Contains(a, "members=0-6/2") {
		t.Errorf("dump -definitions lacks MPI_Bcast or the even ranks' communicator:\n%s", a)
	}
	for _, in := range []string{extracted, rankDir} {
		b, note := defs(in)
		if !strings.Contains(note, "unified by name") {
			t.Errorf("dump -definitions of %s says %q, want the files' tables", in, note)
		}
		if a != b {
			t.Errorf("dump -definitions: the archive\n%s\n%s\n%s", a, in, b)
		}
	}
	for _, args := range [][]string{{"summary"}, {"comm"}, {"comm", "-tsv"}, {"score"}} {
		a := rankNames(hmbtraceRun(t, append(args, archive)...))
		if b := rankNames(hmbtraceRun(t, append(args, extracted)...)); a != b {
			t.Errorf("hmbtrace %s: the archive\n%s\nits slots as rank files\n%s", strings.Join(args, " "), a, b)
		}
	}
}
