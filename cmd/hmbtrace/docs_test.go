package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/mdcode"
)

// TestDocsCommands parses every hmbtrace command line the README and the
// guide show (fenced shell blocks and inline code) with the command's own
// flag set: the command must exist and every flag must be one it takes,
// with a value where it wants one. The files are not opened; the flags'
// values are checked only as far as flag parsing checks them.
func TestDocsCommands(t *testing.T) {
	pages, err := mdcode.Pages("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range pages {
		snippets, err := mdcode.Read(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range snippets {
			if !shellish(s.Lang) {
				continue
			}
			lines := invocations(s.Text)
			// Prose names a command's flag without the binary:
			// `summary -ranks`, `export -format cube`.
			if s.Lang == "inline" && len(lines) == 0 {
				if w := shellWords(s.Text); len(w) >= 2 && isCommand(w[0]) && strings.HasPrefix(w[1], "-") {
					lines = append(lines, w)
				}
			}
			for _, args := range lines {
				checked++
				// Prose names a flag by itself ("after `hmbtrace score
				// -g`"): a value is wanted only on a command line.
				if err := parseDocArgs(args, s.Lang != "inline"); err != nil {
					t.Errorf("%s: hmbtrace %s: %v", s.Where(), strings.Join(args, " "), err)
				}
			}
		}
	}
	t.Logf("%d command lines in %d pages", checked, len(pages))
	// The README alone shows a dozen; fewer means the scan broke.
	if checked < 12 {
		t.Errorf("checked %d command lines in %d pages: the scan misses them", checked, len(pages))
	}
}

// shellish reports whether a block's language is one a command line is
// written in: shell, a console, or none.
func shellish(lang string) bool {
	switch lang {
	case "", "sh", "bash", "shell", "console", "text", "inline":
		return true
	}
	return false
}

// command words: a run of the hmbtrace binary ("hmbtrace", "./hmbtrace",
// "build/bin/hmbtrace", "go run ./cmd/hmbtrace") then a lowercase word.
var commandWord = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// invocations returns the argument lists of the hmbtrace commands in a
// line: the words after each "hmbtrace" word up to a shell operator or a
// comment. A word after hmbtrace that is not a command's shape (output
// such as "hmbtrace: 5 usage errors") is no invocation.
func invocations(line string) [][]string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "$ ")
	words := shellWords(line)
	var out [][]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "#" || strings.HasPrefix(w, "#") && i > 0 || strings.HasPrefix(w, "//") {
			break
		}
		if path.Base(w) != "hmbtrace" || i+1 == len(words) || !commandWord.MatchString(words[i+1]) {
			continue
		}
		var args []string
		for i++; i < len(words); i++ {
			a := words[i]
			if a == "|" || a == "&&" || a == "||" || a == ";" || a == ">" || a == "2>&1" || strings.HasPrefix(a, "#") || strings.HasPrefix(a, ">") {
				break
			}
			args = append(args, a)
		}
		out = append(out, args)
	}
	return out
}

// isCommand reports whether name is one of hmbtrace's commands.
func isCommand(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}

// shellWords splits a line into words as a shell does for the simple
// cases the pages show: spaces separate, quotes group and are removed.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// parseDocArgs checks one command line: args[0] is the command. Each
// command parses its flags before anything else and answers a final -h
// with its help, so a command line that reaches the -h has only flags
// the command takes.
func parseDocArgs(args []string, whole bool) error {
	name := args[0]
	switch name {
	case "version":
		return nil
	case "help":
		if len(args) > 2 {
			return errors.New("help takes one command")
		}
		// "hmbtrace help COMMAND" names the form, not a command.
		if len(args) == 2 && strings.ToUpper(args[1]) != args[1] {
			var b strings.Builder
			if code := help(args[1:], io.Discard, &b); code != 0 {
				return errors.New(strings.TrimSpace(b.String()))
			}
		}
		return nil
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		rest := args[1:]
		// A flag at the end that wants a value would take the -h as
		// its value: say so rather than pass.
		if n := len(rest); n > 0 {
			if err := lastFlagHasValue(c, rest[n-1]); err != nil {
				if whole {
					return err
				}
				rest = append(rest[:n:n], "VALUE")
			}
		}
		// The -h goes before a "--", after which everything is a file.
		end := len(rest)
		if i := slices.Index(rest, "--"); i >= 0 {
			end = i
		}
		try := append(append(append([]string(nil), rest[:end]...), "-h"), rest[end:]...)
		err := c.run(try, io.Discard)
		var h helpRequest
		if errors.As(err, &h) {
			return nil
		}
		if err == nil {
			return errors.New("the command ran instead of answering -h")
		}
		return err
	}
	return errors.New("no such command; the commands: " + commandNames())
}

