package cshim_test

// These tests build libhmbtrace with cshim/Makefile into a temporary
// directory, compile the C and Fortran examples and the programs of
// testdata/c against it, run them, and check their traces with
// `hmbtrace dump` and the tracefile reader.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var root = func() string {
	abs, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return abs
}()

// built is the library and the hmbtrace tool, made once for all tests.
var built struct {
	once     sync.Once
	dir      string // BUILD of cshim/Makefile
	hmbtrace string // the hmbtrace command
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// library builds libhmbtrace and the hmbtrace command and returns the
// build directory.
func library(t *testing.T) string {
	t.Helper()
	tracetest.RequireTool(t, "make", "make")
	tracetest.RequireTool(t, "gcc", "gcc")
	tracetest.RequireTool(t, "pkg-config", "pkg-config")
	tracetest.RequireTool(t, "go", "golang-go (or a Go toolchain on PATH)")
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "hmbtrace-cshim-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		if err := statSources(root); err != nil {
			built.err = err
			return
		}
		if out, err := runFor(buildTimeout, root, nil, "make", "-s", "-C", filepath.Join(root, "cshim"), "cshim", "BUILD="+dir); err != nil {
			built.err = fmt.Errorf("make cshim: %v\n%s", err, out)
			return
		}
		built.hmbtrace = filepath.Join(dir, "hmbtrace")
		if out, err := runFor(buildTimeout, root, nil, "go", "build", "-o", built.hmbtrace, "./cmd/hmbtrace"); err != nil {
			built.err = fmt.Errorf("go build ./cmd/hmbtrace: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

// buildTimeout bounds the library's build: the Go runtime and every
// package as a C archive, which takes minutes on a loaded 2-core machine.
// It is there to end a hung build, not to time a slow one.
const buildTimeout = 15 * time.Minute

// statSources stats every source file the library is built from, so that
// go test's cache, which keys a run on the files the test opened or
// stated, reruns these tests when C, C++ or Go sources change: the build
// itself runs in make, which the cache does not see.
func statSources(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".c", ".h", ".cc", ".s", ".tbl", ".map":
		default:
			if name != "Makefile" && name != "go.mod" && name != "go.sum" {
				return nil
			}
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		_, err = os.Stat(path)
		return err
	})
}

// run runs a command in dir with extra environment variables and returns
// its combined output.
func run(dir string, env []string, name string, args ...string) ([]byte, error) {
	return runFor(3*time.Minute, dir, env, name, args...)
}

// runFor is run with a timeout of d.
func runFor(d time.Duration, dir string, env []string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// pkgEnv is the environment that makes pkg-config find the built library.
func pkgEnv(build string) []string {
	return []string{"PKG_CONFIG_PATH=" + filepath.Join(build, "lib", "pkgconfig")}
}

// program is a built test program and where its traces go.
type program struct {
	path string
	out  string // HMB_OUTPUT
}

// runProgram runs p with HMB_OUTPUT set and the extra variables env, and
// returns its standard output and error.
func (p program) run(t *testing.T, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Env = append(withoutHMB(os.Environ()), append([]string{"HMB_OUTPUT=" + p.out}, env...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(p.path), args, err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// withoutHMB drops the HMB_* variables of the test's environment, so that
// the programs run with the defaults and the variables each test sets.
func withoutHMB(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HMB_") {
			out = append(out, kv)
		}
	}
	return out
}

// buildC compiles C sources with the flags of `pkg-config --cflags --libs
// hmbtrace` and extra flags.
func buildC(t *testing.T, build, name string, flags []string, sources ...string) program {
	t.Helper()
	return compile(t, build, "hmbtrace", "gcc", name, append(append([]string{"-pthread"}, sources...), flags...)...)
}

// compile builds program name in a directory of its own with compiler,
// -O2 -g, args and the flags of `pkg-config --cflags --libs pkg` (one of
// the library's .pc files).
func compile(t *testing.T, build, pkg, compiler, name string, args ...string) program {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, name)
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", pkg)
	if err != nil {
		t.Fatalf("pkg-config --cflags --libs %s: %v\n%s", pkg, err, pc)
	}
	args = append(append([]string{"-O2", "-g", "-o", out}, args...), strings.Fields(string(pc))...)
	if msg, err := run(dir, nil, compiler, args...); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, msg)
	}
	return program{path: out, out: filepath.Join(dir, "hmb-out")}
}

