package filter

import "sort"

// ruleList holds an ordered list of INCLUDE/EXCLUDE rules in which the last
// matching rule decides. Rules without wildcards (the bulk of a generated
// filter) go into a map keyed by the name they match, so a filter of
// thousands of names costs one map lookup plus a walk over the wildcard
// rules that come after the last literal hit.
type ruleList struct {
	literal  map[string]literalRule
	wildcard []wildcardRule // in file order
	count    int
}

type literalRule struct {
	index   int
	exclude bool
}

type wildcardRule struct {
	pattern string // checked by checkPattern
	index   int
	exclude bool
}

// add appends a rule; pattern must have passed checkPattern.
func (l *ruleList) add(pattern string, exclude bool) {
	index := l.count
	l.count++
	if name, ok := literalOf(pattern); ok {
		if l.literal == nil {
			l.literal = make(map[string]literalRule)
		}
		// A later rule for the same name overrides an earlier one.
		l.literal[name] = literalRule{index: index, exclude: exclude}
		return
	}
	l.wildcard = append(l.wildcard, wildcardRule{pattern: pattern, index: index, exclude: exclude})
}

// decide reports whether any rule matches name and, if so, whether the last
// matching rule is an EXCLUDE.
func (l *ruleList) decide(name string) (matched, exclude bool) {
	last := -1
	if r, ok := l.literal[name]; ok {
		last, matched, exclude = r.index, true, r.exclude
	}
	for i := len(l.wildcard) - 1; i >= 0 && l.wildcard[i].index > last; i-- {
		if matchChecked(l.wildcard[i].pattern, name) {
			return true, l.wildcard[i].exclude
		}
	}
	return matched, exclude
}

// Rule is one INCLUDE or EXCLUDE rule of a filter file.
type Rule struct {
	Exclude bool
	// Pattern is an fnmatch(3) pattern without flags, as Score-P and
	// MatchPattern read it: a name without wildcards comes back escaped.
	Pattern string
}

// RegionRules returns the SCOREP_REGION_NAMES rules in file order, for a
// tool that applies them elsewhere (hmbtrace-instrument's GCC plugin): the
// last rule whose pattern matches a name decides, and a name none matches
// is included. A rule that a later one for the same name overrides is
// left out.
func (f *Filter) RegionRules() []Rule {
	if f == nil {
		return nil
	}
	return f.regions.rules()
}

// FileRules returns the SCOREP_FILE_NAMES rules as RegionRules does.
func (f *Filter) FileRules() []Rule {
	if f == nil {
		return nil
	}
	return f.files.rules()
}

func (l *ruleList) rules() []Rule {
	type indexed struct {
		index int
		rule  Rule
	}
	all := make([]indexed, 0, len(l.literal)+len(l.wildcard))
	for name, r := range l.literal {
		all = append(all, indexed{r.index, Rule{Exclude: r.exclude, Pattern: EscapeName(name)}})
	}
	for _, r := range l.wildcard {
		all = append(all, indexed{r.index, Rule{Exclude: r.exclude, Pattern: r.pattern}})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].index < all[j].index })
	out := make([]Rule, len(all))
	for i, r := range all {
		out[i] = r.rule
	}
	return out
}
