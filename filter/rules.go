package filter

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
