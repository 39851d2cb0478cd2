package cshim_test

// These tests build programs through hmbtrace-instrument, the compiler
// prefix make cshim puts in <build>/bin, as a user would: a C++ MPI code
// through its Makefile, a Fortran code, a CMake project; and they check
// that a link with the library placed before the objects traces or fails,
// never runs untraced.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// instrumentBin returns the compiler prefix built by make cshim.
func instrumentBin(t *testing.T, build string) string {
	t.Helper()
	bin := filepath.Join(build, "bin", "hmbtrace-instrument")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("make cshim built no hmbtrace-instrument: %v", err)
	}
	return bin
}

// systemRegion reports whether a region is a function of a system header:
// the C++ standard library's, or a GCC internal's (a user function may
// take std:: types as parameters, so only the name before them counts).
func systemRegion(name string) bool {
	if i := strings.IndexByte(name, '('); i > 0 {
		name = name[:i]
	}
	for _, p := range []string{"std::", "__gnu_cxx::", "__gnu_debug::"} {
		if strings.HasPrefix(name, p) || strings.Contains(name, " "+p) {
			return true
		}
	}
	return false
}

// buildCxxMPI builds examples/cxx-mpi with CXX set to the prefix and its
// options, in a temporary directory.
func buildCxxMPI(t *testing.T, bin string, opts ...string) program {
	t.Helper()
	dir := t.TempDir()
	cxx := strings.Join(append(append([]string{bin}, opts...), "mpicxx"), " ")
	if msg, err := run(filepath.Join(root, "examples", "cxx-mpi"), nil, "make", "-s", "O="+dir, "CXX="+cxx); err != nil {
		t.Fatalf("make -C examples/cxx-mpi CXX=%q: %v\n%s", cxx, err, msg)
	}
	p := program{path: filepath.Join(dir, "cxx-mpi"), out: filepath.Join(dir, "hmb-out")}
	checkOwnHooks(t, p.path)
	return p
}

// checkOwnHooks checks that a program linked by hmbtrace-instrument has the
// hooks of libhmbtrace-hooks.a, its throttled functions' fast path, in
// itself: a direct call from its functions, no call into libhmbtrace.so.
func checkOwnHooks(t *testing.T, prog string) {
	t.Helper()
	syms := symbols(t, prog)
	for _, hook := range []string{"__cyg_profile_func_enter", "__cyg_profile_func_exit"} {
		if syms[hook] != "T" {
			t.Errorf("%s: %s is %q in nm, want defined in the program (T)", filepath.Base(prog), hook, syms[hook])
		}
	}
}