// buildExample builds an example with its own Makefile, as a user would.
func buildExample(t *testing.T, build, example string) program {
	t.Helper()
	dir := t.TempDir()
	if msg, err := run(filepath.Join(root, "examples", example), pkgEnv(build), "make", "-s", "O="+dir); err != nil {
		t.Fatalf("make -C examples/%s: %v\n%s", example, err, msg)
	}
	return program{path: filepath.Join(dir, example), out: filepath.Join(dir, "hmb-out")}
}

// event is one line of `hmbtrace dump`.
type event struct {
	loc    string
	ns     int64
	kind   string
	region string // ENTER, LEAVE: the region; SEND, RECV: the peer
	depth  int
}

// regionEvents returns how many enters and leaves of region the run of p
// wrote to its one trace file.
func regionEvents(t *testing.T, p program, region string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(p.out, "*.hmb"))
	if len(files) != 1 {
		t.Fatalf("trace files %q, want one", files)
	}
	n := 0
	for _, e := range dump(t, files[0]) {
		if e.region == region {
			n++
		}
	}
	return n
}

// dump runs `hmbtrace dump` on a trace and parses its lines.
func dump(t *testing.T, path string) []event {
	t.Helper()
	out, err := run(root, nil, built.hmbtrace, "dump", path)
	if err != nil {
		t.Fatalf("hmbtrace dump %s: %v\n%s", path, err, out)
	}
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 5 {
			t.Fatalf("dump line %q: want at least 5 fields", sc.Text())
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("dump line %q: time: %v", sc.Text(), err)
		}
		e := event{loc: f[0], ns: ns, kind: f[2], region: f[3]}
		if e.kind == "ENTER" || e.kind == "LEAVE" {
			if e.depth, err = strconv.Atoi(f[4]); err != nil {
				t.Fatalf("dump line %q: depth: %v", sc.Text(), err)
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// checkTrace checks a dumped trace: every location's enters and leaves
// balance and nest with the right depths, the wanted regions are there, and
// the locations are exactly locs (when locs is not nil). It returns the
// number of enter events per region.
func checkTrace(t *testing.T, evs []event, regions []string, locs []string) map[string]int {
	t.Helper()
	stacks := map[string][]string{}
	enters := map[string]int{}
	for _, e := range evs {
		st := stacks[e.loc]
		switch e.kind {
		case "ENTER":
			// Deeper than one below the top: the calls between were shed
			// while this one, an MPI call kept longest, was not ("" marks them).
			if e.depth <= len(st) {
				t.Fatalf("%s: enter %s at depth %d, want %d", e.loc, e.region, e.depth, len(st)+1)
			}
			for len(st) < e.depth-1 {
				st = append(st, "")
			}
			st = append(st, e.region)
			enters[e.region]++
		case "LEAVE":
			if len(st) == 0 || st[len(st)-1] != e.region || e.depth != len(st) {
				t.Fatalf("%s: leave %s at depth %d, open: %v", e.loc, e.region, e.depth, st)
			}
			st = st[:len(st)-1]
			for len(st) > 0 && st[len(st)-1] == "" {
				st = st[:len(st)-1]
			}
		}
		stacks[e.loc] = st
	}
	var names []string
	for loc, st := range stacks {
		names = append(names, loc)
		if len(st) != 0 {
			t.Errorf("%s: regions left open at the end: %v", loc, st)
		}
	}
	for _, r := range regions {
		if enters[r] == 0 {
			t.Errorf("region %q: no enter in the trace (regions: %v)", r, enters)
		}
	}
	if locs != nil {
		sort.Strings(names)
		want := append([]string(nil), locs...)
		sort.Strings(want)
		if strings.Join(names, "|") != strings.Join(want, "|") {
			t.Errorf("locations %q, want %q", names, want)
		}
	}
	return enters
}

// tids reads the "tid N" lines a program printed.
func tids(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "tid" {
			names = append(names, "thread "+f[1])
		}
	}
	return names
}

func TestCJacobi(t *testing.T) {
	build := library(t)
	p := buildExample(t, build, "c-jacobi")
	out, _ := p.run(t, nil, "64", "3", "40")
	if !strings.Contains(out, "c-jacobi: n=64 threads=3 iterations=40") {
		t.Fatalf("output %q", out)
	}
	evs := dump(t, filepath.Join(p.out, "c-jacobi.0.hmb"))
	enters := checkTrace(t, evs, []string{"main", "init_grid", "worker", "sweep", "barrier", "residual"},
		[]string{"main", "worker 0", "worker 1", "worker 2"})
	if enters["sweep"] != 3*40 || enters["worker"] != 3 || enters["residual"] != 3*4 {
		t.Errorf("enters %v: want 120 sweeps, 3 workers, 12 residuals", enters)
	}
}

func TestCAutoinst(t *testing.T) {
	build := library(t)
	p := buildExample(t, build, "c-autoinst")
	out, _ := p.run(t, nil, "64", "2", "20")
	if !strings.Contains(out, "c-autoinst: n=64 threads=2 iterations=20") {
		t.Fatalf("output %q", out)
	}
	evs := dump(t, filepath.Join(p.out, "c-autoinst.0.hmb"))
	enters := checkTrace(t, evs, []string{"main", "init_grid", "worker", "sweep", "wait_all", "add_residual"}, nil)
	if enters["sweep"] != 2*20 || enters["worker"] != 2 || enters["main"] != 1 {
		t.Errorf("enters %v: want 40 sweeps, 2 workers, 1 main", enters)
	}
	locs := map[string]bool{}
	for _, e := range evs {
		locs[e.loc] = true
		if strings.HasPrefix(e.region, "hmb_") || strings.HasPrefix(e.region, "__cyg") {
			t.Fatalf("the library's own function %s is in the trace", e.region)
		}
	}
	if len(locs) != 3 {
		t.Errorf("locations %v: want the main thread and 2 workers", locs)
	}
}

func TestFortranHeat(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	p := buildExample(t, build, "fortran-heat")
	out, _ := p.run(t, nil, "32", "100")
	if !strings.Contains(out, "fortran-heat: n=32 steps=100") {
		t.Fatalf("output %q", out)
	}
	evs := dump(t, filepath.Join(p.out, "fortran-heat.0.hmb"))
	enters := checkTrace(t, evs, []string{"main", "init", "step", "boundary", "energy"}, nil)
	if enters["step"] != 100 || enters["boundary"] != 100 || enters["energy"] != 3 {
		t.Errorf("enters %v: want 100 steps and boundaries, 3 energies", enters)
	}
	locs := map[string]bool{}
	for _, e := range evs {
		locs[e.loc] = true
	}
	if len(locs) != 1 {
		t.Errorf("locations %v: want one", locs)
	}
}

// TestAutoinstSymbols checks the names of instrumented functions: static
// ones, one in a shared library, and one called from a constructor before
// main, in a PIE, a non-PIE executable and one linked with the static
// archive; and that the name filter sees those names.
func TestAutoinstSymbols(t *testing.T) {
	build := library(t)
	dir := t.TempDir()
	src := filepath.Join(root, "cshim", "testdata", "c", "autoinst")
	lib := filepath.Join(dir, "libshared.so")
	if msg, err := run(root, nil, "gcc", "-O2", "-g", "-fPIC", "-shared", "-finstrument-functions", "-o", lib, filepath.Join(src, "shared.c")); err != nil {
		t.Fatalf("gcc shared.c: %v\n%s", err, msg)
	}
	libFlags := []string{"-finstrument-functions", "-L" + dir, "-lshared", "-Wl,-rpath," + dir}
	main := filepath.Join(src, "main.c")
	variants := map[string]program{
		"pie":   buildC(t, build, "autoinst", append([]string{"-fPIE", "-pie"}, libFlags...), main),
		"nopie": buildC(t, build, "autoinst", append([]string{"-fno-PIE", "-no-pie"}, libFlags...), main),
	}
	static := program{path: filepath.Join(dir, "autoinst-static"), out: filepath.Join(dir, "hmb-out")}
	args := append([]string{"-O2", "-g", "-pthread", "-o", static.path, main, "-I" + filepath.Join(build, "include")}, libFlags...)
	args = append(args, filepath.Join(build, "lib", "libhmbtrace.a"), "-ldl")
	if msg, err := run(root, nil, "gcc", args...); err != nil {
		t.Fatalf("gcc with libhmbtrace.a: %v\n%s", err, msg)
	}
	variants["static"] = static

	for name, p := range variants {
		t.Run(name, func(t *testing.T) {
			out, _ := p.run(t, nil)
			if !strings.Contains(out, "result 295 35 1") {
				t.Fatalf("output %q", out)
			}
			trace := filepath.Join(p.out, filepath.Base(p.path)+".0.hmb")
			evs := dump(t, trace)
			enters := checkTrace(t, evs, []string{"main", "compute", "helper", "shared_square", "thread_main", "early", "early_helper", "hmb::demo::twice(int)"}, tids(out))
			if enters["helper"] != 15 || enters["shared_square"] != 15 || enters["compute"] != 2 {
				t.Errorf("enters %v: want 15 helper, 15 shared_square, 2 compute", enters)
			}
			for r := range enters {
				if strings.HasPrefix(r, "0x") {
					t.Errorf("unresolved function %s", r)
				}
			}
			// DWARF gives the functions' source positions.
			f := tracetest.Open(t, trace)
			for _, r := range f.Regions {
				if r.Name == "compute" && (filepath.Base(r.File) != "main.c" || r.Line == 0) {
					t.Errorf("compute defined at %s:%d, want main.c and a line", r.File, r.Line)
				}
			}
		})
	}

	t.Run("filter", func(t *testing.T) {
		p := variants["pie"]
		filterFile := filepath.Join(dir, "filter")
		os.WriteFile(filterFile, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE helper shared_*\nSCOREP_REGION_NAMES_END\n"), 0o644)
		out, _ := p.run(t, []string{"HMB_FILTER_FILE=" + filterFile})
		enters := checkTrace(t, dump(t, filepath.Join(p.out, "autoinst.0.hmb")), []string{"main", "compute"}, tids(out))
		if enters["helper"] != 0 || enters["shared_square"] != 0 {
			t.Errorf("enters %v: helper and shared_square should be filtered out", enters)
		}
	})
}

// TestThreadExit checks that threads which exit long before hmb_finalize
// keep their events, one location each.
func TestThreadExit(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "thread_exit", nil, filepath.Join(root, "cshim", "testdata", "c", "thread_exit.c"))
	out, _ := p.run(t, []string{"HMB_THROTTLE=0"}) // 5000 calls of step, each a few ns: every event is wanted
	want := map[string]int{}
	var locs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var tid, n int
		if _, err := fmt.Sscanf(line, "thread %d %d", &tid, &n); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		want[fmt.Sprintf("thread %d", tid)] = n
		locs = append(locs, fmt.Sprintf("thread %d", tid))
	}
	locs[0] = "named early" // thread 0 names itself
	evs := dump(t, filepath.Join(p.out, "thread_exit.0.hmb"))
	checkTrace(t, evs, []string{"work", "step"}, locs)
	got := map[string]int{}
	for _, e := range evs {
		got[e.loc]++
	}
	for _, l := range locs[1:] {
		if got[l] != want[l] {
			t.Errorf("%s: %d events, want %d", l, got[l], want[l])
		}
	}
	if got["named early"] != 2*5000+2 {
		t.Errorf("named early: %d events, want %d", got["named early"], 2*5000+2)
	}
}

// TestHammerUnderFinalize checks that 8 threads probing while hmb_finalize
// runs, and after it, lose no probe uncounted.
func TestHammerUnderFinalize(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "hammer", nil, filepath.Join(root, "cshim", "testdata", "c", "hammer.c"))
	// Unthrottled: a throttled visit counts as one visit, not as two probes,
	// and the test counts probes.
	out, stderr := p.run(t, []string{"HMB_THROTTLE=0"})
	probes := map[string]uint64{}
	var total, dropped uint64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		n, err := strconv.ParseUint(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		switch f[0] {
		case "thread":
			probes["thread "+f[1]] = n
		case "total":
			total = n
		case "dropped":
			dropped = n
		}
	}
	if len(probes) != 8 || total == 0 {
		t.Fatalf("output %q", out)
	}
	if dropped == 0 || !strings.Contains(stderr, fmt.Sprintf("%d probes dropped, not in the trace: %d after the measurement ended", dropped, dropped)) {
		t.Errorf("dropped %d, stderr %q: want probes after hmb_finalize counted and reported with their cause", dropped, stderr)
	}
	trace := filepath.Join(p.out, "hammer.0.hmb")
	f := tracetest.Open(t, trace)
	var inTrace uint64
	for _, l := range f.Locations {
		n, ok := probes[l.Name]
		if !ok {
			t.Errorf("location %q is none of the threads", l.Name)
			continue
		}
		// Recorded counts the leaves Close added for regions still open.
		rec := l.Recorded - l.Usage.OpenAtClose
		if rec == 0 || rec > n {
			t.Errorf("%s: %d probes in the trace, %d made", l.Name, rec, n)
		}
		if l.Kept() != l.Recorded || l.Usage.Total() != l.Usage.OpenAtClose {
			t.Errorf("%s: %d recorded, %d kept, usage %+v", l.Name, l.Recorded, l.Kept(), l.Usage)
		}
		inTrace += rec
	}
	if len(f.Locations) != 8 {
		t.Errorf("%d locations, want 8", len(f.Locations))
	}
	if inTrace+dropped != total {
		t.Errorf("%d probes in the trace + %d dropped = %d, the threads made %d", inTrace, dropped, inTrace+dropped, total)
	}
	// Millions of events: the reader checks that they nest, faster than a dump.
	var e tracefile.Event
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		n := uint64(0)
		for it.Next(&e) {
			n++
		}
		if it.Err() != nil || it.Depth() != 0 || n != l.Kept() {
			t.Errorf("%s: read %d of %d events, %d left open (interrupted %v): %v", l.Name, n, l.Kept(), it.Depth(), l.Interrupted, it.Err())
		}
	}
}

