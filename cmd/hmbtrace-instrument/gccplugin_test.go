package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The plugin as make cshim installs it in the fake machine's library.
const (
	pluginDir      = "/opt/hmb/lib/hmbtrace"
	pluginSO       = pluginDir + "/" + pluginFile
	pluginBuiltFor = "12.2.0\nConfigured with: ../src/configure -v --with-pkgversion='Debian 12.2.0-14+deb12u1'\n"
)

// linkTail is what a link of the fake machine gets after the objects.
const linkTail = "-L/opt/hmb/lib -Wl,-rpath,/opt/hmb/lib -Wl,-u,__cyg_profile_func_enter -Wl,-u,__cyg_profile_func_exit -Wl,--push-state,--no-as-needed -l:libhmbtrace-hooks.a -lhmbtrace -Wl,--pop-state"

func TestPlanPlugin(t *testing.T) {
	e, _ := fakeEnv(append(installed, pluginSO)...)
	// The system include directories gccV names, for the plugin.
	sys := ""
	for _, d := range []string{"/usr/include/c++/12/", "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/backward/", "/usr/include/c++/12/backward/", "/usr/include/"} {
		sys += " " + pluginArg + "system-dir=" + d
	}
	for _, tc := range []struct {
		opts options
		cmd  string
		want string
	}{
		{options{}, "g++ -O2 -c x.cc", "g++ -O2 -c x.cc -fplugin=" + pluginSO + sys + " -I/opt/hmb/include"},
		{options{}, "mpicxx -O2 -c x.cc", "mpicxx -O2 -c x.cc -fplugin=" + pluginSO + sys + " -I/opt/hmb/include"},
		{options{}, "g++ -isystem /opt/eigen -c x.cc", "g++ -isystem /opt/eigen -c x.cc -fplugin=" + pluginSO + sys + " " + pluginArg + "system-dir=/opt/eigen/ -I/opt/hmb/include"},
		// gfortran -v names no include directories: nothing to add.
		{options{}, "gfortran -O2 -c x.f90", "gfortran -O2 -c x.f90 -fplugin=" + pluginSO + " -I/opt/hmb/include"},
		{options{noExcludeSystem: true}, "gcc -c x.c", "gcc -c x.c -fplugin=" + pluginSO + " " + pluginArg + "keep-system -I/opt/hmb/include"},
		{options{noPlugin: true}, "gcc -c x.c", "gcc -c x.c -finstrument-functions -finstrument-functions-exclude-file-list=/usr/include/c++/12/,/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/backward/,/usr/include/c++/12/backward/,/usr/include/ -I/opt/hmb/include"},
		{options{}, "gcc -finstrument-functions -c x.c", "gcc -finstrument-functions -c x.c -finstrument-functions -finstrument-functions-exclude-file-list=/usr/include/c++/12/,/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/backward/,/usr/include/c++/12/backward/,/usr/include/ -I/opt/hmb/include"},
		// -flto: the plugin at the compile (for -ffat-lto-objects' code)
		// and at the link, where lto1 runs the pass.
		{options{}, "gcc -flto -c x.c", "gcc -flto -c x.c -fplugin=" + pluginSO + sys + " -I/opt/hmb/include"},
		{options{}, "gcc -flto=auto -O3 x.c -o x", "gcc -flto=auto -O3 x.c -o x -fplugin=" + pluginSO + sys + " -I/opt/hmb/include " + linkTail},
		{options{}, "gcc -flto -O3 x.o y.o -o x", "gcc -flto -O3 x.o y.o -o x -I/opt/hmb/include -fplugin=" + pluginSO + sys + " " + linkTail},
		// gcc links the objects of -flto compiles with LTO without -flto too.
		{options{}, "gcc x.o -o x", "gcc x.o -o x -I/opt/hmb/include -fplugin=" + pluginSO + sys + " " + linkTail},
		{options{}, "gfortran x.o -o x", "gfortran x.o -o x -I/opt/hmb/include -fplugin=" + pluginSO + sys + " " + linkTail},
		{options{noExcludeSystem: true}, "gcc x.o -o x", "gcc x.o -o x -I/opt/hmb/include -fplugin=" + pluginSO + " " + pluginArg + "keep-system " + linkTail},
		{options{noPlugin: true}, "gcc x.o -o x", "gcc x.o -o x -I/opt/hmb/include " + linkTail},
		{options{user: true}, "gcc x.o -o x", "gcc x.o -o x -I/opt/hmb/include " + linkTail},
	} {
		argv, _, err := plan(tc.opts, strings.Fields(tc.cmd), e)
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		if got := strings.Join(argv, " "); got != tc.want {
			t.Errorf("%+v %s:\n got %s\nwant %s", tc.opts, tc.cmd, got, tc.want)
		}
	}

	// A plugin built for another GCC would make the compile fail: fall back, and say so.
	other := e
	other.readFile = func(string) ([]byte, error) { return []byte("13.1.0\nConfigured with: x\n"), nil }
	argv, notes, err := plan(options{}, strings.Fields("g++ -c x.cc"), other)
	if err != nil || !slices.Contains(argv, "-finstrument-functions") || slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, "-fplugin") }) {
		t.Errorf("other GCC: %q %v", argv, err)
	}
	if len(notes) == 0 || notes[0].verbose || !strings.Contains(notes[0].text, "built for GCC 13.1.0") {
		t.Errorf("other GCC: notes %+v", notes)
	}

	// The link says it loads the plugin with --verbose only.
	if _, notes, _ := plan(options{}, strings.Fields("gcc -O3 -flto x.o -o x"), e); len(notes) != 1 || !notes[0].verbose || !strings.Contains(notes[0].text, "lto1 instruments") {
		t.Errorf("-flto link: notes %+v", notes)
	}
	// A link whose compiles fell back to -finstrument-functions falls
	// back too, without a word: the compiles said why.
	if argv, notes, _ := plan(options{}, strings.Fields("g++ x.o -o x"), other); len(notes) != 0 || slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, "-fplugin") }) {
		t.Errorf("other GCC link: %q %+v", argv, notes)
	}

	// Clang never gets the plugin.
	clang := e
	clang.probe = func(string, ...string) ([]byte, error) { return []byte("clang version 16.0.6\n"), nil }
	if argv, _, _ := plan(options{}, strings.Fields("clang -c x.c"), clang); !slices.Contains(argv, "-finstrument-functions-after-inlining") {
		t.Errorf("clang: %q", argv)
	}
	if argv, _, _ := plan(options{}, strings.Fields("clang -flto x.o -o x"), clang); slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, "-fplugin") }) {
		t.Errorf("clang link: %q", argv)
	}
}