// TestInstrumentCxxMPI builds the C++ MPI example with
// `hmbtrace-instrument mpicxx` through its Makefile and runs it on two
// ranks: the user's functions and accessors are regions, the standard
// library's are not, the accessors are throttled, and the trace, its
// summary and its OTF2 export are whole. The same build with --no-exclude-system does show the standard
// library's accessors, so the check can fail.
func TestInstrumentCxxMPI(t *testing.T) {
	build := mpiLibrary(t)
	tracetest.RequireTool(t, "mpicxx", "libopenmpi-dev")
	bin := instrumentBin(t, build)
	const np = 2
	// -finstrument-functions: with the GCC plugin (the default, below) the
	// accessors are inlined and no regions, and there is nothing to throttle.
	p := buildCxxMPI(t, bin, "--no-plugin")
	// A threshold of 100 µs, not 250 ns: on a loaded machine preemptions
	// raised an accessor's mean above 250 ns, and it stayed measured. What
	// is tested is what throttling does, not the default's threshold.
	outs, _ := mpirun(t, np, p.out, []string{"HMB_THROTTLE_TIME=100us"}, p.path, "2000", "20")
	if !strings.Contains(outs[0], "cxx-mpi: ranks=2 elements=2000 steps=20") {
		t.Fatalf("rank 0 printed %q", outs[0])
	}
	files := rankFiles(t, p.out, "cxx-mpi", np)
	for r, f := range files {
		evs := dump(t, f.Path)
		enters := checkTrace(t, evs, []string{"main", "MPI_Init", "MPI_Finalize", "MPI_Sendrecv", "MPI_Allreduce",
			"calc_pressure(Mesh&)", "exchange_halo(Mesh&, int, int)", "Mesh::Mesh(int)"}, []string{fmt.Sprintf("rank %d", r)})
		// The user's accessors are throttled (10^5 visits, past HMB_THROTTLE_CALLS'
		// default, of less than 100 µs): their calls up to then are in the
		// trace (nothing was shed: the run fits the buffer), and the
		// profile counts every call: p is written once and read three
		// times per element and step, and taken four times per halo
		// exchange. The functions that call them and MPI's are not.
		throttled := map[string]tracefile.ThrottledRegion{}
		for _, tr := range f.Throttled() {
			throttled[tr.Name] = tr
		}
		for _, acc := range []string{"Mesh::p(int)", "Mesh::x(int)", "Mesh::xd(int)", "Mesh::e(int)"} {
			if _, ok := throttled[acc]; !ok {
				t.Errorf("rank %d: accessor %s not throttled (throttled: %v)", r, acc, throttled)
			}
		}
		for name := range throttled {
			if !strings.HasPrefix(name, "Mesh::") {
				t.Errorf("rank %d: %s throttled", r, name)
			}
		}
		p := throttled["Mesh::p(int)"]
		if want := uint64(20 * (4*2000 + 4)); p.Visits+p.VisitsAfter != want || uint64(enters["Mesh::p(int)"]) != p.Visits {
			t.Errorf("rank %d: Mesh::p(int) %d visits timed, %d after, %d enters in the trace; want %d in all, the timed ones traced",
				r, p.Visits, p.VisitsAfter, enters["Mesh::p(int)"], want)
		}
		for name := range enters {
			if systemRegion(name) {
				t.Errorf("rank %d: %s, a function of a system header, is a region", r, name)
			}
		}
		if enters["MPI_Sendrecv"] != 2*20 || enters["MPI_Allreduce"] != 3 {
			t.Errorf("rank %d: %d Sendrecv and %d Allreduce, want 40 and 3", r, enters["MPI_Sendrecv"], enters["MPI_Allreduce"])
		}
	}
	sends, recvs, _ := messagesOf(t, files)
	if len(sends) != np*2*20 {
		t.Errorf("%d sends, want %d", len(sends), np*2*20)
	}
	checkMatched(t, sends, recvs)
	sum, err := run(root, nil, built.hmbtrace, "summary", p.out)
	if err != nil || !regexp.MustCompile(`(?m)^\s+Mesh::p\(int\) at .* visits timed before`).Match(sum) || !strings.Contains(string(sum), "Regions per rank") {
		t.Fatalf("hmbtrace summary: %v\n%s", err, sum)
	}
	tracetest.RequireTool(t, "otf2-print", "otf2-tools")
	archive := filepath.Join(t.TempDir(), "otf2")
	if msg, err := run(root, nil, built.hmbtrace, "export", "-format", "otf2", "-o", archive, p.out); err != nil {
		t.Fatalf("hmbtrace export: %v\n%s", err, msg)
	}
	checkOTF2Messages(t, otf2Print(t, "-Werror", filepath.Join(archive, "traces.otf2")), len(sends))

	// With the GCC plugin: the same program, the same messages, no
	// accessor a region.
	pl := buildCxxMPI(t, bin)
	plOuts, _ := mpirun(t, np, pl.out, nil, pl.path, "2000", "20")
	// The result line; the others are timings.
	result := regexp.MustCompile(`(?m)^cxx-mpi: ranks=.*$`)
	if got, want := result.FindString(plOuts[0]), result.FindString(outs[0]); got != want || got == "" {
		t.Errorf("with the plugin rank 0 printed %q, without %q", got, want)
	}
	for r, f := range rankFiles(t, pl.out, "cxx-mpi", np) {
		enters := checkTrace(t, dump(t, f.Path), []string{"main", "MPI_Init", "MPI_Finalize", "MPI_Sendrecv", "MPI_Allreduce"}, []string{fmt.Sprintf("rank %d", r)})
		for name := range enters {
			if strings.HasPrefix(name, "Mesh::") && name != "Mesh::Mesh(int)" || systemRegion(name) {
				t.Errorf("plugin: rank %d: %s is a region", r, name)
			}
		}
		if enters["MPI_Sendrecv"] != 2*20 || enters["MPI_Allreduce"] != 3 {
			t.Errorf("plugin: rank %d: %d Sendrecv and %d Allreduce, want 40 and 3", r, enters["MPI_Sendrecv"], enters["MPI_Allreduce"])
		}
	}

	// The control: with the system headers instrumented, std::vector's
	// operator[] is a region.
	all := buildCxxMPI(t, bin, "--no-plugin", "--no-exclude-system")
	mpirun(t, np, all.out, nil, all.path, "200", "2")
	found := false
	for _, e := range dump(t, rankFiles(t, all.out, "cxx-mpi", np)[0].Path) {
		if e.kind == "ENTER" && systemRegion(e.region) && strings.Contains(e.region, "operator[]") {
			found = true
			break
		}
	}
	if !found {
		t.Error("--no-exclude-system: no std::vector operator[] in the trace; the check above cannot fail")
	}
}