func TestMisuse(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "misuse", nil, filepath.Join(root, "cshim", "testdata", "c", "misuse.c"))
	out, stderr := p.run(t, nil)
	for _, want := range []string{
		"region(NULL) 0 error hmbtrace: hmb_region: the name is NULL",
		"init 0", "finalize 0", "finalize again 0",
		"init after finalize -1 error hmbtrace: hmb_init after hmb_finalize",
		"region after finalize 0",
		"dropped 3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "3 probes dropped, not in the trace: 3 after the measurement ended\n") {
		t.Errorf("stderr %q: want the dropped probes reported with their cause", stderr)
	}
	f := tracetest.Open(t, filepath.Join(p.out, "misuse.0.hmb"))
	if len(f.Locations) != 1 {
		t.Fatalf("%d locations, want 1", len(f.Locations))
	}
	want := tracefile.UsageErrors{UnknownRegion: 2, LeaveNothingOpen: 2, LeaveNotOpen: 1, LeftImplicitly: 1, OpenAtClose: 1}
	if got := f.Locations[0].Usage; got != want {
		t.Errorf("usage errors %+v, want %+v", got, want)
	}
	checkTrace(t, dump(t, filepath.Join(p.out, "misuse.0.hmb")), []string{"a", "b"}, nil)
}

