package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/filter"
)

// hmbtraceModule is never instrumented: its probes would trace themselves.
const hmbtraceModule = "github.com/hmbtrace/hmbtrace"

// Environment variables.
const (
	envPackages   = "HMBTRACE_GO_PACKAGES"
	envFilter     = "HMBTRACE_GO_FILTER"
	envTiny       = "HMBTRACE_GO_TINY"
	envVerbose    = "HMBTRACE_GO_VERBOSE"
	envBuildFlags = "HMBTRACE_GO_BUILDFLAGS" // set by the front end: the go command's build flags, JSON
	envState      = "HMBTRACE_GO_STATE"      // set by the front end: the state file it computed
)

// state is what one go command's build needs in every tool invocation:
// the packages to instrument (which only the go command's directory tells,
// not a compile's), the filter, and where auto and its dependencies are
// built. The front end computes it before it runs the go command and names
// its file in HMBTRACE_GO_STATE. Under a plain go build -toolexec, the go
// command runs `compile -V=full` once per build, in its own directory and
// before it compiles anything, to make the cache key; hmbtrace-go computes
// the state there and leaves it in a file named after the go command's
// process id, where the compiles and the link of the build find it.
type state struct {
	Patterns   []string          // import-path patterns to instrument
	FilterFile string            // "" for none
	FilterHash string            // of its contents
	Tiny       bool              // instrument tiny leaf functions
	Verbose    bool              // say what is instrumented
	Exports    map[string]string // import path -> export file, auto and its deps
	AutoIDs    string            // build IDs of auto and its deps, hashed
	AutoAPI    string            // their export data, hashed
	Key        string            // compile's cache key: the settings, AutoAPI, hmbtrace-go itself
	LinkKey    string            // link's: Key and AutoIDs
}

// stateFile is where the state of the go command with process id pid is.
func stateFile(pid int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("hmbtrace-go-%d", os.Getuid()), fmt.Sprintf("state-%d.json", pid))
}

// loadState reads the state of the build this process is part of: the
// front end's, else that of the go command that runs this process, or (on
// Linux) of the one that runs the process that runs it, as `go tool
// hmbtrace-go` in -toolexec does.
func loadState() (*state, error) {
	path := os.Getenv(envState)
	if path == "" {
		path = stateFile(os.Getppid())
		if _, err := os.Stat(path); err != nil {
			if gp := grandparent(); gp > 0 {
				if _, err := os.Stat(stateFile(gp)); err == nil {
					path = stateFile(gp)
				}
			}
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the build's settings (%s): %v; hmbtrace-go expects the go command to have run `compile -V=full` through it first", path, err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("the build's settings (%s): %v", path, err)
	}
	return &s, nil
}

// grandparent is the process id of this process's parent's parent, 0 where
// the system does not tell (all but Linux).
func grandparent() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", os.Getppid()))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	pid, _ := strconv.Atoi(f[1])
	return pid
}

// setup computes the state of a build run in this process's directory and
// environment and saves it in path.
func setup(path string) (*state, error) {
	s := &state{Verbose: os.Getenv(envVerbose) == "1", Tiny: os.Getenv(envTiny) == "1"}
	if p := os.Getenv(envPackages); p != "" {
		for _, x := range strings.Split(p, ",") {
			if x = strings.TrimSpace(x); x != "" {
				s.Patterns = append(s.Patterns, x)
			}
		}
	} else {
		mods, err := mainModules()
		if err != nil {
			return nil, err
		}
		for _, m := range mods {
			s.Patterns = append(s.Patterns, m+"/...")
		}
	}
	s.FilterFile = os.Getenv(envFilter)
	if s.FilterFile == "" {
		s.FilterFile = os.Getenv("HMB_FILTER_FILE")
	}
	if s.FilterFile != "" {
		abs, err := filepath.Abs(s.FilterFile)
		if err != nil {
			return nil, err
		}
		s.FilterFile = abs
		b, err := os.ReadFile(abs)
		if err != nil {
			return nil, fmt.Errorf("filter file: %v", err)
		}
		if _, err := filter.Parse(abs, bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("filter file: %v", err)
		}
		s.FilterHash = hashOf(b)
	}
	exports, ids, err := listAuto(buildFlags())
	if err != nil {
		return nil, err
	}
	s.Exports, s.AutoIDs = exports, ids
	self, err := selfHash()
	if err != nil {
		return nil, err
	}
	if s.AutoAPI, err = exportDataHash(exports); err != nil {
		return nil, err
	}
	// A compile depends on auto's export data only (its API and inline
	// bodies): a change in hmbtrace's code behind it relinks the program
	// but recompiles nothing, least of all the standard library, which
	// every change of the key recompiles.
	s.Key = hashOf([]byte(fmt.Sprintf("hmbtrace-go %s\npatterns %q\nfilter %s\ntiny %v\nauto api %s\n",
		self, s.Patterns, s.FilterHash, s.Tiny, s.AutoAPI)))[:24]
	s.LinkKey = hashOf([]byte(s.Key + "\nauto " + s.AutoIDs))[:24]
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	removeStale(filepath.Dir(path), path)
	// Written aside and renamed, so that a compile never reads half a file.
	tmp, err := os.CreateTemp(filepath.Dir(path), "state-*.tmp")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return nil, errors.Join(werr, cerr)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	return s, nil
}

