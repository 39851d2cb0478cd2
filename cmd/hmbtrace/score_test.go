package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// runProgram runs the test program bin with HMB_OUTPUT=dir and the extra
// variables; the environment's own HMB_ settings are left out.
func runProgram(t *testing.T, bin, dir string, env ...string) string {
	t.Helper()
	cmd := exec.Command(bin, "-iters", "10")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HMB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append(env, "HMB_OUTPUT="+dir)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	return string(out)
}

var overheadLine = regexp.MustCompile(`Estimated measurement overhead: .*`)

// score -g on a stencil with a tiny helper called once per grid point
// (testdata/hotstencil) excludes that helper and nothing else, and a rerun
// with the generated filter file measures without it.
func TestScoreFilterHotHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs testdata/hotstencil")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "hotstencil")
	build := exec.Command(goTool, "build", "-o", bin, "./testdata/hotstencil")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/hotstencil: %v\n%s", err, out)
	}

	first := runProgram(t, bin, filepath.Join(tmp, "first"))
	trace := filepath.Join(tmp, "first", "hotstencil.0.hmb")
	flt := filepath.Join(tmp, "generated.flt")
	report := runOK(t, "score", "-g", flt, trace)
	if !strings.Contains(report, `Flagged (+) 1 region(s)`) || !strings.Contains(report, `"clamp"`) {
		t.Errorf("score report:\n%s", report)
	}
	f, err := filter.ParseFile(flt)
	if err != nil {
		t.Fatalf("the generated filter file does not parse: %v", err)
	}
	tf := tracetest.Open(t, trace)
	if len(tf.Regions) < 8 {
		t.Fatalf("%d regions in the trace", len(tf.Regions))
	}
	for _, r := range tf.Regions {
		if f.Excluded(r.Name, r.File) != (r.Name == "clamp") {
			t.Errorf("the filter file excludes %q: %v", r.Name, f.Excluded(r.Name, r.File))
		}
	}

	second := runProgram(t, bin, filepath.Join(tmp, "second"), "HMB_FILTER_FILE="+flt)
	trace2 := filepath.Join(tmp, "second", "hotstencil.0.hmb")
	tf2 := tracetest.Open(t, trace2)
	var filtered uint64
	for _, l := range tf2.Locations {
		filtered += l.FilteredName
		for _, p := range l.Profile {
			if tf2.RegionName(p.Region) == "clamp" && p.Visits > 0 {
				t.Errorf("%s: clamp still measured with the filter file", l.Name)
			}
		}
	}
	if filtered == 0 {
		t.Error("the rerun filtered nothing")
	}
	report2 := runOK(t, "score", trace2)
	if !strings.Contains(report2, "No region has a relative total overhead") {
		t.Errorf("rerun still flags regions:\n%s", report2)
	}
	// Reported, not asserted: the machine is shared and noisy.
	t.Logf("without filter: %s  %s", strings.SplitN(first, "\n", 2)[0], overheadLine.FindString(report))
	t.Logf("with filter:    %s  %s", strings.SplitN(second, "\n", 2)[0], overheadLine.FindString(report2))
}