// TestExitInside: a program that exits inside regions has them left at
// exit, with no usage error (an explicit hmb_finalize inside one still
// counts it: TestMisuse).
func TestExitInside(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "exit_inside", nil, filepath.Join(root, "cshim", "testdata", "c", "exit_inside.c"))
	p.run(t, nil)
	path := filepath.Join(p.out, "exit_inside.0.hmb")
	f := tracetest.Open(t, path)
	if len(f.Locations) != 1 {
		t.Fatalf("%d locations, want 1", len(f.Locations))
	}
	if got := f.Locations[0].Usage; got != (tracefile.UsageErrors{}) {
		t.Errorf("usage errors %+v, want none", got)
	}
	if enters := checkTrace(t, dump(t, path), []string{"work", "stop_run"}, nil); enters["work"] != 1 || enters["stop_run"] != 1 {
		t.Errorf("enters %v, want work and stop_run once", enters)
	}
}

func TestInitFailure(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "initfail", nil, filepath.Join(root, "cshim", "testdata", "c", "initfail.c"))
	env := []string{"HMB_BUFFER_SIZE=lots"}
	out, stderr := p.run(t, env, "explicit")
	for _, want := range []string{"init -1 error hmbtrace: HMB_BUFFER_SIZE=\"lots\"", "region 0", "finalize -1", "dropped 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("explicit: output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(stderr, "HMB_BUFFER_SIZE") {
		t.Errorf("explicit: the error went to stderr too (%q); the program reports it", stderr)
	}
	out, stderr = p.run(t, env)
	if !strings.Contains(stderr, "HMB_BUFFER_SIZE=\"lots\"") || !strings.Contains(stderr, "probes are dropped") {
		t.Errorf("lazy: stderr %q: want the error, once", stderr)
	}
	if strings.Count(stderr, "HMB_BUFFER_SIZE") != 1 || !strings.Contains(out, "dropped 2") {
		t.Errorf("lazy: output %q, stderr %q", out, stderr)
	}
	// hmb_region first: it starts the measurement, and says why it could not.
	out, stderr = p.run(t, env, "region")
	if strings.Count(stderr, `HMB_BUFFER_SIZE="lots"`) != 1 || !strings.Contains(out, "first region 0") || !strings.Contains(out, "dropped 2") {
		t.Errorf("region first: output %q, stderr %q: want the error on stderr once", out, stderr)
	}
	if _, err := os.Stat(p.out); !os.IsNotExist(err) {
		t.Errorf("a trace directory exists after a failed start: %v", err)
	}
}