// TestInstrumentFortran builds a Fortran program with a module through
// `hmbtrace-instrument gfortran`, compile and link apart.
func TestInstrumentFortran(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	bin := instrumentBin(t, build)
	dir := t.TempDir()
	src := filepath.Join(root, "cshim", "testdata", "instrument", "relax.f90")
	obj := filepath.Join(dir, "relax.o")
	if msg, err := run(dir, nil, bin, "gfortran", "-O2", "-J", dir, "-c", src, "-o", obj); err != nil {
		t.Fatalf("hmbtrace-instrument gfortran -c: %v\n%s", err, msg)
	} else if len(msg) != 0 {
		t.Errorf("hmbtrace-instrument gfortran -c said %q", msg)
	}
	p := program{path: filepath.Join(dir, "relax"), out: filepath.Join(dir, "hmb-out")}
	if msg, err := run(dir, nil, bin, "gfortran", "-o", p.path, obj); err != nil {
		t.Fatalf("hmbtrace-instrument gfortran (link): %v\n%s", err, msg)
	}
	checkOwnHooks(t, p.path)
	out, _ := p.run(t, nil)
	if !strings.Contains(out, "relax: steps=50") {
		t.Fatalf("output %q", out)
	}
	enters := checkTrace(t, dump(t, filepath.Join(p.out, "relax.0.hmb")), nil, nil)
	// The program unit, gfortran's MAIN__: by its name in the source, which
	// the GCC plugin writes into the object; without the plugin and -g,
	// nothing tells it and cshim calls it "main program".
	program := "relax"
	if _, err := os.Stat(filepath.Join(build, "lib", "hmbtrace", "hmbtrace_gcc.so")); err != nil {
		program = "main program"
	}
	if enters[program] != 1 {
		t.Errorf("enters %v: want the main program, %s, once", enters, program)
	}
	// The GCC plugin instruments after inlining, and sweep, called from one
	// place, may be inlined: then it is no region at all, else every call
	// is one. TestGCCPluginFortran checks what is inlined and what is not;
	// -finstrument-functions (--no-plugin) instruments sweep in any case.
	if s := regionsLike(enters, "sweep"); s != 0 && s != 50 {
		t.Errorf("enters %v: want 50 sweeps of relax_mod or none (inlined)", enters)
	}
	if msg, err := run(dir, nil, bin, "--no-plugin", "gfortran", "-O2", "-J", dir, "-c", src, "-o", obj); err != nil {
		t.Fatalf("hmbtrace-instrument --no-plugin gfortran -c: %v\n%s", err, msg)
	}
	if msg, err := run(dir, nil, bin, "gfortran", "-o", p.path, obj); err != nil {
		t.Fatalf("hmbtrace-instrument gfortran (link): %v\n%s", err, msg)
	}
	os.RemoveAll(p.out)
	if out, _ := p.run(t, nil); !strings.Contains(out, "relax: steps=50") {
		t.Fatalf("output %q", out)
	}
	enters = checkTrace(t, dump(t, filepath.Join(p.out, "relax.0.hmb")), nil, nil)
	if sweeps, norms := regionsLike(enters, "sweep"), regionsLike(enters, "norm"); sweeps != 50 || norms != 1 {
		t.Errorf("enters %v: want 50 sweeps and 1 norm of relax_mod", enters)
	}
}