// lastFlagHasValue returns an error when a is a flag of c that wants a
// value and nothing follows it.
func lastFlagHasValue(c command, a string) error {
	if len(a) < 2 || a[0] != '-' || strings.Contains(a, "=") {
		return nil
	}
	var h helpRequest
	err := c.run([]string{"-h"}, io.Discard)
	if !errors.As(err, &h) {
		return nil
	}
	name := strings.TrimLeft(a, "-")
	for _, line := range strings.Split(h.text, "\n") {
		// PrintDefaults: "  -name value" for a flag with a value,
		// "  -name" for a bool.
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "-"+name && strings.HasPrefix(line, "  -") {
			return errors.New(a + " wants a value and none follows")
		}
	}
	return nil
}

func TestInvocations(t *testing.T) {
	for line, want := range map[string]string{
		"hmbtrace summary hmb-out                # flat profile":             "[[summary hmb-out]]",
		"$ hmbtrace export -format pprof -o x.pb.gz hmb-out":                 "[[export -format pprof -o x.pb.gz hmb-out]]",
		"go run ./cmd/hmbtrace summary -width 20 hmb-out | less":             "[[summary -width 20 hmb-out]]",
		"hmbtrace: 5 usage errors, 12% of events not kept":                   "[]",
		"go install github.com/hmbtrace/hmbtrace/cmd/hmbtrace@latest":        "[]",
		"hmbtrace report -o r.html d && hmbtrace comm -tsv d":                "[[report -o r.html d] [comm -tsv d]]",
		"hmbtrace variation -sync 'halo wait,allreduce wait' -svg hot.svg d": "[[variation -sync halo wait,allreduce wait -svg hot.svg d]]",
	} {
		got := invocations(line)
		s := fmt.Sprint(got)
		if len(got) == 0 {
			s = "[]"
		}
		if s != want {
			t.Errorf("invocations(%q) = %s, want %s", line, s, want)
		}
	}
	// The check fails on what does not exist.
	for _, args := range [][]string{{"summary", "-nosuchflag", "x"}, {"frobnicate", "x"}, {"export", "x", "-o"}, {"help", "frobnicate"}} {
		if parseDocArgs(args, true) == nil {
			t.Errorf("parseDocArgs(%q) passed", args)
		}
	}
	for _, args := range [][]string{{"summary", "hmb-out", "-width", "20"}, {"export", "-format", "otf2", "-o", "out", "hmb-out"}, {"help", "summary"}, {"help", "COMMAND"}, {"version"}} {
		if err := parseDocArgs(args, true); err != nil {
			t.Errorf("parseDocArgs(%q): %v", args, err)
		}
	}
}

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/commands.md's flag reference from the commands")

// The flag reference of docs/commands.md lies between these lines.
const (
	refBegin = "<!-- the commands' help, generated: go test ./cmd/hmbtrace -run TestDocsFlagReference -update-docs -->\n"
	refEnd   = "<!-- end of the generated help -->\n"
)

// flagReference returns every command's -h, as hmbtrace help COMMAND
// prints it, in Markdown: one definition of the flags, mirrored.
func flagReference(t *testing.T) string {
	var b strings.Builder
	b.WriteString(refBegin)
	for _, c := range commands {
		var h helpRequest
		if err := c.run([]string{"-h"}, io.Discard); !errors.As(err, &h) {
			t.Fatalf("%s -h: %v", c.name, err)
		}
		fmt.Fprintf(&b, "\n### hmbtrace %s\n\n```txt\n%s```\n", c.name, h.text)
	}
	b.WriteString("\n" + refEnd)
	return b.String()
}

// TestDocsFlagReference keeps docs/commands.md's flag reference equal to
// what the commands print for -h.
func TestDocsFlagReference(t *testing.T) {
	const path = "../../docs/commands.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	want := flagReference(t)
	start := strings.Index(page, refBegin)
	end := strings.Index(page, refEnd)
	if start < 0 || end < start {
		t.Fatalf("%s has no generated flag reference (a line %q and one %q)", path, strings.TrimSpace(refBegin), strings.TrimSpace(refEnd))
	}
	end += len(refEnd)
	if page[start:end] == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(page[:start]+want+page[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's flag reference is not what the commands print for -h: run go test ./cmd/hmbtrace -run TestDocsFlagReference -update-docs", path)
}