func TestDisabled(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "thread_exit", nil, filepath.Join(root, "cshim", "testdata", "c", "thread_exit.c"))
	_, stderr := p.run(t, []string{"HMB_ENABLE=0"})
	if stderr != "" {
		t.Errorf("stderr %q", stderr)
	}
	if _, err := os.Stat(p.out); !os.IsNotExist(err) {
		t.Errorf("HMB_ENABLE=0 wrote a trace directory: %v", err)
	}
}

// TestEnvironment checks that hmb_init reads the C environment, also what
// the program changed after the library was loaded.
func TestEnvironment(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "env", nil, filepath.Join(root, "cshim", "testdata", "c", "env.c"))
	p.run(t, []string{"HMB_NAME=fromenv"}, "set", "renamed")
	p.run(t, []string{"HMB_NAME=fromenv"}, "unset")
	p.run(t, []string{"HMB_NAME=fromenv"})
	for _, name := range []string{"renamed", "env", "fromenv"} {
		if _, err := os.Stat(filepath.Join(p.out, name+".0.hmb")); err != nil {
			t.Errorf("trace %s: %v", name, err)
		}
	}
}

// TestInstall installs the library under a prefix and builds a C and a
// Fortran program with the installed pkg-config file.
func TestInstall(t *testing.T) {
	build := library(t)
	prefix := t.TempDir()
	if msg, err := run(root, nil, "make", "-s", "-C", filepath.Join(root, "cshim"), "install", "BUILD="+build, "PREFIX="+prefix); err != nil {
		t.Fatalf("make install: %v\n%s", err, msg)
	}
	for _, f := range []string{"lib/libhmbtrace.so", "lib/libhmbtrace.a", "lib/libhmbtrace-hooks.a", "lib/pkgconfig/hmbtrace.pc", "include/hmbtrace.h", "include/hmbtrace.f90", "bin/hmbtrace-instrument", "bin/hmbtrace"} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("installed %s: %v", f, err)
		}
	}
	pc, err := run(root, pkgEnv(prefix), "pkg-config", "--cflags", "--libs", "hmbtrace")
	if err != nil || !strings.Contains(string(pc), "-I"+prefix+"/include") || strings.Contains(string(pc), build) {
		t.Fatalf("pkg-config of the installed library: %v: %s", err, pc)
	}
	p := buildC(t, prefix, "env", nil, filepath.Join(root, "cshim", "testdata", "c", "env.c"))
	p.run(t, nil)
	checkTrace(t, dump(t, filepath.Join(p.out, "env.0.hmb")), []string{"env"}, nil)

	if _, err := exec.LookPath("mpicc"); err == nil {
		for _, f := range []string{"lib/libhmbtrace-mpi.so", "lib/pkgconfig/hmbtrace-mpi.pc"} {
			if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
				t.Errorf("installed %s: %v", f, err)
			}
		}
		pc, err := run(root, pkgEnv(prefix), "pkg-config", "--libs", "hmbtrace-mpi")
		libs := " " + strings.Join(strings.Fields(string(pc)), " ") + " "
		if err != nil || !strings.Contains(libs, ",-lhmbtrace-mpi,") || !strings.Contains(libs, ",-lhmbtrace,") {
			t.Errorf("pkg-config --libs hmbtrace-mpi of the installed library: %v: %s", err, pc)
		}
	}
	if _, err := exec.LookPath("gfortran"); err == nil {
		if _, err := os.Stat(filepath.Join(prefix, "include", "hmbtrace.mod")); err != nil {
			t.Fatalf("hmbtrace.mod not installed: %v", err)
		}
		f := buildExample(t, prefix, "fortran-heat")
		f.run(t, nil, "16", "10")
		checkTrace(t, dump(t, filepath.Join(f.out, "fortran-heat.0.hmb")), []string{"step"}, nil)
	}
}