// regionsLike counts the enters of relax_mod's procedure proc: gfortran's
// __relax_mod_MOD_proc, or demangled relax_mod::proc.
func regionsLike(enters map[string]int, proc string) int {
	n := 0
	for name, c := range enters {
		if strings.Contains(name, "relax_mod") && strings.HasSuffix(name, proc) {
			n += c
		}
	}
	return n
}

// errUntraced is a program that ran and wrote no trace.
var errUntraced = errors.New("ran untraced")

// linkAndRun links hooks.o with the arguments given (in order), runs the
// program, and reports the link's failure, errUntraced, or nil if the
// trace holds work's calls.
func linkAndRun(t *testing.T, dir string, argv ...string) error {
	t.Helper()
	prog := filepath.Join(dir, "hooks")
	os.Remove(prog)
	if msg, err := run(dir, nil, argv[0], append(argv[1:], "-o", prog)...); err != nil {
		return fmt.Errorf("link failed: %v\n%s", err, msg)
	}
	out := filepath.Join(dir, "hmb-out")
	os.RemoveAll(out)
	p := program{path: prog, out: out}
	p.run(t, nil)
	trace := filepath.Join(out, "hooks.0.hmb")
	if _, err := os.Stat(trace); err != nil {
		return errUntraced
	}
	if enters := checkTrace(t, dump(t, trace), nil, nil); enters["work"] != 100 {
		return fmt.Errorf("%d enters of work, want 100", enters["work"])
	}
	return nil
}

// TestInstrumentLinkOrder links objects compiled with
// -finstrument-functions with the library before them, where a Makefile's
// flags go, with the .so and the .a, with and without --as-needed, through
// pkg-config and through hmbtrace-instrument: each traces (or would fail to
// link; none does here). A bare -lhmbtrace before the objects, which no
// flag of ours guards, runs untraced: that shows the check can fail.
func TestInstrumentLinkOrder(t *testing.T) {
	build := library(t)
	bin := instrumentBin(t, build)
	dir := t.TempDir()
	obj := filepath.Join(dir, "hooks.o")
	if msg, err := run(dir, nil, "gcc", "-O2", "-finstrument-functions", "-c", "-o", obj, filepath.Join(root, "cshim", "testdata", "instrument", "hooks.c")); err != nil {
		t.Fatalf("gcc -c hooks.c: %v\n%s", err, msg)
	}
	pc, err := run(root, pkgEnv(build), "pkg-config", "--libs", "hmbtrace")
	if err != nil {
		t.Fatalf("pkg-config --libs hmbtrace: %v\n%s", err, pc)
	}
	libs := strings.Fields(string(pc))
	lib := filepath.Join(build, "lib")
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, asNeeded := range [][]string{nil, {"-Wl,--as-needed"}, {"-Wl,--no-as-needed"}} {
		for _, tc := range []struct {
			name string
			argv []string
		}{
			{"pkg-config, .so", cat([]string{"gcc"}, asNeeded, libs, []string{obj})},
			{"pkg-config, .a", cat([]string{"gcc"}, asNeeded, []string{"-Wl,-Bstatic"}, libs, []string{"-Wl,-Bdynamic", obj, "-lpthread", "-ldl"})},
			{"hmbtrace-instrument, -lhmbtrace first", cat([]string{bin, "gcc"}, asNeeded, []string{"-L" + lib, "-lhmbtrace", obj})},
			{"hmbtrace-instrument, .a first", cat([]string{bin, "gcc"}, asNeeded, []string{filepath.Join(lib, "libhmbtrace.a"), obj, "-lpthread", "-ldl"})},
			{"hmbtrace-instrument -static", cat([]string{bin, "gcc", "-static"}, asNeeded, []string{obj})},
		} {
			err := linkAndRun(t, dir, tc.argv...)
			if errors.Is(err, errUntraced) || err != nil && !strings.HasPrefix(err.Error(), "link failed") {
				t.Errorf("%s %v: %v", tc.name, asNeeded, err)
			}
			if err != nil {
				t.Logf("%s %v: %v", tc.name, asNeeded, err)
			}
		}
	}
	// Debian's gcc links with --as-needed: a bare -lhmbtrace before the
	// objects is dropped and glibc's no-op hooks are called.
	if err := linkAndRun(t, dir, "gcc", "-Wl,--as-needed", "-L"+lib, "-lhmbtrace", obj); !errors.Is(err, errUntraced) {
		t.Errorf("a bare -lhmbtrace before the objects with --as-needed: %v, want a run without a trace", err)
	}
}

