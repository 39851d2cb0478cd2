package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The golden harness: every command's output on a fixed set of trace files,
// byte for byte. It guards redesigns that must not change what users see.
//
// The traces in testdata/golden/traces are committed once, not recorded per
// run, so that their times, and so every number printed, stay the same:
//
//	heat/      go run ./examples/heat -n 128 -iters 60 -workers 2 -quiet
//	mpi/       examples/mpi-jacobi, mpirun -np 2 (PMPI wrappers, C)
//	c/         examples/c-jacobi (pthreads, C probes)
//	corrupt/   heat's trace with a BIN section duplicated, for the error text
//
// When a change of output is intended, regenerate the expected files with
//
//	go test ./cmd/hmbtrace -run TestGolden -update
//
// and review the diff of testdata/golden/out before committing it.
var update = flag.Bool("update", false, "rewrite testdata/golden/out from the current output")

// goldenCase is one command line. OUT in args stands for a fresh directory;
// the files written there are compared too.
type goldenCase struct {
	name string
	args []string
}

func goldenCases(trace string) []goldenCase {
	cases := []goldenCase{
		{"summary", []string{"summary", trace}},
		{"summary-tsv", []string{"summary", "-tsv", trace}},
		{"summary-width0", []string{"summary", "-width", "0", trace}},
		{"dump", []string{"dump", trace}},
		{"comm", []string{"comm", "-matrix", "OUT/matrix.svg", "-diagram", "OUT/diagram.svg", trace}},
		{"comm-bytes", []string{"comm", "-value", "bytes", "-matrix", "OUT/matrix.svg", trace}},
		{"comm-tsv", []string{"comm", "-tsv", trace}},
		{"score", []string{"score", "-g", "OUT/filter.txt", trace}},
		{"score-prolog", []string{"score", "-property", "prolog", "-threshold", "1", trace}},
		{"variation", []string{"variation", "-svg", "OUT/variation.svg", trace}},
		{"variation-tsv", []string{"variation", "-tsv", trace}},
		{"dynamics", []string{"dynamics", "-svg", "OUT/dynamics.svg", trace}},
		{"dynamics-tsv", []string{"dynamics", "-tsv", "-top", "0", trace}},
		{"report", []string{"report", "-o", "OUT/report.html", trace}},
		{"export-pprof", []string{"export", "-format", "pprof", "-o", "OUT/profile.pprof", trace}},
	}
	// Heat's Chrome JSON would be a megabyte of events that dump shows already.
	if filepath.Base(trace) != "heat" {
		cases = append(cases, goldenCase{"export-chrome", []string{"export", "-format", "chrome", "-o", "OUT/trace.json", trace}})
	}
	return cases
}

// reportStamp is the one volatile line of a report: when it was made.
var reportStamp = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+\-0-9]+`)

// foldAssets replaces the report's style sheet and script, embedded
// whole in every page, by a line naming them, so that the goldens hold
// what a trace changes and not three copies of report/assets. A page
// whose embedded copy differs from the file keeps it whole, and differs
// from its golden.
func foldAssets(t *testing.T, page []byte) []byte {
	t.Helper()
	for _, name := range []string{"report.css", "report.js"} {
		asset, err := os.ReadFile(filepath.Join("..", "..", "report", "assets", name))
		if err != nil {
			t.Fatal(err)
		}
		page = bytes.ReplaceAll(page, asset, []byte("[report/assets/"+name+", embedded unchanged]\n"))
	}
	return page
}

func TestGolden(t *testing.T) {
	// Start times print in the local zone: fix it, for every machine.
	local := time.Local
	time.Local = time.UTC
	defer func() { time.Local = local }()
	traces, err := filepath.Glob(filepath.Join("testdata", "golden", "traces", "*"))
	if err != nil || len(traces) == 0 {
		t.Fatalf("no golden traces: %v", err)
	}
	for _, trace := range traces {
		for _, c := range goldenCases(trace) {
			t.Run(filepath.Base(trace)+"/"+c.name, func(t *testing.T) {
				checkGolden(t, filepath.Join("testdata", "golden", "out", filepath.Base(trace)), c)
			})
		}
	}
}

func checkGolden(t *testing.T, dir string, c goldenCase) {
	outDir := t.TempDir()
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = strings.Replace(a, "OUT", outDir, 1)
	}
	var out, errOut bytes.Buffer
	rc := run(args, &out, &errOut)
	got := map[string][]byte{}
	var text bytes.Buffer
	fmt.Fprintf(&text, "$ hmbtrace %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(c.args, " "), rc, out.String(), errOut.String())
	got[c.name+".txt"] = bytes.ReplaceAll(text.Bytes(), []byte(outDir), []byte("OUT"))
	files, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(outDir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name(), ".html") {
			data = reportStamp.ReplaceAll(data, []byte("STAMP"))
			data = foldAssets(t, data)
		}
		got[c.name+"."+f.Name()] = data
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, c.name+".*"))
		for _, p := range old {
			os.Remove(p)
		}
		for name, data := range got {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want, _ := filepath.Glob(filepath.Join(dir, c.name+".*"))
	var names []string
	for _, p := range want {
		names = append(names, filepath.Base(p))
	}
	for name := range got {
		if !contains(names, name) {
			t.Errorf("%s: written now, not in the golden files (run with -update if intended)", name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		data, ok := got[name]
		if !ok {
			t.Errorf("%s: in the golden files, not written now", name)
			continue
		}
		exp, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, exp) {
			t.Errorf("%s differs from %s:\n%s", name, filepath.Join(dir, name), firstDiff(exp, data))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// firstDiff shows the first line where want and got part.
func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n want %.300q\n  got %.300q", i+1, w, g)
		}
	}
	return "(equal lines, different bytes)"
}
