package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// grammarCase is one command line split into its flags and its files. OUT
// in either stands for a fresh directory. base are flags kept in the run
// without the flags (report's -o, lest it write report.html here).
type grammarCase struct {
	flags, files, base []string
}

// grammarCases holds, for every command of the table in main.go, flags
// that change its output and files it reads. recover's case is an error
// that only its flag causes. A command added to the table needs a case
// here: TestGrammarFlagsAnywhere fails without one.
func grammarCases() map[string]grammarCase {
	heat := filepath.Join("testdata", "golden", "traces", "heat")
	return map[string]grammarCase{
		"summary":   {[]string{"-width", "6", "-ranks"}, []string{heat}, nil},
		"dump":      {[]string{"-locations"}, []string{filepath.Join(heat, "heat.0.hmb")}, nil},
		"export":    {[]string{"-format", "pprof", "-o", "OUT/p.pprof"}, []string{heat}, nil},
		"variation": {[]string{"-top", "2", "-z", "2.5"}, []string{heat}, nil},
		"score":     {[]string{"-threshold", "1", "-property", "prolog"}, []string{heat}, nil},
		"comm":      {[]string{"-value", "bytes", "-tsv"}, []string{filepath.Join("testdata", "golden", "traces", "mpi")}, nil},
		"dynamics":  {[]string{"-tsv", "-top", "2"}, []string{heat}, nil},
		"report":    {[]string{"-o", "OUT/r.html", "-title", "-grammar-", "-rows", "4"}, []string{heat}, []string{"-o", "OUT/r.html"}},
		"recover":   {[]string{"-any-owner"}, []string{filepath.Join("testdata", "no-such-mapping")}, nil},
		"waitstate": {[]string{"-top", "3", "-json"}, []string{filepath.Join("testdata", "golden", "traces", "mpi")}, nil},
	}
}

// TestMain fails a test run that leaves a new file in the package
// directory (a command run without -o writes its default output there).
func TestMain(m *testing.M) {
	names := func() map[string]bool {
		entries, _ := os.ReadDir(".")
		set := map[string]bool{}
		for _, e := range entries {
			set[e.Name()] = true
		}
		return set
	}
	before := names()
	rc := m.Run()
	for name := range names() {
		if !before[name] {
			fmt.Fprintf(os.Stderr, "the tests left %s in cmd/hmbtrace\n", name)
			rc = 1
		}
	}
	os.Exit(rc)
}

// runIn runs hmbtrace with OUT replaced by a fresh directory; it returns
// the exit code, the standard output and error, and the files written,
// each with that directory named OUT again.
func runIn(t *testing.T, args []string) (rc int, text string, written map[string]string) {
	t.Helper()
	dir := t.TempDir()
	a := make([]string, len(args))
	for i, s := range args {
		a[i] = strings.Replace(s, "OUT", dir, 1)
	}
	var out, errOut bytes.Buffer
	rc = run(a, &out, &errOut)
	text = strings.ReplaceAll(out.String()+"\n-- stderr --\n"+errOut.String(), dir, "OUT")
	written = map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".html") {
			data = reportStamp.ReplaceAll(data, []byte("STAMP"))
		}
		written[e.Name()] = strings.ReplaceAll(string(data), dir, "OUT")
	}
	return rc, text, written
}

func join(parts ...[]string) []string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