// removeStale removes the state files of builds older than a day from
// dir: a plain go build -toolexec leaves its state behind, as nothing runs
// at its end.
func removeStale(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if info, err := e.Info(); err == nil && p != keep && strings.HasPrefix(e.Name(), "state-") && time.Since(info.ModTime()) > 24*time.Hour {
			os.Remove(p)
		}
	}
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// selfHash identifies this build of hmbtrace-go, so that a new one
// recompiles what the old one instrumented.
func selfHash() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goCommand runs the go command with args in the current directory, with
// the environment minus -toolexec in GOFLAGS (the children must not run
// hmbtrace-go again), and returns its standard output.
func goCommand(args ...string) ([]byte, error) {
	cmd := exec.Command(goBinary(), args...)
	cmd.Env = plainEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// goBinary is the go command of the toolchain that runs the build.
func goBinary() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

func plainEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOFLAGS=") {
			var keep []string
			for _, f := range strings.Fields(kv[len("GOFLAGS="):]) {
				if !strings.HasPrefix(f, "-toolexec") && !strings.HasPrefix(f, "--toolexec") {
					keep = append(keep, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(keep, " ")
		}
		if strings.HasPrefix(kv, "TOOLEXEC_IMPORTPATH=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// mainModules are the paths of the main modules, hmbtrace excepted.
func mainModules() ([]string, error) {
	out, err := goCommand("list", "-m", "-f", "{{.Path}}")
	if err != nil {
		return nil, fmt.Errorf("finding the main module (set %s to name the packages to instrument): %v", envPackages, err)
	}
	var mods []string
	for _, m := range strings.Fields(string(out)) {
		if m != "command-line-arguments" && !inModule(m, hmbtraceModule) {
			mods = append(mods, m)
		}
	}
	return mods, nil
}

// listAuto lists auto and its dependencies as the build compiles them,
// built (go list -export), and returns their export files and a hash of
// their build IDs.
func listAuto(flags []string) (map[string]string, string, error) {
	args := append([]string{"list", "-deps", "-export", "-json=ImportPath,Export,BuildID,Error"}, flags...)
	args = append(args, autoPath)
	out, err := goCommand(args...)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "no required module provides package") || strings.Contains(msg, "cannot find module providing package") ||
			strings.Contains(msg, "is not in std") || strings.Contains(msg, "not in GOROOT") || strings.Contains(msg, "go.mod file not found") {
			wd, _ := os.Getwd()
			return nil, "", fmt.Errorf("the module in %s does not require %s, whose package measure/auto the instrumented code calls; add it with:\n\tgo get -tool %s/cmd/hmbtrace-go\n(%v)", wd, hmbtraceModule, hmbtraceModule, err)
		}
		return nil, "", fmt.Errorf("building %s for the instrumented code: %v", autoPath, err)
	}
	exports := map[string]string{}
	var ids []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Export, BuildID string
			Error                       *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, "", fmt.Errorf("reading go list's output: %v", err)
		}
		if p.Error != nil {
			return nil, "", fmt.Errorf("building %s for the instrumented code: %s: %s", autoPath, p.ImportPath, p.Error.Err)
		}
		if p.ImportPath == "unsafe" {
			continue // the compiler's own
		}
		if p.Export == "" {
			return nil, "", fmt.Errorf("building %s for the instrumented code: go list gave no export file for %s", autoPath, p.ImportPath)
		}
		exports[p.ImportPath] = p.Export
		ids = append(ids, p.ImportPath+" "+p.BuildID)
	}
	if exports[autoPath] == "" {
		return nil, "", fmt.Errorf("building %s for the instrumented code: go list did not list it", autoPath)
	}
	sort.Strings(ids)
	return exports, hashOf([]byte(strings.Join(ids, "\n"))), nil
}

