package measure

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/mdcode"
)

// TestDocsVariables checks every HMB_* variable the README and the guide
// name against envVars, and every value they set one to on a command
// line (HMB_BUFFER_SIZE=16M ./prog) against its parser, so that the pages
// cannot teach a variable that does not exist or a value that Start
// refuses. The test suite's own switches (internal/tracetest, the
// analyses' benchmarks on an outside archive, what cshim's benchmarks
// read with Getenv) and the C header's macros (HMB_PARADIGM_MPI) are no
// variables and may be named.
func TestDocsVariables(t *testing.T) {
	own := suiteSwitches(t)
	pages, err := mdcode.Pages("..")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`\bHMB_[A-Z0-9_]*[A-Z0-9]\b`)
	assign := regexp.MustCompile(`(?:^|\s)(HMB_[A-Z0-9_]*[A-Z0-9])=("[^"]*"|'[^']*'|\S*)`)
	names, values := 0, 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, v := range name.FindAllString(line, -1) {
				names++
				if lookupEnvVar(v) == nil && !own[v] {
					t.Errorf("%s:%d: %s is no variable of envVars (measure/envvar.go)", page, i+1, v)
				}
			}
		}
		snippets, err := mdcode.Read(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range snippets {
			if s.Lang != "" && s.Lang != "sh" && s.Lang != "bash" && s.Lang != "inline" {
				continue
			}
			for _, m := range assign.FindAllStringSubmatch(s.Text, -1) {
				// A value in prose ends before its punctuation: "(HMB_SURVIVE=1)".
				v, val := m[1], strings.Trim(strings.TrimRight(m[2], "),.;:"), `"'`)
				if own[v] || placeholder(val) {
					continue
				}
				values++
				lookup := func(k string) (string, bool) {
					if k == v {
						return val, true
					}
					return "", false
				}
				if _, err := (Config{}).mergeEnv(lookup, []string{v + "=" + val}, io.Discard); err != nil {
					t.Errorf("%s: %s=%s: %v", s.Where(), v, val, err)
				}
			}
		}
	}
	t.Logf("%d names, %d values", names, values)
	if names < 20 || values < 5 {
		t.Errorf("%d names and %d values in %d pages: the scan misses them", names, values, len(pages))
	}
}

// placeholder reports whether a value on a page stands for one the reader
// chooses (N, DIR, <name>, $VAR, …) rather than being one.
func placeholder(v string) bool {
	return v == "" || strings.ContainsAny(v, "$<>…`") || strings.ToUpper(v) == v && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
}

// suiteSwitches returns the HMB_* names that are no settings of a
// measurement: those the test suite reads for itself (internal/tracetest)
// and the C sources' macros.
func suiteSwitches(t *testing.T) map[string]bool {
	own := map[string]bool{}
	for _, g := range []struct {
		glob string
		re   *regexp.Regexp
	}{
		{"../internal/tracetest/*.go", regexp.MustCompile(`"(HMB_[A-Z0-9_]*[A-Z0-9])"`)},
		{"../analysis/*/*_test.go", regexp.MustCompile(`"(HMB_[A-Z0-9_]*[A-Z0-9])"`)},
		{"../cshim/*/*.h", regexp.MustCompile(`#define\s+(HMB_[A-Z0-9_]*[A-Z0-9])`)},
		{"../cshim/*_test.go", regexp.MustCompile(`Getenv\("(HMB_[A-Z0-9_]*[A-Z0-9])"\)`)},
	} {
		files, err := filepath.Glob(g.glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (%d files)", g.glob, err, len(files))
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range g.re.FindAllStringSubmatch(string(b), -1) {
				own[m[1]] = true
			}
		}
	}
	return own
}

func TestPlaceholder(t *testing.T) {
	for v, want := range map[string]bool{"N": true, "DIR": true, "$HOME/x": true, "<dir>": true, "64M": false, "1": false, "depth": false, "rank-files": false} {
		if placeholder(v) != want {
			t.Errorf("placeholder(%q) = %v", v, !want)
		}
	}
}

// TestREADMEStartsWithTheTwoCommands: the README's first lines are its
// first code block, the main job (go run ./examples/heat) and the whole
// test suite (make test), and .ci/run runs exactly that test command, so
// that a fresh clone's first two commands are the ones CI runs.
func TestREADMEStartsWithTheTwoCommands(t *testing.T) {
	snippets, err := mdcode.Read("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(snippets) == 0 || snippets[0].Line > 4 {
		t.Fatalf("README.md does not start with a code block (right under its title)")
	}
	// A block's lines are consecutive snippets of its language.
	var cmds []string
	for i, sn := range snippets {
		if sn.Lang != snippets[0].Lang || sn.Line != snippets[0].Line+i {
			break
		}
		if c, _, _ := strings.Cut(sn.Text, "#"); strings.TrimSpace(c) != "" {
			cmds = append(cmds, strings.Join(strings.Fields(c), " "))
		}
	}
	if want := []string{"go run ./examples/heat", "make test"}; !slices.Equal(cmds, want) {
		t.Errorf("README.md's first code block runs %q, want %q", cmds, want)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, l := range strings.Split(string(ci), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			last = l
		}
	}
	if last != "make test" {
		t.Errorf(".ci/run ends with %q, want the README's test command, make test", last)
	}
}

// TestREADMEGoQuickStart builds and runs the README's Go quick start: the
// first program a Go user copies must compile and write its trace.
func TestREADMEGoQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	snippets, err := mdcode.Read("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, s := range snippets {
		if s.Lang == "go" {
			src.WriteString(s.Text + "\n")
		} else if src.Len() > 0 {
			break
		}
	}
	if !strings.Contains(src.String(), "package main") {
		t.Fatalf("README.md has no Go program in a go block:\n%s", src.String())
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "quickstart")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(goTool, "build", "-o", prog, filepath.Join(dir, "main.go"))
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of README.md's quick start: %v\n%s\n%s", err, out, src.String())
	}
	run := exec.Command(prog)
	run.Dir = dir
	run.Env = append(cleanEnv(), "HMB_OUTPUT="+filepath.Join(dir, "out"))
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("README.md's quick start: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "quickstart.0.hmb")); err != nil {
		t.Errorf("README.md's quick start wrote no trace: %v", err)
	}
}

// cleanEnv is the environment without HMB_* variables, so that the
// shell's settings do not change what the quick start writes.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HMB_") {
			env = append(env, kv)
		}
	}
	return env
}
