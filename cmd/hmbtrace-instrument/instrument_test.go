package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/filter"
)

// gccV is what gcc -v -E -x c++ /dev/null prints, shortened.
const gccV = `Using built-in specs.
Target: x86_64-linux-gnu
Configured with: ../src/configure -v --with-pkgversion='Debian 12.2.0-14+deb12u1'
gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)
#include "..." search starts here:
#include <...> search starts here:
 /usr/include/c++/12
 /usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/backward
 /usr/include
End of search list.
`

// fakeEnv is a machine with gcc, g++, mpicxx (an MPI wrapper of g++), and
// the library installed in /opt/hmb, optionally with the OpenMP adapter.
func fakeEnv(files ...string) (env, *[]string) {
	var probes []string
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	return env{
		probe: func(compiler string, args ...string) ([]byte, error) {
			probes = append(probes, compiler+" "+strings.Join(args, " "))
			if len(args) > 0 && args[0] == "-v" {
				return []byte(gccV), nil
			}
			return nil, errors.New("unknown option")
		},
		lib: func() (libInfo, error) {
			return libInfo{libDir: "/opt/hmb/lib", includeDir: "/opt/hmb/include"}, nil
		},
		exists: func(path string) bool { return have[path] },
		readFile: func(path string) ([]byte, error) {
			if path == pluginDir+"/"+pluginVersion {
				return []byte(pluginBuiltFor), nil
			}
			return nil, os.ErrNotExist
		},
	}, &probes
}

var installed = []string{"/opt/hmb/lib/libhmbtrace.so", "/opt/hmb/lib/libhmbtrace.a", "/opt/hmb/lib/libhmbtrace-hooks.a", "/opt/hmb/lib/libhmbtrace-mpi.so"}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		mode mode
		srcs int
	}{
		{"gcc --version", modePass, 0},
		{"gcc -print-sysroot", modePass, 0},
		{"gcc -c x.c", modeCompile, 1},
		{"gcc -S -o x.s x.c", modeCompile, 1},
		{"g++ -E x.cc", modePreprocess, 1},
		{"g++ -M x.cc", modePreprocess, 1},
		{"g++ -MD -MF x.d -c x.cc -o x.o", modeCompile, 1},
		{"g++ -fsyntax-only x.cc", modePreprocess, 1},
		{"g++ -o prog a.o b.o -lm", modeLink, 0},
		{"g++ -o prog a.cc b.o", modeLink, 1},
		{"gcc -r -o all.o a.o b.o", modePartial, 0},
		{"gfortran -O2 -J mods -c heat.F90", modeCompile, 1},
		{"gcc -x c -c -", modeCompile, 1},
		{"gcc -x none -c a.s", modeCompile, 1},
		{"gcc -o x -I inc -D X main.c", modeLink, 1},
	} {
		c := parseCmdline(strings.Fields(tc.cmd))
		if c.mode != tc.mode || len(c.sources) != tc.srcs {
			t.Errorf("%s: mode %d with %d sources, want %d with %d", tc.cmd, c.mode, len(c.sources), tc.mode, tc.srcs)
		}
	}
	// The value of -o, -I and -x is not an input.
	c := parseCmdline(strings.Fields("gcc -o out.c -I src.c -x c++ in.c -isystem /opt/eigen"))
	if len(c.sources) != 1 || c.sources[0] != (source{"in.c", langCXX}) || !slices.Equal(c.isystem, []string{"/opt/eigen"}) {
		t.Errorf("sources %v, isystem %v", c.sources, c.isystem)
	}
	if c := parseCmdline(strings.Fields("gcc -c a.s")); c.instrumentable() {
		t.Error("assembly is instrumentable")
	}
}