// TestFork checks that a child of fork, which has no Go runtime, neither
// hangs nor writes but counts and tells its dropped probes, and that the
// parent's trace is the parent's.
func TestFork(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "forked", nil, filepath.Join(root, "cshim", "testdata", "c", "forked.c"))
	out, stderr := p.run(t, nil)
	for _, want := range []string{
		"child init -1 hmbtrace: hmb_init in a child of fork: only the parent measures",
		// 10000 enters and leaves, counted in the child from 0.
		"child dropped 20000 before finalize",
		"child finalize -1 dropped 20000: hmbtrace: a child of fork is not traced: 20000 probes dropped",
		"parent finalize 0 child exit 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The child says so once as it exits; the parent dropped nothing.
	if strings.Count(stderr, "hmbtrace:") != 1 || !strings.Contains(stderr, "a child of fork, is not traced: 20000 probes dropped") {
		t.Errorf("stderr %q: want the child's drops told once", stderr)
	}
	evs := dump(t, filepath.Join(p.out, "forked.0.hmb"))
	enters := checkTrace(t, evs, []string{"parent"}, nil)
	if enters["child"] != 0 || len(evs) != 2 {
		t.Errorf("events %v: want the parent's enter and leave only", evs)
	}
}

// TestMetricsIgnored checks that HMB_METRICS, whose counters a replayed
// probe would read at the wrong time, is refused with a word on stderr.
func TestMetricsIgnored(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "env", nil, filepath.Join(root, "cshim", "testdata", "c", "env.c"))
	_, stderr := p.run(t, []string{"HMB_METRICS=page-faults"})
	if !strings.Contains(stderr, "HMB_METRICS ignored") {
		t.Errorf("stderr %q", stderr)
	}
	f := tracetest.Open(t, filepath.Join(p.out, "env.0.hmb"))
	for _, l := range f.Locations {
		for _, lv := range l.Levels {
			if lv.Class == tracefile.ClassMetric && lv.Written > 0 {
				t.Errorf("%s: %d metric records", l.Name, lv.Written)
			}
		}
	}
}