// exportDataHash hashes the export data of the packages in exports: the
// __.PKGDEF member of each archive, or the whole file if it is none.
func exportDataHash(exports map[string]string) (string, error) {
	paths := make([]string, 0, len(exports))
	for p := range exports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(exports[p])
		if err != nil {
			return "", fmt.Errorf("export data of %s: %v", p, err)
		}
		fmt.Fprintf(h, "%s %s\n", p, hashOf(pkgDef(b)))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pkgDef returns the export data in the __.PKGDEF member of the Go archive
// b, which the compiler writes first, or b if it has none.
func pkgDef(b []byte) []byte {
	const magic, hdr = "!<arch>\n", 60
	if !bytes.HasPrefix(b, []byte(magic)) || len(b) < len(magic)+hdr {
		return b
	}
	h := b[len(magic) : len(magic)+hdr]
	if strings.TrimSpace(string(h[:16])) != "__.PKGDEF" {
		return b
	}
	size, err := strconv.Atoi(strings.TrimSpace(string(h[48:58])))
	if err != nil || size < 0 || len(magic)+hdr+size > len(b) {
		return b
	}
	def := b[len(magic)+hdr : len(magic)+hdr+size]
	// Its header names the build ID, which changes with any change of
	// the package; the data proper starts at $$.
	if i := bytes.Index(def, []byte("\n$$")); i >= 0 {
		def = def[i:]
	}
	return def
}

// buildFlags are the go command's flags that change how auto and its
// dependencies compile, so that `go list -export` builds them as the build
// does: from the front end, else from the go command's command line where
// the system shows it (Linux). GOFLAGS reaches go list through the
// environment anyway.
func buildFlags() []string {
	if v := os.Getenv(envBuildFlags); v != "" {
		var f []string
		if json.Unmarshal([]byte(v), &f) == nil {
			return f
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getppid()))
	if err != nil {
		return nil
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) < 2 {
		return nil
	}
	return relevantFlags(args[2:])
}

// Build flags of the go command: those that change compiled packages (kept
// for go list) and the others that take a value (skipped with it).
var (
	keptValueFlags = map[string]bool{"tags": true, "gcflags": true, "asmflags": true, "mod": true, "modfile": true,
		"pgo": true, "installsuffix": true, "buildmode": true, "overlay": true, "compiler": true, "gccgoflags": true}
	keptBoolFlags = map[string]bool{"race": true, "msan": true, "asan": true, "trimpath": true, "linkshared": true}
	valueFlags    = map[string]bool{"o": true, "p": true, "ldflags": true, "toolexec": true, "pkgdir": true,
		"coverpkg": true, "covermode": true, "C": true, "exec": true, "run": true, "bench": true, "count": true,
		"cpu": true, "timeout": true, "parallel": true, "vet": true, "skip": true, "benchtime": true,
		"coverprofile": true, "cpuprofile": true, "memprofile": true, "blockprofile": true, "mutexprofile": true,
		"outputdir": true, "trace": true, "fuzz": true, "fuzztime": true, "list": true, "shuffle": true}
)

// goFlags calls fn with each flag of a go command's arguments (after the
// subcommand) up to its packages: the flag as written, its name, and its
// value (the next argument for a flag that takes one, unless given with
// =), so that a flag's value is never taken for the packages.
func goFlags(args []string, fn func(arg, name, val string)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if (keptValueFlags[name] || valueFlags[name]) && !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		fn(a, name, val)
	}
}

// relevantFlags picks from a go command's arguments (after the subcommand)
// the flags that change how packages compile.
func relevantFlags(args []string) []string {
	var kept []string
	goFlags(args, func(arg, name, val string) {
		switch {
		case keptValueFlags[name]:
			kept = append(kept, "-"+name+"="+val)
		case keptBoolFlags[name]:
			kept = append(kept, arg)
		}
	})
	return kept
}

// matchPattern reports whether import path p matches pattern, as the go
// command's patterns do: `...` matches any string, and x/... matches x too.
func matchPattern(pattern, p string) bool {
	re := regexp.QuoteMeta(pattern)
	re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
	if strings.HasSuffix(re, `/.*`) {
		re = strings.TrimSuffix(re, `/.*`) + `(/.*)?`
	}
	ok, _ := regexp.MatchString("^"+re+"$", p)
	return ok
}

func inModule(p, mod string) bool {
	return p == mod || strings.HasPrefix(p, mod+"/")
}

// selected reports whether the package with import path p is instrumented.
func (s *state) selected(p string) bool {
	if inModule(p, hmbtraceModule) {
		return false
	}
	for _, pat := range s.Patterns {
		if matchPattern(pat, p) {
			return true
		}
	}
	return false
}

// options loads what the rewrite needs.
func (s *state) options() (options, error) {
	o := options{tiny: s.Tiny}
	if s.FilterFile == "" {
		return o, nil
	}
	b, err := os.ReadFile(s.FilterFile)
	if err != nil {
		return o, fmt.Errorf("filter file: %v", err)
	}
	if hashOf(b) != s.FilterHash {
		return o, fmt.Errorf("filter file %s changed during the build", s.FilterFile)
	}
	f, err := filter.Parse(s.FilterFile, bytes.NewReader(b))
	if err != nil {
		return o, fmt.Errorf("filter file: %v", err)
	}
	o.filter = f
	return o, nil
}

// verbosef prints a line when HMBTRACE_GO_VERBOSE=1.
func (s *state) verbosef(format string, args ...any) {
	if s.Verbose {
		fmt.Fprintf(os.Stderr, "hmbtrace-go: "+format+"\n", args...)
	}
}
