package cshim_test

import (
	"debug/elf"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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

// TestFortranOneNameContained: the procedures whose names only DWARF told
// the run time (a contained procedure's symbol inner.0, the main program's
// MAIN__), and an OpenMP loop's body in one of them, have the names of the
// source with and without -g, at -O0 and -O2, with -flto and with
// --gc-sections, when hmbtrace's GCC plugin compiled them: it writes the
// names into the object. Two units' contained
// procedures named inner, both inner.0, keep their hosts' names. A filter
// rule naming prog::inner matches in both builds, at compile time and at
// run time. A stripped program keeps them.
func TestFortranOneNameContained(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	tracetest.RequireTool(t, "strip", "binutils")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	dir := filepath.Join(root, "cshim", "testdata", "gccplugin")
	srcs := []string{filepath.Join(dir, "onename.f90"), filepath.Join(dir, "onename_other.f90")}
	want := plainOutput(t, "gfortran", srcs)
	const omp = "demo::mod_proc::inner [clone ._omp_fn.0]"
	source := map[string]bool{
		"main": true, "prog": true, "prog::inner": true, "demo::mod_proc": true, "demo::mod_proc::inner": true,
		"ext_proc": true, "other": true, "other::inner": true,
		"!$omp parallel " + omp: true, "!$omp implicit task " + omp: true, "!$omp implicit barrier " + omp: true,
	}
	ff := filepath.Join(t.TempDir(), "f.filter")
	if err := os.WriteFile(ff, []byte("SCOREP_REGION_NAMES_BEGIN EXCLUDE prog::inner SCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		flags []string
		all   bool // nothing is inlined: every procedure is a region
	}{
		{"O0", []string{"-O0"}, true},
		{"O2", []string{"-O2"}, false},
		{"O2-flto", []string{"-O2", "-flto"}, false},
		// One function a partition: lto1 renames local symbols
		// (MAIN__.lto_priv.0), and a body's host is in another one.
		{"O2-flto-partitions", []string{"-O2", "-flto", "-flto-partition=max"}, false},
		// ld drops a section that is not allocated and has relocations,
		// unless it is linked to a section it keeps.
		{"O0-gc-sections", []string{"-O0", "-ffunction-sections", "-Wl,--gc-sections"}, true},
	} {
		opt := c.name
		t.Run(c.name, func(t *testing.T) {
			var names [2]map[string]bool
			for i, flags := range [][]string{append(c.flags[:len(c.flags):len(c.flags)], "-g"), c.flags} {
				p := fortranOpenMPBuild(t, bin, nil, flags, srcs)
				names[i] = regionNames(t, p, want, nil)
				for n := range names[i] {
					if !source[n] {
						t.Errorf("%v: region %q is not a name of the source", flags, n)
					}
				}
			}
			if !reflect.DeepEqual(names[0], names[1]) {
				t.Errorf("regions with -g %v, without %v", slices.Sorted(maps.Keys(names[0])), slices.Sorted(maps.Keys(names[1])))
			}
			// Optimized, the main program and the OpenMP loop's body keep
			// bodies of their own.
			if !names[0]["prog"] || !names[0]["!$omp parallel "+omp] {
				t.Errorf("regions %v lack prog or the OpenMP loop", slices.Sorted(maps.Keys(names[0])))
			}
			if c.all && !reflect.DeepEqual(names[0], source) {
				t.Errorf("regions %v, want %v", slices.Sorted(maps.Keys(names[0])), slices.Sorted(maps.Keys(source)))
			}
			if opt != "O0" {
				return
			}
			// strip keeps the names' section: functions with no symbol
			// left are still named at their entry, where probes call.
			p := fortranOpenMPBuild(t, bin, nil, c.flags, srcs)
			if msg, err := run(filepath.Dir(p.path), nil, "strip", p.path); err != nil {
				t.Fatalf("strip: %v\n%s", err, msg)
			}
			if got := regionNames(t, p, want, nil); !reflect.DeepEqual(got, source) {
				t.Errorf("stripped: regions %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(source)))
			}
			for _, flags := range [][]string{{"-O0", "-g"}, {"-O0"}} {
				// The compile-time filter decides on the same names.
				p := fortranOpenMPBuild(t, bin, []string{"--filter", ff}, flags, srcs)
				if got := regionNames(t, p, want, nil); got["prog::inner"] || !got["other::inner"] || !got["demo::mod_proc::inner"] {
					t.Errorf("%v: compile-time filter: regions %v, want no prog::inner, the other inner ones", flags, slices.Sorted(maps.Keys(got)))
				}
				// The run-time filter on a build without one.
				p = fortranOpenMPBuild(t, bin, nil, flags, srcs)
				got := regionNames(t, p, want, []string{"HMB_FILTER_FILE=" + ff})
				if got["prog::inner"] || !got["other::inner"] || !got["demo::mod_proc::inner"] {
					t.Errorf("%v: run-time filter: regions %v, want no prog::inner, the other inner ones", flags, slices.Sorted(maps.Keys(got)))
				}
			}
		})
	}
}

// fortranOpenMPBuild compiles srcs apart with -fopenmp and flags and links
// them with those, through hmbtrace-instrument with its options opts.
func fortranOpenMPBuild(t *testing.T, bin string, opts, flags, srcs []string) program {
	t.Helper()
	dir := t.TempDir()
	var objs []string
	for _, src := range srcs {
		obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".f90")+".o")
		args := append(append(append(append([]string(nil), opts...), "gfortran", "-fopenmp"), flags...), "-c", src, "-o", obj, "-J", dir)
		if msg, err := run(dir, nil, bin, args...); err != nil {
			t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
		}
		objs = append(objs, obj)
	}
	p := program{path: filepath.Join(dir, "prog"), out: filepath.Join(dir, "hmb-out")}
	args := append(append(append(append([]string(nil), opts...), "gfortran", "-fopenmp"), flags...), "-o", p.path)
	args = append(args, objs...)
	if msg, err := run(dir, nil, bin, args...); err != nil {
		t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
	}
	return p
}

// constructLine is the source position the OpenMP adapter adds to a
// construct's name where DWARF has the line; without -g there is none.
var constructLine = regexp.MustCompile(` @[^ ]+:[0-9]+$`)

// regionNames runs p on two threads and returns the names of the regions
// its trace enters, OpenMP constructs without their source position.
func regionNames(t *testing.T, p program, want string, env []string) map[string]bool {
	t.Helper()
	out, _ := p.run(t, append([]string{"HMB_THROTTLE=0", "OMP_NUM_THREADS=2"}, env...))
	if out != want {
		t.Fatalf("the traced program printed %q, the plain one %q", out, want)
	}
	names := map[string]bool{}
	for n := range checkTrace(t, dump(t, filepath.Join(p.out, "prog.0.hmb")), nil, nil) {
		names[constructLine.ReplaceAllString(n, "")] = true
	}
	return names
}

// TestFortranOneNameShared: a shared library's contained procedure has its
// host's name with and without -g too, and C compiled with the plugin gets
// no names' section: its symbols name it.
func TestFortranOneNameShared(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	dir := filepath.Join(root, "cshim", "testdata", "gccplugin")
	srcs := []string{filepath.Join(dir, "onename.f90"), filepath.Join(dir, "onename_other.f90")}
	want := plainOutput(t, "gfortran", srcs)
	for _, flags := range [][]string{{"-O0", "-g"}, {"-O0"}} {
		tmp := t.TempDir()
		lib := filepath.Join(tmp, "libother.so")
		args := append(append([]string{"gfortran"}, flags...), "-fPIC", "-shared", "-o", lib, srcs[1])
		if msg, err := run(tmp, nil, bin, args...); err != nil {
			t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
		}
		p := program{path: filepath.Join(tmp, "prog"), out: filepath.Join(tmp, "hmb-out")}
		args = append(append([]string{"gfortran", "-fopenmp"}, flags...), "-J", tmp, "-o", p.path, srcs[0], "-L"+tmp, "-lother", "-Wl,-rpath,"+tmp)
		if msg, err := run(tmp, nil, bin, args...); err != nil {
			t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
		}
		if got := regionNames(t, p, want, nil); !got["other"] || !got["other::inner"] || !got["prog::inner"] {
			t.Errorf("%v: regions %v, want other, other::inner and prog::inner", flags, slices.Sorted(maps.Keys(got)))
		}
	}

	tmp := t.TempDir()
	src := filepath.Join(tmp, "f.c")
	if err := os.WriteFile(src, []byte("static int inner(int x) { return x + 1; }\nint outer(int x) { return inner(x) * 2; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(tmp, "f.o")
	if msg, err := run(tmp, nil, bin, "--verbose", "gcc", "-O0", "-c", src, "-o", obj); err != nil || !strings.Contains(string(msg), "-fplugin=") {
		t.Fatalf("hmbtrace-instrument gcc: %v (want the plugin loaded)\n%s", err, msg)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".hmbtrace.names") != nil {
		t.Errorf("a C object compiled with the plugin has a .hmbtrace.names section")
	}
}