// TestProbeBench builds and runs the probe benchmark briefly: both sides
// of the comparison must record every event they are timed for. (The
// figures themselves are for `make -C cshim bench-c`, not for a test.)
func TestProbeBench(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "otf2-config", "libotf2-trace-dev")
	bench := filepath.Join(build, "bench", "probe_bench")
	if msg, err := run(root, nil, "make", "-s", "-C", filepath.Join(root, "cshim"), bench, "BUILD="+build); err != nil {
		t.Fatalf("make %s: %v\n%s", bench, err, msg)
	}
	p := program{path: bench, out: t.TempDir()}
	const rounds, iterations = 1, 5000
	// Unthrottled, as the bench runs it: its regions are short and called
	// far more than the 4,096 visits by which throttling decides.
	out, _ := p.run(t, []string{"HMB_THROTTLE=0"}, strconv.Itoa(rounds), strconv.Itoa(iterations))
	const events = (rounds + 1) * iterations * 4 // with the warm-up round
	for _, want := range []string{"hmbtrace ", "otf2 ", "cyg probes ", "staging ", "beyond clock ", "hmbtrace/otf2 per event: ",
		fmt.Sprintf("otf2 events %d, flushes to disk during the rounds 0", events)} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f := tracetest.Open(t, filepath.Join(p.out, "probe_bench.0.hmb"))
	if len(f.Locations) != 1 || f.Locations[0].Recorded != 2*events || f.Locations[0].Kept() != 2*events {
		t.Errorf("locations %+v: want one that recorded and kept %d events (manual and -finstrument-functions)", f.Locations, 2*events)
	}
	names := map[string]bool{}
	for _, r := range f.Regions {
		names[r.Name] = true
	}
	for _, r := range []string{"outer", "inner", "bench_outer", "bench_inner"} {
		if !names[r] {
			t.Errorf("no region %s in %v", r, names)
		}
	}

	// The throttled mode: both regions and both functions switched off at
	// their first leave, every later visit counted: the regions' through
	// the inline probes and the library's functions, the functions' through
	// the program's own hooks, and in probe_bench_sohooks the library's.
	for _, bin := range []string{bench, bench + "_sohooks"} {
		q := program{path: bin, out: t.TempDir()}
		out, _ = q.run(t, []string{"HMB_THROTTLE_CALLS=1", "HMB_THROTTLE_TIME=1h"}, "throttled", strconv.Itoa(rounds), strconv.Itoa(iterations))
		for _, want := range []string{"throttled ", "throttled call ", "empty call ", "library call ", "throttled cyg "} {
			if !strings.Contains(out, want) {
				t.Errorf("%s throttled: output lacks %q:\n%s", filepath.Base(bin), want, out)
			}
		}
		f = tracetest.Open(t, filepath.Join(q.out, filepath.Base(bin)+".0.hmb"))
		seen := 0
		for _, e := range f.Locations[0].Profile {
			name := f.RegionName(e.Region)
			after := uint64((rounds + 1) * iterations) // kernel.c's functions, once per iteration
			if strings.HasPrefix(name, "throttled ") {
				after *= 2 // hmb_enter inline and called
			}
			if !e.Throttled || e.Visits != 1 || e.VisitsAfter != after {
				t.Errorf("%s: %s: %+v, want throttled after 1 visit, %d after", filepath.Base(bin), name, e, after)
			}
			seen++
		}
		if seen != 4 {
			t.Errorf("%s: %d regions in the profile, want 2 regions and 2 functions", filepath.Base(bin), seen)
		}
	}
}

