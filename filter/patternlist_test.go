package filter

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePatternList(t *testing.T) {
	tests := []struct {
		list     string
		len      int
		str      string
		match    []string
		nonMatch []string
	}{
		{"", 0, "", nil, []string{"", "a"}},
		{"  \t ", 0, "", nil, []string{"", " "}},
		{"solve*,mpi_?", 2, "solve*,mpi_?", []string{"solve", "solver", "mpi_x"}, []string{"mpi_", "mpi_xy", "xsolve"}},
		{" solve* ,\tmpi_? ", 2, "solve*,mpi_?", []string{"solver", "mpi_x"}, []string{" solver"}},
		{"main", 1, "main", []string{"main"}, []string{"main2", "mai"}},
		{`a\,b`, 1, `a\,b`, []string{"a,b"}, []string{"a", "b"}},
		{"[,;]x,y", 2, "[,;]x,y", []string{",x", ";x", "y"}, []string{"x"}},
		{`tail\ `, 1, `tail\ `, []string{"tail "}, []string{"tail"}},
		{"!$omp parallel @*", 1, "!$omp parallel @*", []string{"!$omp parallel @solver.c:12"}, []string{"!$omp for @solver.c:20"}},
		{"a,a", 2, "a,a", []string{"a"}, []string{"aa"}},
	}
	for _, tc := range tests {
		p, err := ParsePatternList(tc.list)
		if err != nil {
			t.Errorf("ParsePatternList(%q): %v", tc.list, err)
			continue
		}
		if p.Len() != tc.len || p.String() != tc.str {
			t.Errorf("ParsePatternList(%q) = %d patterns %q, want %d %q", tc.list, p.Len(), p.String(), tc.len, tc.str)
		}
		for _, name := range tc.match {
			if !p.Match(name) {
				t.Errorf("ParsePatternList(%q).Match(%q) = false", tc.list, name)
			}
		}
		for _, name := range tc.nonMatch {
			if p.Match(name) {
				t.Errorf("ParsePatternList(%q).Match(%q) = true", tc.list, name)
			}
		}
		again, err := ParsePatternList(p.String())
		if err != nil || again.String() != p.String() {
			t.Errorf("String() %q does not parse back to itself: %v", p.String(), err)
		}
	}
	var zero Patterns
	if zero.Match("") || zero.Match("x") || zero.Len() != 0 {
		t.Error("zero Patterns matches something")
	}
}

func TestParsePatternListErrors(t *testing.T) {
	tests := []struct {
		list string
		want []string
	}{
		{"a,,b", []string{"item 2 is empty"}},
		{"a,", []string{"item 2 is empty"}},
		{",a", []string{"item 1 is empty"}},
		{"a, ,b", []string{"item 2 is empty"}},
		{"solve*,foo[", []string{"item 2", `"foo["`, "unterminated bracket expression"}},
		{"x[z-a]", []string{"item 1", "reversed range"}},
		{`a\`, []string{"item 1", "escape character at end of pattern"}},
	}
	for _, tc := range tests {
		p, err := ParsePatternList(tc.list)
		if err == nil {
			t.Errorf("ParsePatternList(%q) accepted: %q", tc.list, p.String())
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParsePatternList(%q) error %q does not contain %q", tc.list, err, w)
			}
		}
		if !strings.Contains(err.Error(), tc.list) {
			t.Errorf("error %q does not quote the list", err)
		}
	}
	_, err := ParsePatternList("ok,bad[")
	var perr *PatternError
	if !errors.As(err, &perr) || perr.Pattern != "bad[" {
		t.Errorf("error %v does not unwrap to the PatternError of the bad item", err)
	}
}

func TestPatternsMatchDoesNotAllocate(t *testing.T) {
	p, err := ParsePatternList("solve*,mpi_?,exact_name,[[:upper:]]*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"solver", "exact_name", "Zeta", "nothing"} {
		if n := testing.AllocsPerRun(100, func() { p.Match(name) }); n != 0 {
			t.Errorf("Match(%q) allocates %v times", name, n)
		}
	}
}
