package filter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type exclusionCheck struct {
	region, file string
	excluded     bool
}

func TestFilterSemantics(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		checks []exclusionCheck
	}{
		{
			name:  "empty file filters nothing",
			input: "",
			checks: []exclusionCheck{
				{"main", "main.c", false},
				{"", "", false},
			},
		},
		{
			name:   "comments and blank lines only",
			input:  "# nothing here\n\n   # indented comment\n",
			checks: []exclusionCheck{{"main", "", false}},
		},
		{
			name: "default is included",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE foo
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{{"foo", "", true}, {"bar", "", false}, {"foo2", "", false}},
		},
		{
			name: "later INCLUDE re-includes",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *
  INCLUDE solve* main
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"main", "", false}, {"solver", "", false}, {"helper", "", true}, {"", "", true},
			},
		},
		{
			name: "later EXCLUDE wins over earlier INCLUDE",
			input: `SCOREP_REGION_NAMES_BEGIN
  INCLUDE foo
  EXCLUDE f*
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{{"foo", "", true}, {"fa", "", true}, {"bar", "", false}},
		},
		{
			name: "last matching rule decides across literal and wildcard rules",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE foo
  INCLUDE f*
  EXCLUDE fo?
  INCLUDE fox
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"foo", "", true},  // fo? is the last match
				{"fox", "", false}, // INCLUDE fox is later than fo?
				{"fa", "", false},  // only f* matches
				{"x", "", false},
			},
		},
		{
			name: "a repeated literal takes its last rule",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE a b
  INCLUDE a
  INCLUDE b
  EXCLUDE b
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{{"a", "", false}, {"b", "", true}},
		},
		{
			name: "a rule spans lines until the next keyword",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE alpha
          beta   gamma

          # comment between patterns
          delta
  INCLUDE beta
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"alpha", "", true}, {"beta", "", false}, {"gamma", "", true}, {"delta", "", true}, {"epsilon", "", false},
			},
		},
		{
			name:   "keywords and patterns on one line",
			input:  "SCOREP_REGION_NAMES_BEGIN EXCLUDE x* INCLUDE xy SCOREP_REGION_NAMES_END",
			checks: []exclusionCheck{{"xa", "", true}, {"xy", "", false}},
		},
		{
			name: "blocks of the same kind append their rules",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE a*
SCOREP_REGION_NAMES_END
SCOREP_REGION_NAMES_BEGIN
  INCLUDE ab
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{{"aa", "", true}, {"ab", "", false}},
		},
		{
			name: "file block excludes regions of matching files",
			input: `SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */third_party/*
  INCLUDE */third_party/keep.c
SCOREP_FILE_NAMES_END`,
			checks: []exclusionCheck{
				{"f", "/src/third_party/lib.c", true},
				{"f", "/src/third_party/keep.c", false},
				{"f", "/src/main.c", false},
				{"f", "", false}, // unknown file: file rules do not apply
			},
		},
		{
			name: "file OR region: INCLUDE of a name does not save an excluded file",
			input: `SCOREP_FILE_NAMES_BEGIN
  EXCLUDE *.h
SCOREP_FILE_NAMES_END
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE tiny_*
  INCLUDE inline_hot
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"inline_hot", "vec.h", true},
				{"inline_hot", "vec.c", false},
				{"tiny_add", "vec.c", true},
				{"tiny_add", "", true},
				{"main", "main.c", false},
			},
		},
		{
			name: "file patterns do not apply to region names and vice versa",
			input: `SCOREP_FILE_NAMES_BEGIN
  EXCLUDE main
SCOREP_FILE_NAMES_END`,
			checks: []exclusionCheck{{"main", "other.c", false}, {"other", "main", true}},
		},
		{
			name: "MANGLED and DEMANGLED match the one name",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE MANGLED _Z3foov
  INCLUDE DEMANGLED keep
  EXCLUDE _Z3bar* MANGLED _Z3baz*
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"_Z3foov", "", true}, {"keep", "", false}, {"_Z3barv", "", true}, {"_Z3bazv", "", true},
			},
		},
		{
			name: "escapes and comments",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE foo\ bar a\#b \* \\ \EXCLUDE # c* is a comment
  EXCLUDE tail#comment
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"foo bar", "", true}, {"a#b", "", true}, {"*", "", true}, {`\`, "", true},
				{"EXCLUDE", "", true}, {"tail", "", true},
				{"foo", "", false}, {"bar", "", false}, {"ab", "", false}, {"x", "", false}, {"comment", "", false},
				{"c", "", false}, {"cx", "", false}, {"tail#comment", "", false},
			},
		},
		{
			name: "bracket expressions",
			input: `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE mpi_[a-c]* x[!0-9] [[:upper:]][[:digit:]]
SCOREP_REGION_NAMES_END`,
			checks: []exclusionCheck{
				{"mpi_bcast", "", true}, {"mpi_send", "", false},
				{"xa", "", true}, {"x1", "", false},
				{"A1", "", true}, {"a1", "", false},
			},
		},
		{
			name:   "CRLF line endings and tabs",
			input:  "SCOREP_REGION_NAMES_BEGIN\r\n\tEXCLUDE\tfoo\r\n\tbar\r\nSCOREP_REGION_NAMES_END\r\n",
			checks: []exclusionCheck{{"foo", "", true}, {"bar", "", true}, {"foo\r", "", false}},
		},
		{
			name:   "no final newline",
			input:  "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE foo\nSCOREP_REGION_NAMES_END",
			checks: []exclusionCheck{{"foo", "", true}},
		},
		{
			name:   "empty block",
			input:  "SCOREP_REGION_NAMES_BEGIN\nSCOREP_REGION_NAMES_END\n",
			checks: []exclusionCheck{{"foo", "", false}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("test.filter", strings.NewReader(tc.input))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, c := range tc.checks {
				if got := f.Excluded(c.region, c.file); got != c.excluded {
					t.Errorf("Excluded(%q, %q) = %v, want %v", c.region, c.file, got, c.excluded)
				}
			}
		})
	}
}

func TestNilAndZeroFilterExcludeNothing(t *testing.T) {
	var nilFilter *Filter
	if nilFilter.Excluded("main", "main.c") {
		t.Error("nil *Filter excluded a region")
	}
	var zero Filter
	if zero.Excluded("main", "main.c") {
		t.Error("zero Filter excluded a region")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		line   int
		column int
		reason string
	}{
		{"pattern outside any block", "foo\n", 1, 1, `pattern "foo" outside`},
		{"rule outside any block", "\n# comment\n  EXCLUDE foo\n", 3, 3, "EXCLUDE outside"},
		{"pattern before EXCLUDE", "SCOREP_REGION_NAMES_BEGIN\n  foo\nSCOREP_REGION_NAMES_END\n", 2, 3, `pattern "foo" before EXCLUDE or INCLUDE`},
		{"EXCLUDE without pattern before END", "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n", 2, 3, "EXCLUDE without a pattern"},
		{"INCLUDE without pattern before EXCLUDE", "SCOREP_REGION_NAMES_BEGIN\n  INCLUDE # none\n  EXCLUDE x\nSCOREP_REGION_NAMES_END\n", 2, 3, "INCLUDE without a pattern"},
		{"EXCLUDE MANGLED without pattern", "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE MANGLED\nSCOREP_REGION_NAMES_END\n", 2, 1, "EXCLUDE without a pattern"},
		{"missing END", "# header\nSCOREP_REGION_NAMES_BEGIN\n  EXCLUDE foo\n", 2, 1, "not closed by SCOREP_REGION_NAMES_END"},
		{"missing file END", "SCOREP_FILE_NAMES_BEGIN EXCLUDE *.h", 1, 1, "not closed by SCOREP_FILE_NAMES_END"},
		{"wrong END", "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE foo\nSCOREP_FILE_NAMES_END\n", 3, 1, "SCOREP_FILE_NAMES_END inside the SCOREP_REGION_NAMES block opened at line 1"},
		{"END without BEGIN", "\n\nSCOREP_REGION_NAMES_END\n", 3, 1, "without SCOREP_REGION_NAMES_BEGIN"},
		{"nested BEGIN", "SCOREP_FILE_NAMES_BEGIN\n  SCOREP_REGION_NAMES_BEGIN\n", 2, 3, "inside the SCOREP_FILE_NAMES block opened at line 1"},
		{"lower-case keyword", "SCOREP_REGION_NAMES_BEGIN\n  exclude foo\n", 2, 3, `unknown keyword "exclude"`},
		{"misspelt END inside a rule", "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE foo\nSCOREP_REGION_NAME_END\n", 3, 1, `unknown keyword "SCOREP_REGION_NAME_END"`},
		{"unknown SCOREP keyword", "SCOREP_SOMETHING_BEGIN\n", 1, 1, "unknown keyword"},
		{"unterminated bracket", "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE ok foo[a\n", 2, 17, "unterminated bracket expression"},
		{"bracket split by white space", "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE [a b]\n", 2, 10, "unterminated bracket expression"},
		{"reversed range", "SCOREP_REGION_NAMES_BEGIN\nINCLUDE x[z-a]\n", 2, 11, "reversed range"},
		{"unknown class", "SCOREP_REGION_NAMES_BEGIN\nINCLUDE [[:nope:]]\n", 2, 10, "unknown character class"},
		{"backslash at end of line", "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE foo\\\nbar\n", 2, 12, "backslash at end of line"},
		{"MANGLED in a file block", "SCOREP_FILE_NAMES_BEGIN\nEXCLUDE MANGLED x\n", 2, 9, "MANGLED is only allowed"},
		{"MANGLED before EXCLUDE", "SCOREP_REGION_NAMES_BEGIN\nMANGLED\n", 2, 1, "MANGLED is only allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("bad.filter", strings.NewReader(tc.input))
			if err == nil {
				t.Fatalf("Parse accepted %q", tc.input)
			}
			if f != nil {
				t.Errorf("Parse returned a filter with the error")
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
			}
			if se.File != "bad.filter" || se.Line != tc.line || se.Column != tc.column || !strings.Contains(se.Reason, tc.reason) {
				t.Errorf("got %q, want bad.filter:%d:%d with reason containing %q", err, tc.line, tc.column, tc.reason)
			}
			want := fmt.Sprintf("bad.filter:%d:%d: ", tc.line, tc.column)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q does not start with %q", err, want)
			}
		})
	}
}

func TestParsePatternErrorUnwraps(t *testing.T) {
	_, err := Parse("x", strings.NewReader("SCOREP_REGION_NAMES_BEGIN EXCLUDE a[b"))
	var perr *PatternError
	if !errors.As(err, &perr) || perr.Pattern != "a[b" || perr.Offset != 1 {
		t.Fatalf("error %v does not unwrap to the PatternError of \"a[b\"", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("device on fire") }

func TestParseReadError(t *testing.T) {
	_, err := Parse("remote.filter", failingReader{})
	if err == nil || !strings.Contains(err.Error(), "remote.filter") || !strings.Contains(err.Error(), "device on fire") {
		t.Fatalf("read error not reported with the name: %v", err)
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.filter")
	content := "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE tiny_*\nSCOREP_REGION_NAMES_END\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Excluded("tiny_add", "") || f.Excluded("solve", "") {
		t.Error("ParseFile gave a filter with the wrong rules")
	}

	missing := filepath.Join(dir, "missing.filter")
	if _, err := ParseFile(missing); err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want an os.ErrNotExist naming %s", err, missing)
	}

	bad := filepath.Join(dir, "bad.filter")
	if err := os.WriteFile(bad, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2:") {
		t.Errorf("syntax error in a file: got %v, want it to start with %s:2:", err, bad)
	}
}

// benchFilter builds a filter like one `hmbtrace score -g` writes (many
// literal names) followed by a few hand-written wildcard rules.
func benchFilter(tb testing.TB, literals int) *Filter {
	var b strings.Builder
	b.WriteString("SCOREP_FILE_NAMES_BEGIN\n EXCLUDE */third_party/*\nSCOREP_FILE_NAMES_END\n")
	b.WriteString("SCOREP_REGION_NAMES_BEGIN\n EXCLUDE\n")
	for i := range literals {
		fmt.Fprintf(&b, "  region_%d\n", i)
	}
	b.WriteString(" INCLUDE region_1*\n EXCLUDE [[:upper:]]*_tmp mpi_?\nSCOREP_REGION_NAMES_END\n")
	f, err := Parse("bench.filter", strings.NewReader(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func TestExcludedDoesNotAllocate(t *testing.T) {
	f := benchFilter(t, 1000)
	checks := []exclusionCheck{
		{"region_500", "/src/main.c", true},
		{"region_100", "/src/main.c", false}, // re-included by region_1*
		{"Solver_tmp", "", true},
		{"mpi_x", "", true},
		{"main", "/src/main.c", false},
		{"main", "/src/third_party/z.c", true},
	}
	for _, c := range checks {
		if got := f.Excluded(c.region, c.file); got != c.excluded {
			t.Errorf("Excluded(%q, %q) = %v, want %v", c.region, c.file, got, c.excluded)
		}
		if n := testing.AllocsPerRun(100, func() { f.Excluded(c.region, c.file) }); n != 0 {
			t.Errorf("Excluded(%q, %q) allocates %v times", c.region, c.file, n)
		}
	}
}

func BenchmarkExcluded(b *testing.B) {
	for _, literals := range []int{10, 10000} {
		f := benchFilter(b, literals)
		names := []string{"region_5", "region_12345678", "Solver_tmp", "main"}
		b.Run(fmt.Sprintf("literals=%d", literals), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				f.Excluded(names[i%len(names)], "/src/main.c")
			}
			b.ReportMetric(float64(literals+4), "rules")
		})
	}
}