// TestSignal checks HMB_SIGNALS=1: SIGINT and SIGTERM write the trace,
// with the records the threads had staged, and the process dies of the
// signal.
func TestSignal(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "signal", nil, filepath.Join(root, "cshim", "testdata", "c", "signal.c"))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hmb-out")
			cmd := exec.Command(p.path)
			cmd.Env = append(withoutHMB(os.Environ()), "HMB_OUTPUT="+out, "HMB_SIGNALS=1")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var locs []string
			sc := bufio.NewScanner(stdout)
			for sc.Scan() && sc.Text() != "ready" {
				locs = append(locs, tids(sc.Text())...)
			}
			time.Sleep(50 * time.Millisecond)
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("still running a minute after %v; stderr %q", sig, stderr.String())
			}
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("exit %v: want death by %v; stderr %q", err, sig, stderr.String())
			}
			trace := filepath.Join(out, "signal.0.hmb")
			evs := dump(t, trace)
			checkTrace(t, evs, []string{"loop", "step"}, locs)
			f := tracetest.Open(t, trace)
			for _, l := range f.Locations {
				// The loop is left open, and the step if the signal came inside it.
				if u := l.Usage; u.Total() != u.OpenAtClose || u.OpenAtClose < 1 || u.OpenAtClose > 2 || l.Kept() < 4 {
					t.Errorf("%s: %d events kept, usage %+v: want the loop left open and nothing else", l.Name, l.Kept(), u)
				}
			}
		})
	}
}

// TestExitedThreadsReturnBins: threads that exited holding partly filled
// bins at every depth hand them back at their exit, so the reductions a
// later thread causes free what they need from them at once instead of
// closing level after level (issue 19: recording stopped with a few bins
// in use). The main thread's shallow depths stay whole.
func TestExitedThreadsReturnBins(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "exited", nil, filepath.Join(root, "cshim", "testdata", "c", "exited.c"))
	// 64 bins of 1 KiB: 6 exited threads hold up to 16 current bins each;
	// the main thread's 64000 events need about twice the buffer, its
	// depths 1-4 (16000 events) a quarter of it.
	p.run(t, []string{"HMB_BUFFER_SIZE=64K", "HMB_BIN_SIZE=1K", "HMB_THROTTLE=0"})
	f := tracetest.Open(t, filepath.Join(p.out, "exited.0.hmb"))
	var main *tracefile.Location
	for i := range f.Locations {
		if f.Locations[i].Recorded == 2000*2*16 {
			main = &f.Locations[i]
		}
	}
	if main == nil {
		t.Fatalf("no location recorded the main thread's 2000 trees: %+v", f.Locations)
	}
	var kept, shallow uint64
	for _, lv := range main.Levels {
		kept += lv.Kept()
		if lv.Depth <= 4 {
			shallow += lv.Kept()
			if lv.Removed().Total() != 0 {
				t.Errorf("main thread: %d events removed at depth %d", lv.Removed().Total(), lv.Depth)
			}
		}
	}
	if shallow != 4*2*2000 {
		t.Errorf("main thread kept %d events at depths 1-4, want all %d", shallow, 4*2*2000)
	}
	// 64 KiB holds about 30000 events; closing level after level for bins
	// that never come back leaves the main thread its depth 1 alone.
	if kept < 16000 {
		t.Errorf("main thread kept %d events of %d recorded: the reductions closed more than they freed (%v)", kept, main.Recorded, f.Reductions)
	}
}
