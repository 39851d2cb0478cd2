package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestScoreFindsHeatsHelper runs examples/heat with its tiny per-point
// helper region: score -g must exclude that helper and nothing else, and a
// rerun with the filter file pays less for measuring (reported, not
// asserted: the machine is noisy).
func TestScoreFindsHeatsHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/heat")
	}
	dir := t.TempDir()
	bin := tracetest.BuildExample(t, "heat")
	runHeat := func(name string, env ...string) string {
		cmd := exec.Command(bin, "-helper", "-n", "1024", "-iters", "3", "-quiet")
		cmd.Env = append(append(os.Environ(), "HMB_OUTPUT="+dir, "HMB_NAME="+name), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("heat: %v\n%s", err, out)
		}
		return filepath.Join(dir, name+".0.hmb")
	}
	first := runHeat("first")
	filterFile := filepath.Join(dir, "heat.filter")
	var out, errOut bytes.Buffer
	if rc := run([]string{"score", "-g", filterFile, first}, &out, &errOut); rc != 0 {
		t.Fatalf("score: exit %d: %s", rc, errOut.String())
	}
	t.Logf("score before:\n%s", out.String())
	b, err := os.ReadFile(filterFile)
	if err != nil {
		t.Fatal(err)
	}
	var excluded []string
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		switch line = strings.TrimSpace(line); {
		case line == "EXCLUDE":
			inBlock = true
		case line == "SCOREP_REGION_NAMES_END":
			inBlock = false
		case inBlock && line != "" && !strings.HasPrefix(line, "#"):
			excluded = append(excluded, line)
		}
	}
	if strings.Join(excluded, ",") != "clamp" {
		t.Fatalf("the filter file excludes %q, want clamp alone:\n%s", excluded, b)
	}
	second := runHeat("second", "HMB_FILTER_FILE="+filterFile)
	out.Reset()
	if rc := run([]string{"score", second}, &out, &errOut); rc != 0 {
		t.Fatalf("score: exit %d: %s", rc, errOut.String())
	}
	t.Logf("score with the filter file:\n%s", out.String())
	if strings.Contains(out.String(), " clamp") && !strings.Contains(out.String(), "filtered") {
		t.Errorf("clamp is still measured with the filter file")
	}
}
