package filter

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that its errors are
// *SyntaxErrors with a line inside the input, and that for every accepted
// input, writing the names it excludes gives a file that Parse accepts and
// that excludes exactly those names.
func FuzzParse(f *testing.F) {
	f.Add([]byte("SCOREP_REGION_NAMES_BEGIN\n EXCLUDE *\n INCLUDE main\nSCOREP_REGION_NAMES_END\n"), "main\nsolve")
	f.Fuzz(func(t *testing.T, data []byte, names string) {
		flt, err := Parse("fuzz.filter", bytes.NewReader(data))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; se.Line < 1 || se.Line > lines {
				t.Fatalf("error line %d outside the input's %d lines: %v", se.Line, lines, err)
			}
			if flt != nil {
				t.Fatalf("Parse returned a filter with error %v", err)
			}
			return
		}
		// Candidate names: the fuzzer's names plus the input's tokens, raw
		// and unescaped, so that literal rules get hit.
		candidates := strings.Split(names, "\n")
		for _, tok := range strings.Fields(string(data)) {
			candidates = append(candidates, tok)
			if lit, ok := literalOf(tok); ok {
				candidates = append(candidates, lit)
			}
		}
		candidates = slices.DeleteFunc(candidates, func(s string) bool { return s == "" || strings.Contains(s, "\n") })
		// Bound the checks below, which are quadratic in the input size.
		candidates = candidates[:min(len(candidates), 100)]
		var excluded []string
		isExcluded := map[string]bool{}
		for _, c := range candidates {
			flt.Excluded(c, c) // must not panic
			if flt.Excluded(c, "") {
				excluded = append(excluded, c)
				isExcluded[c] = true
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, excluded, "fuzz"); err != nil {
			t.Fatalf("Write(%q): %v", excluded, err)
		}
		back, err := Parse("written.filter", bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("Parse of written filter: %v\n%s", err, buf.String())
		}
		for _, c := range candidates {
			for _, name := range []string{c, c + "_", "_" + c} {
				want := isExcluded[name]
				if got := back.Excluded(name, ""); got != want {
					t.Fatalf("written filter: Excluded(%q) = %v, want %v\n%s", name, got, want, buf.String())
				}
			}
		}
	})
}

// FuzzMatchPattern compares MatchPattern with the reference matcher in
// pattern_test.go and with path.Match where their syntaxes agree, and checks
// that EscapeName gives a pattern matching exactly the name.
func FuzzMatchPattern(f *testing.F) {
	f.Add("solve*", "solver")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		checkAgainstReferences(t, pattern, name)
		esc := EscapeName(name)
		if err := CheckPattern(esc); err != nil {
			t.Fatalf("EscapeName(%q) = %q: %v", name, esc, err)
		}
		if !MatchPattern(esc, name) {
			t.Fatalf("EscapeName(%q) = %q does not match the name", name, esc)
		}
		if lit, ok := literalOf(esc); !ok || lit != name {
			t.Fatalf("EscapeName(%q) = %q has literal %q, %v", name, esc, lit, ok)
		}
		if MatchPattern(esc, pattern) != (pattern == name) {
			t.Fatalf("EscapeName(%q) = %q matches %q", name, esc, pattern)
		}
	})
}
