package cshim_test

// These tests build programs through hmbtrace-instrument with GCC, which
// loads hmbtrace's GCC plugin (cshim/gccplugin): functions are instrumented
// after inlining, so inlined accessors are not regions and functions with
// an out-of-line body are, and their enters and leaves balance on every way
// out. The same builds with --no-plugin (-finstrument-functions) show the
// accessors, so the checks can fail.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// gccPlugin returns the plugin make cshim built; the machines the tests run
// on have GCC's plugin headers (.ci/deps).
func gccPlugin(t *testing.T, build string) string {
	t.Helper()
	so := filepath.Join(build, "lib", "hmbtrace", "hmbtrace_gcc.so")
	if _, err := os.Stat(so); err != nil {
		t.Fatalf("make cshim built no GCC plugin (are GCC's plugin headers installed? Debian package gcc-12-plugin-dev): %v", err)
	}
	return so
}

// instrumentedBuild compiles srcs apart (-O2 -g) and links them through
// hmbtrace-instrument with its options, and returns the program.
func instrumentedBuild(t *testing.T, bin, compiler string, opts []string, srcs ...string) program {
	t.Helper()
	return instrumentedBuildFlags(t, bin, compiler, opts, []string{"-O2", "-g"}, srcs...)
}

// instrumentedBuildFlags is instrumentedBuild with the compiler flags given.
func instrumentedBuildFlags(t *testing.T, bin, compiler string, opts, cflags []string, srcs ...string) program {
	t.Helper()
	dir := t.TempDir()
	var objs []string
	for _, src := range srcs {
		obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+".o")
		args := append(append(append(append([]string(nil), opts...), "--verbose", compiler), cflags...), "-c", src, "-o", obj)
		if compiler == "gfortran" {
			// The modules' .mod files, for the sources that follow.
			args = append(args, "-J", dir)
		}
		msg, err := run(dir, nil, bin, args...)
		if err != nil {
			t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
		}
		plugin := strings.Contains(string(msg), "-fplugin=")
		if noPlugin := strings.Contains(strings.Join(opts, " "), "--no-plugin"); plugin == noPlugin {
			t.Fatalf("hmbtrace-instrument %q: plugin used %v, want %v:\n%s", args, plugin, !noPlugin, msg)
		}
		objs = append(objs, obj)
	}
	p := program{path: filepath.Join(dir, "prog"), out: filepath.Join(dir, "hmb-out")}
	args := append(append(append([]string(nil), opts...), compiler, "-o", p.path), objs...)
	if msg, err := run(dir, nil, bin, args...); err != nil {
		t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
	}
	return p
}

// plainOutput builds srcs with the compiler alone and returns what the
// program prints.
func plainOutput(t *testing.T, compiler string, srcs []string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, "plain")
	cargs := append([]string{"-O2", "-J", dir, "-o", prog}, srcs...)
	if compiler != "gfortran" {
		cargs = append([]string{"-O2", "-o", prog}, srcs...)
	}
	if msg, err := run(dir, nil, compiler, cargs...); err != nil {
		t.Fatalf("%s %q: %v\n%s", compiler, cargs, err, msg)
	}
	out, err := run(dir, nil, prog, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, out)
	}
	return string(out)
}

// tracedRun runs p without throttling (the counts below are of every call)
// and checks its output and its trace, whose enters per region it returns.
func tracedRun(t *testing.T, p program, want string, args ...string) map[string]int {
	t.Helper()
	out, _ := p.run(t, []string{"HMB_THROTTLE=0"}, args...)
	if out != want {
		t.Fatalf("the traced program printed %q, the plain one %q", out, want)
	}
	return checkTrace(t, dump(t, filepath.Join(p.out, "prog.0.hmb")), nil, nil)
}

