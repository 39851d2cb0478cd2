package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// buildEnv is a build's environment: the test's, without what would change
// how the go command builds (GOFLAGS), and without the network.
func buildEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "HMBTRACE_GO_") || strings.HasPrefix(kv, "HMB_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod"}, extra...)...)
}

func goRun(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	if err := goCmd(dir, env, args...); err != nil {
		t.Fatal(err)
	}
}

// fixture is what every build test starts from, made once: hmbtrace-go,
// and testdata/prog as a module of its own with its go.mod and go.sum
// tidied.
var fixture struct {
	once     sync.Once
	tmp      string
	tool     string
	template string
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.tmp != "" {
		os.RemoveAll(fixture.tmp)
	}
	os.Exit(code)
}

// testModule returns hmbtrace-go and a fresh copy of testdata/prog set up
// as a module that requires this repository (replaced by its directory),
// as `go get -tool github.com/hmbtrace/hmbtrace/cmd/hmbtrace-go` would.
func testModule(t *testing.T) (tool, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs")
	}
	fixture.once.Do(func() { fixture.err = makeSetup() })
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	dir = filepath.Join(t.TempDir(), "prog")
	if err := os.CopyFS(dir, os.DirFS(fixture.template)); err != nil {
		t.Fatal(err)
	}
	return fixture.tool, dir
}

func makeSetup() error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	if fixture.tmp, err = os.MkdirTemp("", "hmbtrace-go-test-"); err != nil {
		return err
	}
	fixture.tool = filepath.Join(fixture.tmp, "bin", "hmbtrace-go")
	if runtime.GOOS == "windows" {
		fixture.tool += ".exe"
	}
	// Without VCS stamping the tool's bytes, which are in the cache key,
	// stay the same from one commit to the next.
	if err := goCmd(".", buildEnv(), "build", "-buildvcs=false", "-o", fixture.tool, "."); err != nil {
		return err
	}
	dir := filepath.Join(fixture.tmp, "prog")
	if err := os.CopyFS(dir, os.DirFS("testdata/prog")); err != nil {
		return err
	}
	mod := fmt.Sprintf("module example.com/prog\n\ngo 1.24\n\nrequire github.com/hmbtrace/hmbtrace v0.0.0\n\nreplace github.com/hmbtrace/hmbtrace => %s\n\ntool github.com/hmbtrace/hmbtrace/cmd/hmbtrace-go\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return err
	}
	if err := goCmd(dir, buildEnv(), "mod", "tidy"); err != nil {
		return err
	}
	fixture.template = dir
	return nil
}

func goCmd(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// funcLine is a line "func NAME FILE:LINE" the program prints.
type funcLine struct {
	name, file string
	line       int
}

func runProg(t *testing.T, exe, out string, env ...string) (stdout string, code int) {
	t.Helper()
	stdout, _, code = runProgErr(t, exe, out, env...)
	return stdout, code
}

func runProgErr(t *testing.T, exe, out string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(buildEnv("HMB_OUTPUT="+out), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	return so.String(), se.String(), code
}

func parseFuncs(t *testing.T, out string) []funcLine {
	var fl []funcLine
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "func" {
			continue
		}
		i := strings.LastIndexByte(f[2], ':')
		n, err := strconv.Atoi(f[2][i+1:])
		if err != nil {
			t.Fatalf("bad line %q", l)
		}
		fl = append(fl, funcLine{f[1], f[2][:i], n})
	}
	return fl
}

// traceOf reads the trace in dir: its regions by name, and for each region
// the set of regions it was entered in ("" at a lane's top).
func traceOf(t *testing.T, dir string) (map[string]tracefile.Region, map[string]map[string]bool, int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.hmb"))
	if len(files) != 1 {
		t.Fatalf("want one trace in %s, have %q", dir, files)
	}
	f, err := tracefile.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	regions := map[string]tracefile.Region{}
	for _, r := range f.Regions {
		regions[r.Name] = r
	}
	parents := map[string]map[string]bool{}
	maxDepth := 0
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var stack []string
		var e tracefile.Event
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindEnter:
				name := f.RegionName(e.Region)
				parent := ""
				if len(stack) > 0 {
					parent = stack[len(stack)-1]
				}
				if parents[name] == nil {
					parents[name] = map[string]bool{}
				}
				parents[name][parent] = true
				stack = append(stack, name)
				maxDepth = max(maxDepth, e.Depth)
			case encode.KindLeave:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		}
		if err := it.Err(); err != nil {
			t.Errorf("%s: %v", l.Name, err)
		}
		it.Close()
	}
	return regions, parents, maxDepth
}

