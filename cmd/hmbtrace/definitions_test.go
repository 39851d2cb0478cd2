package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestDumpDefinitions: dump -definitions of a run archive whose group 0
// keeps the ranks' unified definitions prints those, and says so; of the
// same ranks as rank files, the tables unified by name, the same lines.
func TestDumpDefinitions(t *testing.T) {
	root := t.TempDir()
	rankDir, archDir := filepath.Join(root, "ranks"), filepath.Join(root, "archive")
	files := tracetest.Ranks(t, rankDir, 4, 2, 20, 0)
	if err := os.Mkdir(archDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeArchives(t, archDir, files, 4, false)
	dump := func(in string) (string, string) {
		var stdout, stderr, notes bytes.Buffer
		old := noteOut
		noteOut = &notes
		defer func() { noteOut = old }()
		if rc := run([]string{"dump", "-definitions", in}, &stdout, &stderr); rc != 0 {
			t.Fatalf("dump -definitions %s: exit %d: %s", in, rc, stderr.String())
		}
		return stdout.String(), notes.String()
	}
	a, aNote := dump(archDir)
	r, rNote := dump(rankDir)
	if !strings.Contains(aNote, "the definitions the 4 ranks unified at the collective end") {
		t.Errorf("archive: note %q", aNote)
	}
	if !strings.Contains(rNote, "the definitions of 4 files, unified by name") {
		t.Errorf("rank files: note %q", rNote)
	}
	if a != r || !strings.Contains(a, "region\t1\t") || !strings.Contains(a, "location\t8\trank=3\t1\t") {
		t.Errorf("archive\n%s\nrank files\n%s", a, r)
	}
}

func TestRankRuns(t *testing.T) {
	for _, c := range []struct {
		in   []int32
		want string
	}{
		{nil, "none"},
		{[]int32{3}, "3"},
		{[]int32{0, 1, 2, 3}, "0-3"},
		{[]int32{0, 2, 4, 6}, "0-6/2"},
		{[]int32{5, 9}, "5,9"},
		{[]int32{0, 1, 2, 7, 3}, "0-2,7,3"},
	} {
		if got := rankRuns(c.in); got != c.want {
			t.Errorf("rankRuns(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