// The named forms, hmbtrace-mpicc and the like, are the prefix with the
// compiler taken from their name and the options from HMB_INSTRUMENT_FLAGS;
// the compiler's own arguments are never read as the prefix's options.
func TestWrapperArgs(t *testing.T) {
	for _, tc := range []struct {
		argv0, flags string
		args, want   []string
	}{
		{"/usr/bin/hmbtrace-instrument", "--verbose", []string{"gcc", "-c", "x.c"}, []string{"gcc", "-c", "x.c"}},
		{"hmbtrace-instrument.test", "", []string{"gcc"}, []string{"gcc"}},
		{"/opt/hmb/bin/hmbtrace-mpicc", "", []string{"-c", "x.c"}, []string{"--", "mpicc", "-c", "x.c"}},
		{"hmbtrace-g++", " --verbose  --filter f.filter ", []string{"-O2", "x.cc"}, []string{"--verbose", "--filter", "f.filter", "--", "g++", "-O2", "x.cc"}},
		{"hmbtrace-gfortran", "", []string{"--version"}, []string{"--", "gfortran", "--version"}},
		{"hmbtrace-", "", []string{"gcc"}, []string{"gcc"}},
	} {
		if got := wrapperArgs(tc.argv0, tc.args, tc.flags); !slices.Equal(got, tc.want) {
			t.Errorf("wrapperArgs(%q, %q, %q) = %q, want %q", tc.argv0, tc.args, tc.flags, got, tc.want)
		}
	}
	o, rest, err := parseOptions(wrapperArgs("hmbtrace-mpif90", []string{"--help"}, "--user"))
	if err != nil || !o.user || !slices.Equal(rest, []string{"mpif90", "--help"}) {
		t.Errorf("hmbtrace-mpif90 --help: %+v %q %v; want --user and mpif90's own --help", o, rest, err)
	}
}