// hmbSymbols lists the symbols of exe from hmbtrace.
func hmbSymbols(t *testing.T, exe string) []string {
	t.Helper()
	out, err := exec.Command("go", "tool", "nm", exe).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", exe, err)
	}
	var syms []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "hmbtrace") {
			syms = append(syms, strings.TrimSpace(l))
		}
	}
	return syms
}

// TestToolexecBuild builds testdata/prog, which imports nothing of
// hmbtrace, with go build -toolexec, runs it, and checks its trace: the
// regions are the functions as the runtime names them, with their files
// and lines, nested as they called each other on each goroutine's lane.
// A plain build before and after is untouched, and a filter file rebuilds.
func TestToolexecBuild(t *testing.T) {
	tool, dir := testModule(t)
	env := buildEnv()
	plain := filepath.Join(dir, "plain")
	goRun(t, dir, env, "build", "-o", plain, ".")
	if s := hmbSymbols(t, plain); len(s) > 0 {
		t.Fatalf("the plain build has hmbtrace symbols: %q", s[:min(len(s), 5)])
	}
	inst := filepath.Join(dir, "inst")
	goRun(t, dir, env, "build", "-toolexec="+tool, "-o", inst, ".")
	if len(hmbSymbols(t, inst)) == 0 {
		t.Fatal("the instrumented build has no hmbtrace symbols")
	}

	out := filepath.Join(dir, "out")
	stdout, code := runProg(t, inst, out)
	if code != 0 {
		t.Fatalf("exit code %d\n%s", code, stdout)
	}
	regions, parents, depth := traceOf(t, out)
	funcs := parseFuncs(t, stdout)
	if len(funcs) < 4 {
		t.Fatalf("the program printed %d functions:\n%s", len(funcs), stdout)
	}
	for _, fn := range funcs {
		r, ok := regions[fn.name]
		if !ok {
			t.Errorf("no region %s; regions: %v", fn.name, keys(regions))
			continue
		}
		if r.File != fn.file || r.Line != fn.line {
			t.Errorf("region %s at %s:%d, want %s:%d", fn.name, r.File, r.Line, fn.file, fn.line)
		}
	}
	for name, want := range map[string][]string{
		"main.main":                              {""},
		"main.main.func1":                        {""}, // a goroutine: the top of its lane
		"main.main.func2":                        {"main.main"},
		"main.work":                              {"main.main.func1"},
		"main.fib":                               {"main.work", "main.fib"},
		"example.com/prog/shapes.Square.Area":    {"main.work"},
		"example.com/prog/shapes.(*Circle).Area": {"main.work"},
		"main.here":                              {"main.main", "main.main.func1", "main.work"},
	} {
		got := keys(parents[name])
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s entered in %q, want %q", name, got, want)
		}
	}
	if depth < 10 {
		t.Errorf("deepest region at depth %d: fib(10)'s recursion is not nested", depth)
	}
	if _, ok := regions["example.com/prog/shapes.Square.Perimeter"]; ok {
		t.Error("the tiny leaf Square.Perimeter has a probe")
	}

	// The plain build again: from the cache, as it was.
	plain2 := filepath.Join(dir, "plain2")
	goRun(t, dir, env, "build", "-o", plain2, ".")
	if !sameFile(t, plain, plain2) {
		t.Error("the plain build after the instrumented one differs from the one before")
	}

	// A filter file is part of the cache key: main.fib loses its probe.
	filterFile := filepath.Join(dir, "fib.filter")
	if err := os.WriteFile(filterFile, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE main.fib\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inst2 := filepath.Join(dir, "inst2")
	goRun(t, dir, buildEnv("HMBTRACE_GO_FILTER="+filterFile), "build", "-toolexec="+tool, "-o", inst2, ".")
	out2 := filepath.Join(dir, "out2")
	runProg(t, inst2, out2)
	regions2, _, _ := traceOf(t, out2)
	if _, ok := regions2["main.fib"]; ok {
		t.Error("main.fib, excluded by the filter, has a probe: the filter did not rebuild")
	}
	if _, ok := regions2["main.work"]; !ok {
		t.Error("main.work lost its probe to a filter that excludes main.fib only")
	}
}

