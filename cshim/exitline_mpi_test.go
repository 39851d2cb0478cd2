package cshim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIRunTwice runs 2 ranks twice into one output directory, in both
// layouts: the newest run's files have the plain names, the earlier run's
// are all in one directory of their own, readable, and only rank 0 says
// so; the usage error of rank 1 is said once, by rank 0, for the run.
func TestMPIRunTwice(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "usage", "usage.c")
	for _, layout := range []string{"archive", "rank-files"} {
		t.Run(layout, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hmb-out")
			env := []string{"HMB_OUTPUT_LAYOUT=" + layout}
			files := []string{"usage.hmbrun"}
			if layout == "rank-files" {
				files = []string{"usage.0.hmb", "usage.1.hmb"}
			}
			_, first := mpirun(t, 2, out, env, prog)
			_, second := mpirun(t, 2, out, env, prog)
			for r, stderr := range append(first, second...) {
				if strings.Contains(stderr, "earlier run") != (r == 2) {
					t.Errorf("run %d rank %d stderr:\n%s", r/2+1, r%2, stderr)
				}
			}
			moved := "hmbtrace: an earlier run's " + files[0] + " moved to "
			if len(files) > 1 {
				moved = "hmbtrace: an earlier run's 2 files of usage moved to "
			}
			if !strings.Contains(second[0], moved+filepath.Join(out, "usage.run-")) {
				t.Errorf("rank 0 of the second run does not say where the first went:\n%s", second[0])
			}
			dirs, _ := filepath.Glob(filepath.Join(out, "usage.run-*"))
			if len(dirs) != 1 {
				t.Fatalf("earlier runs' directories %q, want 1", dirs)
			}
			for _, d := range []string{out, dirs[0]} {
				for _, f := range files {
					if _, err := os.Stat(filepath.Join(d, f)); err != nil {
						t.Error(err)
					}
				}
				if layout == "archive" {
					a, err := tracefile.OpenArchive(filepath.Join(d, files[0]))
					if err != nil {
						t.Fatal(err)
					}
					a.Close()
				}
			}
			// The exit line: the run's, from rank 0, in the archive
			// layout, whose collective end reduced the totals; rank 1's
			// own in the layout of rank files.
			line := map[string][2]string{
				"archive":    {"hmbtrace: the run's 2 ranks: 1 usage error; see hmbtrace summary " + filepath.Join(out, "usage.hmbrun"), ""},
				"rank-files": {"", "hmbtrace: rank 1: 1 usage error (the last: usage error, location \"rank 1\": a leave of \"a\" with no region open"},
			}[layout]
			for r, want := range line {
				if want == "" {
					if strings.Contains(second[r], "usage error") {
						t.Errorf("rank %d says a usage error:\n%s", r, second[r])
					}
				} else if strings.Count(second[r], want) != 1 {
					t.Errorf("rank %d's stderr lacks %q:\n%s", r, want, second[r])
				}
			}
		})
	}
}