// TestInstrumentCMake configures and builds a CMake project with
// CC="hmbtrace-instrument gcc", as CMake users set it; CMake's compiler
// checks pass and the program is traced.
func TestInstrumentCMake(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "cmake", "cmake")
	bin := instrumentBin(t, build)
	src, bdir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "CMakeLists.txt"), []byte("cmake_minimum_required(VERSION 3.13)\nproject(hooks C)\nadd_executable(hooks hooks.c)\n"), 0o644)
	b, err := os.ReadFile(filepath.Join(root, "cshim", "testdata", "instrument", "hooks.c"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "hooks.c"), b, 0o644)
	env := []string{"CC=" + bin + " gcc", "PKG_CONFIG_PATH="}
	if msg, err := run(bdir, env, "cmake", "-S", src, "-B", bdir); err != nil {
		t.Fatalf("cmake with CC=%q: %v\n%s", bin+" gcc", err, msg)
	}
	if msg, err := run(bdir, env, "cmake", "--build", bdir); err != nil {
		t.Fatalf("cmake --build: %v\n%s", err, msg)
	}
	p := program{path: filepath.Join(bdir, "hooks"), out: filepath.Join(bdir, "hmb-out")}
	p.run(t, nil)
	if enters := checkTrace(t, dump(t, filepath.Join(p.out, "hooks.0.hmb")), []string{"main", "work"}, nil); enters["work"] != 100 {
		t.Errorf("enters %v: want 100 of work", enters)
	}
}

// CC=hmbtrace-gcc, the named form, for build systems and scripts that take
// the compiler as one word (CoMD's Makefile runs "which $(CC)" into a
// header): the compiler's own --version answers, and the program is traced.
func TestInstrumentNamedForm(t *testing.T) {
	build := library(t)
	cc := filepath.Join(filepath.Dir(instrumentBin(t, build)), "hmbtrace-gcc")
	if _, err := os.Lstat(cc); err != nil {
		t.Fatalf("make cshim made no hmbtrace-gcc link: %v", err)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(root, "cshim", "testdata", "instrument", "hooks.c"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "hooks.c"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("hooks: hooks.o\n\t$(CC) -o $@ $^\n"+
		"hooks.o: hooks.c\n\t$(CC) --version | head -1 > version.txt\n\t$(CC) -O2 -c $<\n"), 0o644)
	env := []string{"PKG_CONFIG_PATH=", "HMB_INSTRUMENT_FLAGS=--verbose"}
	msg, err := run(dir, env, "make", "CC="+cc)
	if err != nil {
		t.Fatalf("make CC=%s: %v\n%s", cc, err, msg)
	}
	if v, _ := os.ReadFile(filepath.Join(dir, "version.txt")); !strings.Contains(string(v), "gcc") {
		t.Errorf("hmbtrace-gcc --version said %q: want gcc's own answer", v)
	}
	if !strings.Contains(string(msg), "hmbtrace-instrument: gcc") {
		t.Errorf("HMB_INSTRUMENT_FLAGS=--verbose printed no command:\n%s", msg)
	}
	p := program{path: filepath.Join(dir, "hooks"), out: filepath.Join(dir, "hmb-out")}
	p.run(t, nil)
	if enters := checkTrace(t, dump(t, filepath.Join(p.out, "hooks.0.hmb")), []string{"main", "work"}, nil); enters["work"] != 100 {
		t.Errorf("enters %v: want 100 of work", enters)
	}
}
