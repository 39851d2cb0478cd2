package cshim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// ltoBuild compiles srcs apart and links them through hmbtrace-instrument,
// with -flto at both and the flags given, and returns the program and what
// the link said (--verbose).
func ltoBuild(t *testing.T, bin, compiler string, opts, cflags []string, srcs ...string) (program, string) {
	t.Helper()
	dir := t.TempDir()
	var objs []string
	for _, src := range srcs {
		obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+".o")
		args := append(append(append(append([]string(nil), opts...), compiler, "-flto"), cflags...), "-c", src, "-o", obj)
		if msg, err := run(dir, nil, bin, args...); err != nil {
			t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
		}
		objs = append(objs, obj)
	}
	p := program{path: filepath.Join(dir, "prog"), out: filepath.Join(dir, "hmb-out")}
	args := append(append(append(append(append([]string(nil), opts...), "--verbose", compiler, "-flto"), cflags...), "-o", p.path), objs...)
	msg, err := run(dir, nil, bin, args...)
	if err != nil {
		t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
	}
	return p, string(msg)
}

// TestGCCPluginLTO builds with -flto, where GCC optimises at the link, in
// lto1: hmbtrace-instrument keeps the plugin and loads it at the link too,
// and the program is instrumented after inlining as without LTO. A system
// header's function (-isystem at the compile, unknown at the link) stays
// out, no_instrument_function too, the compile-time filter applies, and a
// short function called often is throttled. The same build with
// --no-plugin instruments the inlined accessors, so the checks can fail.
func TestGCCPluginLTO(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "g++", "g++")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	dir := filepath.Join(root, "cshim", "testdata", "gccplugin")

	// C++: the accessors are inlined and no regions; the functions with
	// an out-of-line body are, with every way out balanced.
	src := filepath.Join(dir, "afterinline.cc")
	args := []string{"1000", "10", "12"}
	want := plainOutput(t, "g++", []string{src}, args...)
	p, msg := ltoBuild(t, bin, "g++", nil, []string{"-O2"}, src)
	if !strings.Contains(msg, "-fplugin=") || strings.Contains(msg, "-finstrument-functions") {
		t.Fatalf("the -flto link does not load the plugin:\n%s", msg)
	}
	enters := tracedRun(t, p, want, args...)
	for name, n := range map[string]int{
		"main": 1, "smooth(Field&)": 10, "guarded(int)": 6, "unguarded(int)": 6, "cleanup(int)": 6, "check(int)": 18,
	} {
		if enters[name] != n {
			t.Errorf("-flto: %s: %d enters, want %d (regions: %v)", name, enters[name], n, enters)
		}
	}
	for name := range enters {
		if strings.HasPrefix(name, "Field::") || strings.HasPrefix(name, "hidden") || systemRegion(name) {
			t.Errorf("-flto: %s is a region: inlined, no_instrument_function or a system header's", name)
		}
	}
	old, _ := ltoBuild(t, bin, "g++", []string{"--no-plugin"}, []string{"-O2"}, src)
	if o := tracedRun(t, old, want, args...); o["Field::at(int)"] == 0 {
		t.Errorf("-flto --no-plugin: Field::at(int) is no region (regions: %v); the check above cannot fail", o)
	}

	// C with an -isystem header, the filter, and throttling.
	csrc := filepath.Join(dir, "lto", "ltomain.c")
	incdir := filepath.Join(dir, "lto", "include")
	inc := []string{"-O2", "-isystem", incdir}
	cwant := plainOutput(t, "gcc", []string{"-isystem", incdir, csrc}, "100", "200000")
	p, _ = ltoBuild(t, bin, "gcc", nil, inc, csrc)
	out, _ := p.run(t, nil, "100", "200000")
	if out != cwant {
		t.Fatalf("the traced program printed %q, the plain one %q", out, cwant)
	}

	f := tracetest.Open(t, filepath.Join(p.out, "prog.0.hmb"))
	enters = checkTrace(t, dump(t, f.Path), []string{"main", "user", "leaf"}, nil)
	if enters["user"] != 100 || enters["sysfn"] != 0 || enters["hidden"] != 0 {
		t.Errorf("-flto: enters %v: want 100 of user, none of sysfn (-isystem) and hidden", enters)
	}
	throttled := false
	for _, tr := range f.Throttled() {
		switch tr.Name {
		case "leaf":
			throttled = true
		default:
			t.Errorf("-flto: %s throttled", tr.Name)
		}
	}
	if !throttled {
		t.Errorf("-flto: leaf, 200000 calls, is not throttled (throttled: %v)", f.Throttled())
	}
	// Without -isystem the header's function is the user's: a region.
	p, _ = ltoBuild(t, bin, "gcc", nil, []string{"-O2", "-I", incdir}, csrc)
	p.run(t, nil, "100", "10")
	if e := checkTrace(t, dump(t, filepath.Join(p.out, "prog.0.hmb")), nil, nil); e["sysfn"] != 100 {
		t.Errorf("-I instead of -isystem: enters %v, want 100 of sysfn; the check above cannot fail", e)
	}

	ff := filepath.Join(t.TempDir(), "f.filter")
	if err := os.WriteFile(ff, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE user\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := filter.ParseFile(ff); err != nil {
		t.Fatal(err)
	}
	p, _ = ltoBuild(t, bin, "gcc", []string{"--filter", ff}, inc, csrc)
	p.run(t, nil, "100", "10")
	if e := checkTrace(t, dump(t, filepath.Join(p.out, "prog.0.hmb")), []string{"main", "leaf"}, nil); e["user"] != 0 {
		t.Errorf("-flto --filter: enters %v, want none of user, which the filter excludes", e)
	}
}