// TestGrammarFlagsAnywhere: every command reads its flags before and after
// its files alike, and the flags take effect in both places.
func TestGrammarFlagsAnywhere(t *testing.T) {
	cases := grammarCases()
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			gc, ok := cases[c.name]
			if !ok {
				t.Fatalf("command %s has no case in grammarCases: add its flags and files", c.name)
			}
			name := []string{c.name}
			rcBefore, before, filesBefore := runIn(t, join(name, gc.flags, gc.files))
			rcAfter, after, filesAfter := runIn(t, join(name, gc.files, gc.flags))
			if rcBefore != rcAfter || before != after {
				t.Errorf("flags before the files: exit %d\n%s\nflags after: exit %d\n%s", rcBefore, before, rcAfter, after)
			}
			if len(filesBefore) != len(filesAfter) {
				t.Errorf("flags before the files wrote %d files, after %d", len(filesBefore), len(filesAfter))
			}
			for f, data := range filesBefore {
				if filesAfter[f] != data {
					t.Errorf("%s differs with the flags after the files", f)
				}
			}
			// The flags change what the command does: else the
			// comparison above would not tell that they were read.
			rcNone, none, filesNone := runIn(t, join(name, gc.files, gc.base))
			same := rcNone == rcBefore && none == before && len(filesNone) == len(filesBefore)
			for f, data := range filesBefore {
				same = same && filesNone[f] == data
			}
			if same {
				t.Errorf("%s %q: the same as without the flags %q", c.name, gc.files, gc.flags)
			}
			if c.name == "recover" && (rcAfter != 1 || !strings.Contains(after, "-any-owner needs -o DIR")) {
				t.Errorf("recover with -any-owner after the file: exit %d\n%s", rcAfter, after)
			}
		})
	}
}

// TestGrammarWords: "--" ends the flags, a flag's value is taken as it is
// even when it starts with '-', and errors name the flag.
func TestGrammarWords(t *testing.T) {
	heat := filepath.Join("testdata", "golden", "traces", "heat")
	for _, c := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"summary", "--", "-width"}, 1, "-width: no such file"},
		{[]string{"summary", heat, "--", "-tsv"}, 1, "-tsv: no such file"},
		{[]string{"summary", heat, "-width"}, 1, "flag needs an argument: -width"},
		{[]string{"summary", heat, "-width", "x"}, 1, `invalid value "x" for flag -width`},
		{[]string{"summary", heat, "-nope"}, 1, "flag provided but not defined: -nope"},
		{[]string{"summary", heat, "--width=8", "-tsv=false"}, 0, "heat"},
		{[]string{"report", heat, "-title", "-x-", "-o", "OUT/r.html"}, 0, "r.html"},
	} {
		rc, text, written := runIn(t, c.args)
		if rc != c.rc || !strings.Contains(text, c.want) {
			t.Errorf("hmbtrace %q: exit %d\n%s\nwant exit %d and %q", c.args, rc, text, c.rc, c.want)
		}
		if c.args[0] == "report" && rc == 0 && !strings.Contains(written["r.html"], "<title>-x-") {
			t.Errorf("report -title -x-: the page's title is not -x-")
		}
	}
}

