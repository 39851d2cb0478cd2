package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// Every command that reads in parallel prints and writes the same with one
// worker as with several, on the ranks of a run and on the golden traces.
func TestProcsSameOutput(t *testing.T) {
	ranks := t.TempDir()
	tracetest.Ranks(t, ranks, 3, 3, 120, 0)
	traces := []string{ranks, filepath.Join("testdata", "golden", "traces", "mpi"), filepath.Join("testdata", "golden", "traces", "heat")}
	commands := [][]string{
		{"summary"},
		{"summary", "-tsv"},
		{"comm", "-tsv"},
		{"comm", "-matrix", "OUT/matrix.svg"},
		{"score", "-g", "OUT/filter.txt"},
		{"variation", "-tsv"},
		{"variation", "-svg", "OUT/v.svg"},
		{"dynamics", "-tsv", "-top", "0"},
		{"export", "-format", "otf2", "-o", "OUT/archive"},
		{"export", "-format", "pprof", "-o", "OUT/p.pprof"},
		{"export", "-format", "chrome", "-o", "OUT/t.json"},
	}
	for _, trace := range traces {
		for _, c := range commands {
			outputs := map[string]map[string][]byte{}
			for _, procs := range []string{"1", "3"} {
				dir := t.TempDir()
				var args []string
				for _, a := range c {
					args = append(args, strings.ReplaceAll(a, "OUT", dir))
				}
				args = append(args, "-procs", procs, trace)
				var out, errOut bytes.Buffer
				if rc := run(args, &out, &errOut); rc != 0 {
					t.Fatalf("%v: exit %d: %s", args, rc, errOut.String())
				}
				files := map[string][]byte{"stdout": bytes.ReplaceAll(out.Bytes(), []byte(dir), []byte("OUT"))}
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() && filepath.Base(p) != "traces.otf2" { // the anchor holds a random trace id
						b, _ := os.ReadFile(p)
						rel, _ := filepath.Rel(dir, p)
						files[rel] = b
					}
					return err
				})
				outputs[procs] = files
			}
			one, three := outputs["1"], outputs["3"]
			if len(one) != len(three) {
				t.Errorf("%s %v: %d files with 1 worker, %d with 3", trace, c, len(one), len(three))
			}
			for name, b := range one {
				if !bytes.Equal(three[name], b) {
					t.Errorf("%s %v: %s differs between 1 and 3 workers", trace, c, name)
				}
			}
		}
	}
	// A bad -procs is a usage error.
	var out, errOut bytes.Buffer
	if rc := run([]string{"summary", "-procs", "-2", ranks}, &out, &errOut); rc == 0 || !strings.Contains(errOut.String(), "-procs") {
		t.Errorf("summary -procs -2: exit %d, %q", rc, errOut.String())
	}
}
