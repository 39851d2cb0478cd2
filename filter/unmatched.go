package filter

import "fmt"

// A rule whose pattern matches no region is almost always a mistake: a
// name spelled as another build spells it (a Fortran procedure's symbol
// randlc_ where the region is randlc), a function that was renamed, a
// filter written for another program. It filters nothing and says nothing,
// so the tools that apply a filter say it once, at the end.

// RuleUse is one rule of a filter file and the block it is in.
type RuleUse struct {
	Rule
	File bool // a SCOREP_FILE_NAMES rule; else a SCOREP_REGION_NAMES one
}

// String returns the rule as the filter file has it, with its block.
func (u RuleUse) String() string {
	kw, block := kwInclude, "SCOREP_REGION_NAMES"
	if u.Exclude {
		kw = kwExclude
	}
	if u.File {
		block = "SCOREP_FILE_NAMES"
	}
	return fmt.Sprintf("%s %s (%s)", kw, u.Pattern, block)
}

// Matcher finds the rules of a filter that match none of the names shown
// to it: Region for each region the program has, then Unmatched. A Matcher
// is not safe for concurrent use.
type Matcher struct {
	region, file []bool // matched, by the index of RegionRules, FileRules
	regionRules  []Rule
	fileRules    []Rule
	left         int // rules not matched yet
}

// NewMatcher returns a Matcher of f's rules; f may be nil (no rules).
func NewMatcher(f *Filter) *Matcher {
	mt := &Matcher{regionRules: f.RegionRules(), fileRules: f.FileRules()}
	mt.region = make([]bool, len(mt.regionRules))
	mt.file = make([]bool, len(mt.fileRules))
	mt.left = len(mt.regionRules) + len(mt.fileRules)
	return mt
}

// Region shows the matcher a region's name and source file ("" if
// unknown). Each call costs a match of every rule not matched yet: once all
// have matched, nothing.
func (mt *Matcher) Region(name, file string) {
	if mt.left == 0 {
		return
	}
	mt.left -= mark(mt.regionRules, mt.region, name)
	if file != "" {
		mt.left -= mark(mt.fileRules, mt.file, file)
	}
}

// mark sets seen[i] for each rule not seen yet whose pattern matches name
// and returns how many it set.
func mark(rules []Rule, seen []bool, name string) int {
	n := 0
	for i, r := range rules {
		if !seen[i] && matchChecked(r.Pattern, name) {
			seen[i] = true
			n++
		}
	}
	return n
}

// Unmatched returns the rules that matched none of the names shown, region
// rules first, each in file order.
func (mt *Matcher) Unmatched() []RuleUse {
	var out []RuleUse
	for i, r := range mt.regionRules {
		if !mt.region[i] {
			out = append(out, RuleUse{Rule: r})
		}
	}
	for i, r := range mt.fileRules {
		if !mt.file[i] {
			out = append(out, RuleUse{Rule: r, File: true})
		}
	}
	return out
}