// TestGrammarHelp: "help COMMAND" prints what "COMMAND -h" does, for every
// command, on the standard output, and exits 0; -h after the files too.
func TestGrammarHelp(t *testing.T) {
	for _, c := range commands {
		var h, dash, late, errOut bytes.Buffer
		if rc := run([]string{"help", c.name}, &h, &errOut); rc != 0 {
			t.Errorf("help %s: exit %d: %s", c.name, rc, errOut.String())
		}
		if rc := run([]string{c.name, "-h"}, &dash, &errOut); rc != 0 {
			t.Errorf("%s -h: exit %d: %s", c.name, rc, errOut.String())
		}
		if rc := run([]string{c.name, "some-file", "-h"}, &late, &errOut); rc != 0 {
			t.Errorf("%s some-file -h: exit %d: %s", c.name, rc, errOut.String())
		}
		if h.String() != dash.String() || late.String() != dash.String() {
			t.Errorf("help %s:\n%s\n%s -h:\n%s\n%s some-file -h:\n%s", c.name, h.String(), c.name, dash.String(), c.name, late.String())
		}
		if !strings.HasPrefix(h.String(), "usage: hmbtrace "+c.usage+"\n") || !strings.Contains(h.String(), "\n  -") {
			t.Errorf("help %s: no usage line or flags:\n%s", c.name, h.String())
		}
		if errOut.Len() != 0 {
			t.Errorf("help %s wrote to stderr: %s", c.name, errOut.String())
		}
	}
	var general, errOut bytes.Buffer
	if rc := run([]string{"help"}, &general, &errOut); rc != 0 || !strings.HasPrefix(general.String(), "usage: hmbtrace COMMAND") {
		t.Errorf("help: exit %d:\n%s", rc, general.String())
	}
	for _, c := range commands {
		if !strings.Contains(general.String(), "\n  "+c.usage+"\n") {
			t.Errorf("help does not list %s", c.name)
		}
	}
	for _, word := range []string{"help", "version"} {
		var out bytes.Buffer
		if rc := run([]string{"help", word}, &out, &errOut); rc != 0 || !strings.HasPrefix(out.String(), "usage: hmbtrace "+word+" ") {
			t.Errorf("help %s: exit %d: %q", word, rc, out.String())
		}
		if !strings.Contains(general.String(), "\n  "+word+" ") {
			t.Errorf("help does not list %s", word)
		}
	}
	for _, args := range [][]string{{"help", "frobnicate"}, {"help", "summary", "dump"}} {
		var out, errOut bytes.Buffer
		if rc := run(args, &out, &errOut); rc != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "hmbtrace help: ") {
			t.Errorf("hmbtrace %q: exit %d, stdout %q, stderr %q", args, rc, out.String(), errOut.String())
		}
	}
}

// TestGrammarUnknownCommand: one line naming the word and the commands.
func TestGrammarUnknownCommand(t *testing.T) {
	for _, word := range []string{"frobnicate", "-width", "summarize"} {
		var out, errOut bytes.Buffer
		rc := run([]string{word, "hmb-out"}, &out, &errOut)
		if rc != 2 || out.Len() != 0 || strings.Count(errOut.String(), "\n") != 1 ||
			!strings.Contains(errOut.String(), `unknown command "`+word+`"; the commands: summary, dump`) {
			t.Errorf("hmbtrace %s: exit %d, stdout %q, stderr %q", word, rc, out.String(), errOut.String())
		}
	}
}

// TestGrammarVersion: --version and version print the same line.
func TestGrammarVersion(t *testing.T) {
	var a, b, errOut bytes.Buffer
	if rc := run([]string{"--version"}, &a, &errOut); rc != 0 {
		t.Errorf("--version: exit %d: %s", rc, errOut.String())
	}
	if rc := run([]string{"version"}, &b, &errOut); rc != 0 {
		t.Errorf("version: exit %d: %s", rc, errOut.String())
	}
	if a.String() != b.String() || !strings.HasPrefix(a.String(), "hmbtrace ") || strings.Count(a.String(), "\n") != 1 {
		t.Errorf("--version %q, version %q", a.String(), b.String())
	}
}

func TestVersionText(t *testing.T) {
	info := func(v string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/hmbtrace/hmbtrace", Version: v}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{info("v0.4.0"), true, "hmbtrace v0.4.0, go1.26.0"},
		{info("(devel)", "vcs.revision", "95a023f0c1", "vcs.time", "2026-12-06T14:00:00Z", "vcs.modified", "true"), true,
			"hmbtrace (devel), commit 95a023f0c1 (2026-12-06T14:00:00Z), with uncommitted changes, go1.26.0"},
		{info("(devel)", "vcs.revision", "95a023f0c1", "vcs.modified", "false"), true, "hmbtrace (devel), commit 95a023f0c1, go1.26.0"},
		{info("(devel)"), true, "hmbtrace (devel), commit unknown (built without VCS information), go1.26.0"},
		{nil, false, "hmbtrace: no build information (not built with module support)"},
	} {
		if got := versionText(c.info, c.ok); got != c.want {
			t.Errorf("versionText: %q, want %q", got, c.want)
		}
	}
}
