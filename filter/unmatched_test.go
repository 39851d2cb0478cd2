package filter

import (
	"reflect"
	"strings"
	"testing"
)

func TestMatcherUnmatched(t *testing.T) {
	f, err := Parse("f", strings.NewReader(`SCOREP_REGION_NAMES_BEGIN
  EXCLUDE randlc_ x_solve*
  INCLUDE main a\ b
SCOREP_REGION_NAMES_END
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */gen/* */none/*
SCOREP_FILE_NAMES_END
`))
	if err != nil {
		t.Fatal(err)
	}
	mt := NewMatcher(f)
	for _, r := range [][2]string{{"randlc", "/src/randlc.f"}, {"x_solve", "/src/gen/x.f"}, {"main", ""}, {"a b", ""}} {
		mt.Region(r[0], r[1])
	}
	want := []RuleUse{{Rule: Rule{Exclude: true, Pattern: "randlc_"}}, {Rule: Rule{Exclude: true, Pattern: "*/none/*"}, File: true}}
	if got := mt.Unmatched(); !reflect.DeepEqual(got, want) {
		t.Errorf("unmatched %+v, want %+v", got, want)
	}
	if got := want[0].String(); got != "EXCLUDE randlc_ (SCOREP_REGION_NAMES)" {
		t.Errorf("String() = %q", got)
	}
	if got := NewMatcher(nil).Unmatched(); got != nil {
		t.Errorf("no filter: %+v", got)
	}
}