// TestToolexecExit checks that os.Exit and log.Fatalf in rewritten code
// write the trace, with the functions exited from in it, and that a panic
// does too, with a traceback that names the user's file and line.
func TestToolexecExit(t *testing.T) {
	tool, dir := testModule(t)
	inst := filepath.Join(dir, "inst")
	// Through the front end this time.
	cmd := exec.Command(tool, "build", "-o", inst, ".")
	cmd.Dir, cmd.Env = dir, buildEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hmbtrace-go build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		mode string
		code int
		in   string
	}{{"exit", 3, "main.leave"}, {"fatal", 1, "main.main"}, {"panic", 2, "main.boom"}} {
		out := filepath.Join(dir, "out-"+c.mode)
		_, stderr, code := runProgErr(t, inst, out, "PROG_EXIT="+c.mode)
		if c.mode == "panic" && !strings.Contains(stderr, filepath.Join(dir, "main.go")+":75 ") {
			t.Errorf("the traceback does not name %s:75:\n%s", filepath.Join(dir, "main.go"), stderr)
		}
		if c.mode == "fatal" && !strings.Contains(stderr, "fatal 4") {
			t.Errorf("log.Fatalf's message is lost: %q", stderr)
		}
		if code != c.code {
			t.Errorf("%s: exit code %d, want %d", c.mode, code, c.code)
		}
		regions, _, _ := traceOf(t, out)
		if _, ok := regions[c.in]; !ok {
			t.Errorf("%s: no region %s in the trace; regions: %v", c.mode, c.in, keys(regions))
		}
	}
}

// TestToolexecNoRequirement checks the message for a module that does not
// require hmbtrace.
func TestToolexecNoRequirement(t *testing.T) {
	tool, dir := testModule(t)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/prog\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "go.sum"))
	cmd := exec.Command("go", "build", "-toolexec="+tool, "-o", filepath.Join(dir, "inst"), ".")
	cmd.Dir, cmd.Env = dir, buildEnv()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("the build of a module without hmbtrace succeeded")
	}
	if !strings.Contains(string(out), "does not require github.com/hmbtrace/hmbtrace") || !strings.Contains(string(out), "go get -tool github.com/hmbtrace/hmbtrace/cmd/hmbtrace-go") {
		t.Errorf("the message does not say what is missing and how to add it:\n%s", out)
	}
}

func keys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func sameFile(t *testing.T, a, b string) bool {
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// TestToolexecJoinsStart builds, with hmbtrace-go, a program that starts
// a measurement of its own for manual regions: the instrumentation's
// measurement runs from the first probe, before main's body, so Start
// must join it. It started a second one: two traces of rank 0 from one
// process (<name>.0.hmb and <name>.0.pid<pid>.hmb), main.main alone in
// one of them, which the tools then refused to read together.
func TestToolexecJoinsStart(t *testing.T) {
	tool, dir := testModule(t)
	gos, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range gos {
		os.Remove(f)
	}
	const prog = `package main

import (
	"context"
	"fmt"

	"github.com/hmbtrace/hmbtrace/measure"
)

var solve = measure.NewRegion("solve (manual)")

func step(i int) int { return i * i }

func main() {
	m, err := measure.Start(measure.Config{})
	if err != nil {
		measure.Fatal(err)
	}
	defer m.Close()
	s := 0
	measure.Do(context.Background(), solve, func(context.Context) {
		for i := range 100 {
			s += step(i)
		}
	})
	fmt.Println(s)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := filepath.Join(dir, "inst")
	cmd := exec.Command(tool, "build", "-o", inst, ".")
	cmd.Dir, cmd.Env = dir, buildEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hmbtrace-go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, code := runProgErr(t, inst, out)
	if code != 0 || strings.TrimSpace(stdout) != "328350" || stderr != "" {
		t.Fatalf("exit code %d, stdout %q, stderr %q; want 0, 328350 and nothing", code, stdout, stderr)
	}
	regions, parents, _ := traceOf(t, out) // one trace
	for _, r := range []string{"main.main", "solve (manual)"} {
		if _, ok := regions[r]; !ok {
			t.Errorf("no region %s in the trace; regions: %v", r, keys(regions))
		}
	}
	if !parents["solve (manual)"]["main.main"] {
		t.Errorf("solve (manual) entered in %v; want in main.main, on its lane", parents["solve (manual)"])
	}
}