func TestGCCPluginCxx(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "g++", "g++")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	src := filepath.Join(root, "cshim", "testdata", "gccplugin", "afterinline.cc")
	args := []string{"1000", "10", "12"}
	want := plainOutput(t, "g++", []string{src}, args...)

	enters := tracedRun(t, instrumentedBuild(t, bin, "g++", nil, src), want, args...)
	for name, n := range map[string]int{
		"main": 1, "smooth(Field&)": 10, "classify(int)": 5, "check(int)": 18,
		"guarded(int)": 6, "unguarded(int)": 6, "cleanup(int)": 6, "calls_fail(int)": 3, "fail(int)": 2,
	} {
		if enters[name] != n {
			t.Errorf("%s: %d enters, want %d (regions: %v)", name, enters[name], n, enters)
		}
	}
	// The compiler may turn recursion and tail calls into loops: at least
	// the outermost call is a region, and checkTrace saw them balance.
	for _, name := range []string{"fib(int)", "count_down(int, int)"} {
		if enters[name] == 0 {
			t.Errorf("%s: no enter (regions: %v)", name, enters)
		}
	}
	for name := range enters {
		if strings.HasPrefix(name, "Field::") || strings.HasPrefix(name, "hidden") || systemRegion(name) {
			t.Errorf("%s is a region: inlined, no_instrument_function or a system header's", name)
		}
	}

	// At -O0 nothing is inlined, cloned or turned into a loop: every call
	// of the source is a region visit, the accessors' too, as with
	// -finstrument-functions.
	o0 := tracedRun(t, instrumentedBuildFlags(t, bin, "g++", nil, []string{"-O0"}, src), want, args...)
	for name, n := range map[string]int{
		"main": 1, "smooth(Field&)": 10, "classify(int)": 5, "check(int)": 18,
		"guarded(int)": 6, "unguarded(int)": 6, "cleanup(int)": 6, "calls_fail(int)": 3, "fail(int)": 2,
		"fib(int)": 465, "count_down(int, int)": 25, "Field::at(int)": 4*998*10 + 1000, // 4 per element and step, 1 per element to fill
	} {
		if o0[name] != n {
			t.Errorf("-O0: %s: %d enters, want %d (regions: %v)", name, o0[name], n, o0)
		}
	}
	if o0["hidden(int)"] != 0 {
		t.Errorf("-O0: hidden(int), no_instrument_function, is a region")
	}

	// The control: -finstrument-functions instruments the inlined accessor.
	old := tracedRun(t, instrumentedBuild(t, bin, "g++", []string{"--no-plugin"}, src), want, args...)
	if old["Field::at(int)"] == 0 {
		t.Errorf("--no-plugin: Field::at(int) is no region (regions: %v); the check above cannot fail", old)
	}

	// The filter: exactly what it excludes is left out, by the names the
	// run time gives the regions.
	ff := filepath.Join(t.TempDir(), "f.filter")
	const rules = `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *guarded* fib(int) cl?ssify*
  INCLUDE unguarded(int)
SCOREP_REGION_NAMES_END
`
	if err := os.WriteFile(ff, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := filter.ParseFile(ff)
	if err != nil {
		t.Fatal(err)
	}
	filtered := tracedRun(t, instrumentedBuild(t, bin, "g++", []string{"--filter", ff}, src), want, args...)
	excluded := 0
	for name, n := range enters {
		switch {
		case f.Excluded(name, ""):
			excluded++
			if filtered[name] != 0 {
				t.Errorf("filtered: %s has %d enters, the filter excludes it", name, filtered[name])
			}
		case filtered[name] != n:
			t.Errorf("filtered: %s has %d enters, want %d as without the filter", name, filtered[name], n)
		}
	}
	if excluded != 3 || len(filtered) != len(enters)-3 {
		t.Errorf("filtered: %d regions excluded, want 3 (guarded, fib, classify); regions %v", excluded, filtered)
	}
}

func TestGCCPluginFortran(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	dir := filepath.Join(root, "cshim", "testdata", "gccplugin")
	srcs := []string{filepath.Join(dir, "kern.f90"), filepath.Join(dir, "afterinline.f90")}
	want := plainOutput(t, "gfortran", srcs)

	enters := tracedRun(t, instrumentedBuild(t, bin, "gfortran", nil, srcs...), want)
	// The main program by its name in the source, which DWARF (-g) gives.
	if enters["afterinline"] != 1 || enters["kern::work"] != 20 || enters["kern::sq"] != 0 {
		t.Errorf("regions %v: want the main program once, kern::work 20 times, kern::sq (inlined) never", enters)
	}
	// The filter, by the names of Fortran's regions.
	ff := filepath.Join(t.TempDir(), "f.filter")
	if err := os.WriteFile(ff, []byte("SCOREP_REGION_NAMES_BEGIN EXCLUDE kern::work SCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	filtered := tracedRun(t, instrumentedBuild(t, bin, "gfortran", []string{"--filter", ff}, srcs...), want)
	if filtered["afterinline"] != 1 || filtered["kern::work"] != 0 {
		t.Errorf("filtered: regions %v, want the main program once and no kern::work", filtered)
	}
	old := tracedRun(t, instrumentedBuild(t, bin, "gfortran", []string{"--no-plugin"}, srcs...), want)
	if old["kern::sq"] != 20*1000 {
		t.Errorf("--no-plugin: regions %v, want kern::sq 20000 times; the check above cannot fail", old)
	}
}
