package filter

import (
	"fmt"
	"strings"
)

// listSpace is the white space dropped around the items of a pattern list.
const listSpace = " \t\n\v\f\r"

// Patterns is a list of wildcard patterns, as given in HMB_METRICS_REGIONS or
// to `hmbtrace variation -sync`. A name matches the list if it matches any
// pattern. The zero value matches nothing.
type Patterns struct {
	source []string
	rules  ruleList
}

// ParsePatternList parses a comma-separated list of wildcard patterns such as
// "solve*, mpi_?". White space around an item is dropped; a comma or white
// space that belongs to a pattern is escaped with a backslash (a comma inside
// a bracket expression needs no escape). An empty or blank string is an empty
// list; an empty item or a malformed pattern is an error naming the item.
func ParsePatternList(s string) (Patterns, error) {
	var list Patterns
	if strings.TrimLeft(s, listSpace) == "" {
		return list, nil
	}
	for item, i := 1, 0; ; item++ {
		// first and last delimit the item without surrounding white space;
		// an escaped blank counts as part of the pattern.
		first, last := -1, -1
		for i < len(s) && s[i] != ',' {
			start := i
			switch {
			case s[i] == '\\' && i+1 < len(s):
				i += 2
			case s[i] == '[':
				if _, end, pr := matchBracket(s, i, noChar); pr.kind == noProblem {
					i = end
				} else {
					i++ // checkPattern below reports it for the item
				}
			case strings.IndexByte(listSpace, s[i]) >= 0:
				i++
				continue
			default:
				i++
			}
			if first < 0 {
				first = start
			}
			last = i
		}
		if first < 0 {
			return Patterns{}, fmt.Errorf("pattern list %q: item %d is empty", s, item)
		}
		pattern := s[first:last]
		if pr := checkPattern(pattern); pr.kind != noProblem {
			return Patterns{}, fmt.Errorf("pattern list %q: item %d: %w", s, item, pr.error(pattern))
		}
		list.source = append(list.source, pattern)
		list.rules.add(pattern, true)
		if i >= len(s) {
			return list, nil
		}
		i++ // the comma
	}
}

// Match reports whether name matches any pattern of the list. It does not
// allocate.
func (p Patterns) Match(name string) bool {
	matched, _ := p.rules.decide(name)
	return matched
}

// Len returns the number of patterns in the list.
func (p Patterns) Len() int { return len(p.source) }

// String returns the list in the form ParsePatternList accepts.
func (p Patterns) String() string { return strings.Join(p.source, ",") }
