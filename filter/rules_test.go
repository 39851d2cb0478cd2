package filter

import (
	"reflect"
	"strings"
	"testing"
)

// decideByRules applies exported rules as an outside tool does: the last
// matching rule decides.
func decideByRules(rules []Rule, name string) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		if MatchPattern(rules[i].Pattern, name) {
			return rules[i].Exclude
		}
	}
	return false
}

func TestRulesDecideAsExcluded(t *testing.T) {
	const src = `SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *
  INCLUDE solve* main Dom::x()\ const
  EXCLUDE solve_tiny a\*b
  INCLUDE main
SCOREP_REGION_NAMES_END
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */third_party/*
  INCLUDE */third_party/keep.c
SCOREP_FILE_NAMES_END
`
	f, err := Parse("test", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{true, "*"}, {false, "solve*"}, {false, `Dom::x()\ const`},
		{true, "solve_tiny"}, {true, `a\*b`}, {false, "main"},
	}
	if got := f.RegionRules(); !reflect.DeepEqual(got, want) {
		t.Errorf("RegionRules = %+v, want %+v", got, want)
	}
	for _, name := range []string{"main", "solve", "solver(int)", "solve_tiny", "Dom::x() const", "a*b", "axb", "other", ""} {
		if got, want := decideByRules(f.RegionRules(), name), f.Excluded(name, ""); got != want {
			t.Errorf("%q: rules say excluded=%v, Excluded says %v", name, got, want)
		}
	}
	for _, file := range []string{"/src/third_party/x.c", "/src/third_party/keep.c", "/src/a.c"} {
		got := decideByRules(f.FileRules(), file)
		want := f.Excluded("main", file) // main is included by name
		if got != want {
			t.Errorf("file %q: rules say excluded=%v, Excluded says %v", file, got, want)
		}
	}
	var nilFilter *Filter
	if nilFilter.RegionRules() != nil || nilFilter.FileRules() != nil {
		t.Error("a nil Filter has rules")
	}
}
