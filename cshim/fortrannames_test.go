package cshim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestFortranOneName: an external Fortran procedure is one region, randlc,
// whether built with -g or without (gfortran's symbol is randlc_); one
// filter file excludes it in both builds, at compile time and at run time;
// and the rules of the file that match nothing are said once: by the link
// (hmbtrace-instrument) and at the run's exit (HMB_FILTER_FILE).
func TestFortranOneName(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	dir := filepath.Join(root, "cshim", "testdata", "gccplugin")
	srcs := []string{filepath.Join(dir, "randlc.f90"), filepath.Join(dir, "randmain.f90")}
	want := plainOutput(t, "gfortran", srcs)
	ff := filepath.Join(t.TempDir(), "f.filter")
	const rules = "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE randlc\n  EXCLUDE randlc_ nosuch*\nSCOREP_REGION_NAMES_END\n"
	if err := os.WriteFile(ff, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	const unmatched = "2 rules matched no function of "
	const which = "so filtered nothing: EXCLUDE randlc_ (SCOREP_REGION_NAMES); EXCLUDE nosuch* (SCOREP_REGION_NAMES)"
	for _, flags := range [][]string{{"-O2", "-g"}, {"-O2"}} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			enters := tracedRun(t, instrumentedBuildFlags(t, bin, "gfortran", nil, flags, srcs...), want)
			if enters["randlc"] != 10 || enters["randlc_"] != 0 {
				t.Errorf("regions %v: want randlc 10 times, no randlc_", enters)
			}
			// The run-time filter, and what it says of its rules at exit.
			p := instrumentedBuildFlags(t, bin, "gfortran", nil, flags, srcs...)
			_, stderr := p.run(t, []string{"HMB_FILTER_FILE=" + ff, "HMB_THROTTLE=0"})
			line := "hmbtrace: HMB_FILTER_FILE " + ff + ": 2 rules matched no region of this run, " + which
			if strings.Count(stderr, line) != 1 {
				t.Errorf("run-time filter: stderr lacks %q once:\n%s", line, stderr)
			}
			if n := checkTrace(t, dump(t, filepath.Join(p.out, "prog.0.hmb")), nil, nil)["randlc"]; n != 0 {
				t.Errorf("run-time filter: randlc entered %d times", n)
			}
			// The compile-time filter: compiled apart, then linked, which
			// says the rules that matched no function.
			tmp := t.TempDir()
			var objs []string
			for _, src := range srcs {
				obj := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(src), ".f90")+".o")
				args := append(append([]string{"--filter", ff, "gfortran"}, flags...), "-c", src, "-o", obj, "-J", tmp)
				if msg, err := run(tmp, nil, bin, args...); err != nil {
					t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
				} else if strings.Contains(string(msg), "matched no") {
					t.Errorf("a compile judged the rules, which only the link can:\n%s", msg)
				}
				objs = append(objs, obj)
			}
			q := program{path: filepath.Join(tmp, "prog"), out: filepath.Join(tmp, "hmb-out")}
			args := append([]string{"--filter", ff, "gfortran", "-o", q.path}, objs...)
			msg, err := run(tmp, nil, bin, args...)
			if err != nil {
				t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
			}
			line = "hmbtrace-instrument: filter " + ff + ": " + unmatched + q.path + ", " + which
			if strings.Count(string(msg), line) != 1 {
				t.Errorf("the link does not say the rules that matched nothing once:\n%s\nwant %s", msg, line)
			}
			filtered := tracedRun(t, q, want)
			if filtered["randlc"] != 0 || filtered["randmain"] == 0 && flags[len(flags)-1] == "-g" {
				t.Errorf("compile-time filter: regions %v, want no randlc", filtered)
			}
		})
	}
}