func TestOptions(t *testing.T) {
	t.Setenv("HMB_FILTER_FILE", "env.filter")
	o, rest, err := parseOptions(strings.Fields("--user --verbose --no-exclude-system mpicc -c x.c"))
	if err != nil || !o.user || !o.verbose || !o.noExcludeSystem || o.filterFile != "env.filter" || !slices.Equal(rest, []string{"mpicc", "-c", "x.c"}) {
		t.Errorf("%+v %q %v", o, rest, err)
	}
	for _, args := range [][]string{{"--filter", "a.filter", "gcc"}, {"--filter=a.filter", "gcc"}} {
		if o, _, err := parseOptions(args); err != nil || o.filterFile != "a.filter" {
			t.Errorf("%q: %+v %v", args, o, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no compiler given"},
		{[]string{"--verbose"}, "no compiler given"},
		{[]string{"-print-sysroot"}, "no compiler given: -print-sysroot is an option"},
		{[]string{"--frobnicate", "gcc"}, "unknown option --frobnicate"},
		{[]string{"--filter"}, "--filter needs a file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--version"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "hmbtrace-instrument "+version) {
		t.Errorf("--version: %d %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "usage: hmbtrace-instrument") {
		t.Errorf("-h: %d %q", code, stdout.String())
	}
}

func TestPlanCompile(t *testing.T) {
	e, probes := fakeEnv(installed...)
	argv, _, err := plan(options{}, strings.Fields("g++ -O2 -isystem /opt/eigen -c x.cc -o x.o"), e)
	if err != nil {
		t.Fatal(err)
	}
	want := "g++ -O2 -isystem /opt/eigen -c x.cc -o x.o -finstrument-functions " +
		"-finstrument-functions-exclude-file-list=/usr/include/c++/12/," +
		"/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/backward/,/usr/include/c++/12/backward/," +
		"/usr/include/,/opt/eigen/ -I/opt/hmb/include"
	if got := strings.Join(argv, " "); got != want {
		t.Errorf("compile:\n got %s\nwant %s", got, want)
	}
	if !slices.Equal(*probes, []string{"g++ -v -E -x c++ /dev/null"}) {
		t.Errorf("probes %q", *probes)
	}
	// --user and --no-exclude-system.
	if argv, _, _ := plan(options{user: true}, strings.Fields("gcc -c x.c"), e); strings.Join(argv, " ") != "gcc -c x.c -I/opt/hmb/include" {
		t.Errorf("--user: %q", argv)
	}
	if argv, _, _ := plan(options{noExcludeSystem: true}, strings.Fields("gcc -c x.c"), e); strings.Join(argv, " ") != "gcc -c x.c -finstrument-functions -I/opt/hmb/include" {
		t.Errorf("--no-exclude-system: %q", argv)
	}
	// Preprocessing and queries run unchanged but for hmbtrace.h's directory.
	if argv, _, _ := plan(options{}, strings.Fields("gcc -E x.c"), e); strings.Join(argv, " ") != "gcc -E x.c -I/opt/hmb/include" {
		t.Errorf("-E: %q", argv)
	}
	if argv, _, _ := plan(options{}, strings.Fields("gcc --version"), e); strings.Join(argv, " ") != "gcc --version" {
		t.Errorf("--version: %q", argv)
	}
	// A launcher runs first; the compiler after it is asked what it is.
	*probes = nil
	if argv, _, _ := plan(options{}, strings.Fields("ccache mpicxx -c x.cc"), e); argv[0] != "ccache" || argv[1] != "mpicxx" || !slices.Contains(argv, "-finstrument-functions") {
		t.Errorf("ccache: %q", argv)
	}
	if !slices.Equal(*probes, []string{"mpicxx -v -E -x c++ /dev/null"}) {
		t.Errorf("ccache: probes %q", *probes)
	}
	if argv, _, _ := plan(options{}, strings.Fields("ccache mpicxx -o p x.o"), e); !slices.Contains(argv, "-lhmbtrace-mpi") {
		t.Errorf("ccache mpicxx link: %q", argv)
	}
	// A compile does not need the library; a link does.
	e.lib = func() (libInfo, error) { return libInfo{}, errors.New("libhmbtrace not found: nowhere") }
	if argv, _, err := plan(options{}, strings.Fields("gcc -c x.c"), e); err != nil || argv[len(argv)-1] != "-finstrument-functions-exclude-file-list=/usr/include/c++/12/,/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/backward/,/usr/include/c++/12/backward/,/usr/include/" {
		t.Errorf("compile without library: %q %v", argv, err)
	}
	if _, _, err := plan(options{}, strings.Fields("gcc -o x x.o"), e); err == nil || !strings.Contains(err.Error(), "libhmbtrace not found") {
		t.Errorf("link without library: %v", err)
	}
}

func TestPlanLink(t *testing.T) {
	e, _ := fakeEnv(installed...)
	const hooks = "-L/opt/hmb/lib -Wl,-rpath,/opt/hmb/lib -Wl,-u,__cyg_profile_func_enter -Wl,-u,__cyg_profile_func_exit -Wl,--push-state,--no-as-needed"
	for _, tc := range []struct{ cmd, want string }{
		{"g++ -o prog a.o -lm", "g++ -o prog a.o -lm -I/opt/hmb/include " + hooks + " -l:libhmbtrace-hooks.a -lhmbtrace -Wl,--pop-state"},
		{"mpicxx -o prog a.o", "mpicxx -o prog a.o -I/opt/hmb/include " + hooks + " -lhmbtrace-mpi -l:libhmbtrace-hooks.a -lhmbtrace -Wl,--pop-state"},
		{"/usr/bin/mpif90 -o prog a.o", "/usr/bin/mpif90 -o prog a.o -I/opt/hmb/include " + hooks + " -lhmbtrace-mpi -l:libhmbtrace-hooks.a -lhmbtrace -Wl,--pop-state"},
		{"gcc -static -o prog a.o", "gcc -static -o prog a.o -I/opt/hmb/include -L/opt/hmb/lib -Wl,-u,__cyg_profile_func_enter -Wl,-u,__cyg_profile_func_exit -Wl,--push-state,--no-as-needed -lhmbtrace -Wl,--pop-state -lpthread -ldl"},
		{"gcc -r -o all.o a.o", "gcc -r -o all.o a.o -I/opt/hmb/include"},
	} {
		argv, _, err := plan(options{}, strings.Fields(tc.cmd), e)
		if got := strings.Join(argv, " "); err != nil || got != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.cmd, got, err, tc.want)
		}
	}
	// An installation without the hooks' archive (an older one): the library's hooks.
	eh, _ := fakeEnv("/opt/hmb/lib/libhmbtrace.so")
	if argv, _, err := plan(options{}, strings.Fields("gcc -o prog a.o"), eh); err != nil || slices.Contains(argv, "-l:libhmbtrace-hooks.a") || !slices.Contains(argv, "-lhmbtrace") {
		t.Errorf("without libhmbtrace-hooks.a: %q (%v)", argv, err)
	}
	// -fopenmp: the adapter when it is installed, else a note that says so.
	argv, notes, _ := plan(options{}, strings.Fields("gcc -fopenmp -o prog a.o"), e)
	if slices.Contains(argv, "-lhmbtrace-omp") || len(notes) != 1 || notes[0].verbose || !strings.Contains(notes[0].text, "libhmbtrace-omp) is not installed in /opt/hmb/lib") {
		t.Errorf("-fopenmp without the adapter: %q %v", argv, notes)
	}
	eo, _ := fakeEnv(append(installed, "/opt/hmb/lib/libhmbtrace-omp.so")...)
	argv, notes, _ = plan(options{}, strings.Fields("mpicc -fopenmp -o prog a.o"), eo)
	if i := slices.Index(argv, "-lhmbtrace-omp"); i < 0 || argv[i+1] != "-lhmbtrace-mpi" || len(notes) != 0 {
		t.Errorf("-fopenmp with the adapter: %q %v", argv, notes)
	}
	// A command that names the OpenMP runtime itself (miniAMR's "-lm
	// -lgomp", with or without -fopenmp): the adapter goes right before it,
	// else libgomp's GOMP_parallel is the one the program calls.
	const adapter = "-L/opt/hmb/lib -Wl,--push-state,--no-as-needed -lhmbtrace-omp -Wl,--pop-state "
	for _, tc := range []struct{ cmd, want string }{
		{"mpicc -o prog a.o -lm -lgomp", "mpicc -o prog a.o -lm " + adapter + "-lgomp"},
		{"gcc -fopenmp -o prog a.o -l gomp -lgomp", "gcc -fopenmp -o prog a.o " + adapter + "-l gomp -lgomp"},
		{"clang -o prog a.o /usr/lib/llvm-14/lib/libomp.so.5", "clang -o prog a.o " + adapter + "/usr/lib/llvm-14/lib/libomp.so.5"},
		{"ccache gcc -o prog a.o -liomp5", "ccache gcc -o prog a.o " + adapter + "-liomp5"},
	} {
		argv, _, err := plan(options{}, strings.Fields(tc.cmd), eo)
		got := strings.Join(argv, " ")
		if err != nil || !strings.HasPrefix(got, tc.want+" ") || strings.Count(got, "-lhmbtrace-omp") != 1 {
			t.Errorf("%s:\n got %s (%v)\nwant %s ...", tc.cmd, got, err, tc.want)
		}
	}
	// -lgompx and libgomp.txt are not the runtime.
	if argv, _, _ := plan(options{}, strings.Fields("gcc -o prog a.o -lgompx libgomp.txt"), eo); slices.Contains(argv, "-lhmbtrace-omp") {
		t.Errorf("not a runtime: %q", argv)
	}

	// An MPI compiler without the wrappers, a missing library: errors
	// naming the file and the directory.
	en, _ := fakeEnv("/opt/hmb/lib/libhmbtrace.so")
	if _, _, err := plan(options{}, strings.Fields("mpicc -o prog a.o"), en); err == nil || !strings.Contains(err.Error(), "mpicc is an MPI compiler, but there is no libhmbtrace-mpi.so in /opt/hmb/lib") {
		t.Errorf("MPI without libhmbtrace-mpi: %v", err)
	}
	if _, _, err := plan(options{}, strings.Fields("gcc -static -o prog a.o"), en); err == nil || !strings.Contains(err.Error(), "no libhmbtrace.a in /opt/hmb/lib") {
		t.Errorf("-static without libhmbtrace.a: %v", err)
	}
	ne, _ := fakeEnv()
	if _, _, err := plan(options{}, strings.Fields("gcc -o prog a.o"), ne); err == nil || !strings.Contains(err.Error(), "no libhmbtrace.so or libhmbtrace.a in /opt/hmb/lib") {
		t.Errorf("no library: %v", err)
	}
}

func TestIsMPI(t *testing.T) {
	e, probes := fakeEnv()
	for name, want := range map[string]bool{
		"mpicc": true, "mpicxx": true, "mpic++": true, "mpiCC": true, "/usr/bin/mpif90": true, "mpifort": true, "mpif77": true, "mpiicpc": true,
		"gcc": false, "g++-12": false, "x86_64-linux-gnu-gcc-12": false, "clang++": false, "gfortran": false, "cc": false,
	} {
		if got := isMPI(e, name); got != want {
			t.Errorf("isMPI(%s) = %v", name, got)
		}
	}
	if len(*probes) != 0 {
		t.Errorf("known names probed: %q", *probes)
	}
	// An unknown name is an MPI wrapper if -showme or -show works.
	e.probe = func(compiler string, args ...string) ([]byte, error) {
		if args[0] == "-show" {
			return []byte("gcc -I/opt/mpich/include -L/opt/mpich/lib -lmpi"), nil
		}
		return nil, errors.New("no")
	}
	if !isMPI(e, "CC") {
		t.Error("a wrapper that answers -show is not MPI")
	}
}

func TestExcludeNames(t *testing.T) {
	f, err := filter.Parse("t", strings.NewReader(`SCOREP_REGION_NAMES_BEGIN
EXCLUDE ns::Dom::x(long) ns::Dom::x(int)\ const tiny get*
SCOREP_REGION_NAMES_END`))
	if err != nil {
		t.Fatal(err)
	}
	fns := []function{
		{"ns::Dom::x(long)", "ns::Dom::x"},
		{"ns::Dom::x(int) const", "ns::Dom::x"},
		{"ns::Dom::xy(long)", "ns::Dom::xy"}, // kept: "ns::Dom::x" would drop it too
		{"tiny", "tiny"},
		{"getA()", "getA"},
		{"getAB()", "getAB"}, // excluded as well: "getA" may go
		{"main", "main"},
		{"Foo<int, 2>::get()", "Foo<int, 2>::get"}, // GCC splits the list at commas
	}
	if got, want := excludeNames(fns, f), []string{"tiny", "getA", "getAB"}; !slices.Equal(got, want) {
		t.Errorf("excludeNames = %q, want %q", got, want)
	}
}

// TestCompileTimeFilter compiles with GCC: the filter's names are not
// instrumented, and nothing else is lost to GCC's substring match.
func TestCompileTimeFilter(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "dom.cc")
	os.WriteFile(src, []byte(`namespace ns { struct Dom { double *v; double &x(long i) { return v[i]; }
double &xy(long i) { return v[i + 1]; } double z(long i) { return v[i]; } }; }
static int tiny(int a) { return a + 1; }
static int tinyish(int a) { return a + 2; }
double run(ns::Dom &d) { double s = 0; for (long i = 0; i < 10; i++) s += d.x(i) + d.xy(i) + d.z(i) + tiny(i) + tinyish(i); return s; }
`), 0o644)
	flt := filepath.Join(dir, "f")
	os.WriteFile(flt, []byte("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE ns::Dom::x(long) ns::Dom::z(long) tiny(int)\nSCOREP_REGION_NAMES_END\n"), 0o644)
	e := newEnv()
	e.lib = func() (libInfo, error) { return libInfo{libDir: dir, includeDir: dir}, nil }
	obj := filepath.Join(dir, "dom.o")
	argv, notes, err := plan(options{filterFile: flt}, []string{"g++", "-O2", "-c", src, "-o", obj}, e)
	if err != nil {
		t.Fatal(err)
	}
	list := ""
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, "-finstrument-functions-exclude-function-list="); ok {
			list = v
		}
	}
	// x would take xy along and tiny tinyish: only z may go.
	if list != "ns::Dom::z" {
		t.Errorf("exclude list %q, want ns::Dom::z (notes %v)", list, notes)
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	// The object: every function but z calls the entry hook.
	asm := filepath.Join(dir, "dom.s")
	args := append(probeArgs(argv[1:]), "-O0", "-S", "-o", asm)
	if out, err := exec.Command(argv[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fns, err := instrumentedFunctions(asm)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fns {
		names = append(names, f.full)
	}
	slices.Sort(names)
	want := []string{"ns::Dom::x(long)", "ns::Dom::xy(long)", "run(ns::Dom&)", "tiny(int)", "tinyish(int)"}
	if !slices.Equal(names, want) {
		t.Errorf("instrumented %q, want %q", names, want)
	}
	// A filter that says nothing at compile time costs no probe, and a bad
	// one is an error naming the file.
	os.WriteFile(flt, []byte("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE\nSCOREP_REGION_NAMES_END\n"), 0o644)
	if _, _, err := plan(options{filterFile: flt}, []string{"g++", "-c", src}, e); err == nil || !strings.Contains(err.Error(), flt) {
		t.Errorf("bad filter: %v", err)
	}
	// A missing one is named once, not as "filter file: filter file: ...".
	missing := filepath.Join(t.TempDir(), "none.filter")
	if _, _, err := plan(options{filterFile: missing}, []string{"g++", "-c", src}, e); err == nil ||
		!strings.Contains(err.Error(), missing) || strings.Count(err.Error(), "filter file") != 1 {
		t.Errorf("missing filter: %v", err)
	}
}

func TestProbeArgs(t *testing.T) {
	got := probeArgs(strings.Fields("-O3 -MD -MF x.d -MT x.o -c -o x.o -flto=auto -I inc x.cc -ox2.o -openmp"))
	if want := []string{"-O3", "-I", "inc", "x.cc", "-openmp"}; !slices.Equal(got, want) {
		t.Errorf("probeArgs = %q, want %q", got, want)
	}
}

func TestShellQuote(t *testing.T) {
	if got := shellQuote([]string{"gcc", "-DX=a b", "it's", "-O2"}); got != `gcc '-DX=a b' 'it'\''s' -O2` {
		t.Errorf("shellQuote = %s", got)
	}
}

// TestPlanLinkMPILibrary: a plain compiler whose command names the MPI
// library (CMake's MPI::MPI_C, pkg-config's -lmpi, the Fortran bindings)
// gets the wrappers right before it, since the first library that defines
// MPI_Send is the one the program calls.
func TestPlanLinkMPILibrary(t *testing.T) {
	e, _ := fakeEnv(installed...)
	const wrappers = "-L/opt/hmb/lib -Wl,--push-state,--no-as-needed -lhmbtrace-mpi -Wl,--pop-state "
	const ompi = "/usr/lib/x86_64-linux-gnu/openmpi/lib/"
	for _, tc := range []struct{ cmd, want string }{
		{"gcc t.o -o t -Wl,-rpath," + ompi + " " + ompi + "libmpi.so", "gcc t.o -o t -Wl,-rpath," + ompi + " " + wrappers + ompi + "libmpi.so"},
		{"gcc -o t t.o -L" + ompi + " -lmpi -lm", "gcc -o t t.o -L" + ompi + " " + wrappers + "-lmpi -lm"},
		{"gcc -o t t.o -l mpi", "gcc -o t t.o " + wrappers + "-l mpi"},
		{"gcc -o t t.o -l:libmpi.so.40", "gcc -o t t.o " + wrappers + "-l:libmpi.so.40"},
		{"ccache gcc -o t t.o /opt/mpich/lib/libmpich.so.12", "ccache gcc -o t t.o " + wrappers + "/opt/mpich/lib/libmpich.so.12"},
		// CMake's MPI::MPI_Fortran: the Fortran bindings come first, and
		// libhmbtrace-mpi holds their wrappers too.
		{"gfortran t.o -o t " + ompi + "libmpi_usempif08.so " + ompi + "libmpi_usempi_ignore_tkr.so " + ompi + "libmpi_mpifh.so " + ompi + "libmpi.so",
			"gfortran t.o -o t " + wrappers + ompi + "libmpi_usempif08.so " + ompi + "libmpi_usempi_ignore_tkr.so " + ompi + "libmpi_mpifh.so " + ompi + "libmpi.so"},
		{"gfortran -o t t.o -lmpi_mpifh -lmpi", "gfortran -o t t.o " + wrappers + "-lmpi_mpifh -lmpi"},
		// An MPI compiler whose command names the library as well: before it.
		{"mpicc -o t t.o -lmpi", "mpicc -o t t.o " + wrappers + "-lmpi"},
		// Named to the linker itself: before that argument.
		{"gcc -o t t.o -Wl,--as-needed,-lmpi", "gcc -o t t.o " + wrappers + "-Wl,--as-needed,-lmpi"},
		{"gcc -o t t.o -Wl,-l,mpi_mpifh", "gcc -o t t.o " + wrappers + "-Wl,-l,mpi_mpifh"},
		{"gcc -o t t.o -Xlinker -lmpich", "gcc -o t t.o " + wrappers + "-Xlinker -lmpich"},
		{"gcc -o t t.o -Wl,--library=mpi", "gcc -o t t.o " + wrappers + "-Wl,--library=mpi"},
	} {
		argv, notes, err := plan(options{}, strings.Fields(tc.cmd), e)
		got := strings.Join(argv, " ")
		if err != nil || !strings.HasPrefix(got, tc.want+" ") || strings.Count(got, "-lhmbtrace-mpi") != 1 {
			t.Errorf("%s:\n got %s (%v)\nwant %s ...", tc.cmd, got, err, tc.want)
		}
		if len(notes) != 1 || !notes[0].verbose || !strings.Contains(notes[0].text, "-lhmbtrace-mpi placed before") {
			// The fake machine has no GCC plugin: the link adds no note of it.
			t.Errorf("%s: notes %+v", tc.cmd, notes)
		}
	}
	// With the OpenMP runtime named too, each adapter before its library,
	// in either order.
	eo, _ := fakeEnv(append(installed, "/opt/hmb/lib/libhmbtrace-omp.so")...)
	const adapter = "-L/opt/hmb/lib -Wl,--push-state,--no-as-needed -lhmbtrace-omp -Wl,--pop-state "
	for _, tc := range []struct{ cmd, want string }{
		{"gcc -o t t.o -lgomp -lmpi", "gcc -o t t.o " + adapter + "-lgomp " + wrappers + "-lmpi"},
		{"gcc -o t t.o -lmpi -lgomp", "gcc -o t t.o " + wrappers + "-lmpi " + adapter + "-lgomp"},
		{"gcc -o t t.o -Wl,-lgomp -lmpi", "gcc -o t t.o " + adapter + "-Wl,-lgomp " + wrappers + "-lmpi"},
		{"gcc -o t t.o -l:libgomp.so.1 -Wl,-lmpi", "gcc -o t t.o " + adapter + "-l:libgomp.so.1 " + wrappers + "-Wl,-lmpi"},
	} {
		argv, _, err := plan(options{}, strings.Fields(tc.cmd), eo)
		if got := strings.Join(argv, " "); err != nil || !strings.HasPrefix(got, tc.want+" ") {
			t.Errorf("%s:\n got %s (%v)\nwant %s ...", tc.cmd, got, err, tc.want)
		}
	}
	// Not MPI libraries: no wrappers, and no probe says otherwise.
	for _, cmd := range []string{"gcc -o t t.o -lmpix -lmpfr libmpi.txt", "gcc -o t t.o -lompitrace"} {
		if argv, _, _ := plan(options{}, strings.Fields(cmd), e); slices.Contains(argv, "-lhmbtrace-mpi") {
			t.Errorf("%s: %q", cmd, argv)
		}
	}
	// A static MPI library cannot be wrapped: said, not linked.
	argv, notes, err := plan(options{}, strings.Fields("gcc -o t t.o /opt/mpi/lib/libmpi.a"), e)
	if err != nil || slices.Contains(argv, "-lhmbtrace-mpi") || len(notes) != 1 || notes[0].verbose || !strings.Contains(notes[0].text, "/opt/mpi/lib/libmpi.a is a static MPI library") {
		t.Errorf("libmpi.a: %q %+v %v", argv, notes, err)
	}
	// Without libhmbtrace-mpi: an error that names the library and why.
	en, _ := fakeEnv("/opt/hmb/lib/libhmbtrace.so")
	if _, _, err := plan(options{}, strings.Fields("gcc -o t t.o -l mpi"), en); err == nil || err.Error() != "the command links -l mpi, but there is no libhmbtrace-mpi.so in /opt/hmb/lib (make cshim builds it when mpicc is on PATH)" {
		t.Errorf("no libhmbtrace-mpi: %v", err)
	}
	// A compile names no libraries.
	if argv, _, _ := plan(options{user: true}, strings.Fields("gcc -c t.c -lmpi"), e); slices.Contains(argv, "-lhmbtrace-mpi") {
		t.Errorf("compile: %q", argv)
	}
}
