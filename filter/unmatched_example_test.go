package filter_test

import (
	"fmt"
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
)

// A filter written from a build without -g names a Fortran procedure by
// its symbol, randlc_; the region is randlc, and the rule filters nothing.
func ExampleMatcher() {
	f, err := filter.Parse("npb.filter", strings.NewReader(
		"SCOREP_REGION_NAMES_BEGIN EXCLUDE randlc_ vranlc SCOREP_REGION_NAMES_END"))
	if err != nil {
		fmt.Println(err)
		return
	}
	mt := filter.NewMatcher(f)
	for _, name := range []string{"main program", "randlc", "vranlc", "x_solve"} {
		mt.Region(name, "")
	}
	for _, r := range mt.Unmatched() {
		fmt.Println("matched no region:", r)
	}
	// Output:
	// matched no region: EXCLUDE randlc_ (SCOREP_REGION_NAMES)
}