func TestPlanPluginFilter(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	ff := filepath.Join(dir, "f.filter")
	const src = `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE Dom::*  a\ b
  INCLUDE Dom::solve(int)
SCOREP_REGION_NAMES_END
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */gen/*
SCOREP_FILE_NAMES_END
`
	if err := os.WriteFile(ff, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e, probes := fakeEnv(append(installed, pluginSO)...)
	argv, _, err := plan(options{filterFile: ff}, strings.Fields("g++ -c x.cc"), e)
	if err != nil {
		t.Fatal(err)
	}
	// The plugin applies the filter: no probe compile.
	if len(*probes) != 1 {
		t.Errorf("probes %q", *probes)
	}
	var rules string
	for _, a := range argv {
		if r, ok := strings.CutPrefix(a, pluginArg+"rules="); ok {
			rules = r
		}
	}
	if rules == "" {
		t.Fatalf("no rules argument: %q", argv)
	}
	got, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	want := "# hmbtrace-instrument: the filter's rules for hmbtrace_gcc.so\n" +
		"file exclude */gen/*\n" +
		"region exclude Dom::*\n" +
		"region exclude a\\ b\n" +
		"region include Dom::solve(int)\n"
	if string(got) != want {
		t.Errorf("rules file:\n%s\nwant\n%s", got, want)
	}
	// The same filter again: the same file.
	argv2, _, _ := plan(options{filterFile: ff}, strings.Fields("g++ -c y.cc"), e)
	if !slices.Contains(argv2, pluginArg+"rules="+rules) {
		t.Errorf("second compile: %q, want rules %s", argv2, rules)
	}
}
