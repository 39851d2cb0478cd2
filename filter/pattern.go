package filter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// PatternError reports a malformed wildcard pattern.
type PatternError struct {
	Pattern string
	Offset  int // byte offset in Pattern where the problem starts
	Reason  string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("pattern %q: %s at offset %d", e.Pattern, e.Reason, e.Offset)
}

// CheckPattern reports whether pattern is well formed; the error is a
// *PatternError naming the offset and the reason.
func CheckPattern(pattern string) error {
	if pr := checkPattern(pattern); pr.kind != noProblem {
		return pr.error(pattern)
	}
	return nil
}

// problem describes what is wrong with a pattern without allocating; error
// turns it into a *PatternError when someone wants to read it.
type problem struct {
	kind       problemKind
	offset     int // where the faulty element starts
	end        int // where it ends, for the kinds that quote it
	bodyOffset int // start of the name inside [:name:], [.c.] or [=c=]
}

type problemKind int8

const (
	noProblem problemKind = iota
	trailingEscape
	unterminatedBracket
	unterminatedElement
	unknownClass
	notSingleChar
	classEndsRange
	reversedRange
)

func (pr problem) error(p string) *PatternError {
	e := &PatternError{Pattern: p, Offset: pr.offset}
	switch pr.kind {
	case trailingEscape:
		e.Reason = "escape character at end of pattern"
	case unterminatedBracket:
		e.Reason = "unterminated bracket expression"
	case unterminatedElement:
		e.Reason = fmt.Sprintf("unterminated %q", p[pr.offset:pr.offset+2])
	case unknownClass:
		e.Reason = fmt.Sprintf("unknown character class %q", p[pr.bodyOffset:pr.end-2])
	case notSingleChar:
		e.Reason = fmt.Sprintf("%q must name a single character", p[pr.offset:pr.end])
	case classEndsRange:
		e.Reason = "character class cannot end a range"
	case reversedRange:
		e.Reason = fmt.Sprintf("reversed range %q", p[pr.offset:pr.end])
	}
	return e
}

// MatchPattern reports whether name matches the wildcard pattern (the rules
// are in the package documentation). A malformed pattern matches nothing; use
// CheckPattern to learn why. MatchPattern does not allocate.
func MatchPattern(pattern, name string) bool {
	return checkPattern(pattern).kind == noProblem && matchChecked(pattern, name)
}

// checkPattern finds the first problem of a pattern, if any.
func checkPattern(p string) problem {
	for i := 0; i < len(p); {
		switch p[i] {
		case '\\':
			if i+1 == len(p) {
				return problem{kind: trailingEscape, offset: i}
			}
			i += 2
		case '[':
			_, end, pr := matchBracket(p, i, noChar)
			if pr.kind != noProblem {
				return pr
			}
			i = end
		default:
			i++
		}
	}
	return problem{}
}

// matchChecked matches name against a pattern already accepted by
// checkPattern. It is the classic backtracking glob matcher that only
// remembers the last '*': every other element consumes a length fixed by the
// name at that position, so retrying from the last star is enough and the
// cost is O(len(pattern)*len(name)) without allocation.
func matchChecked(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				pi++
				starP, starS = pi, si
				continue
			case '?':
				if si < len(s) {
					_, w := utf8.DecodeRuneInString(s[si:])
					pi++
					si += w
					continue
				}
			case '[':
				if si < len(s) {
					r, w := utf8.DecodeRuneInString(s[si:])
					ok, end, pr := matchBracket(p, pi, r)
					if pr.kind != noProblem {
						return false
					}
					if ok {
						pi = end
						si += w
						continue
					}
				}
			case '\\':
				if pi+1 < len(p) && si < len(s) && p[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			default:
				if si < len(s) && p[pi] == s[si] {
					pi++
					si++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		// Mismatch: let the last star swallow one more byte and retry.
		if starP >= 0 && starS < len(s) {
			starS++
			pi, si = starP, starS
			continue
		}
		return false
	}
}

// noChar is a character no bracket expression contains; matchBracket with it
// only validates.
const noChar rune = -1

// matchBracket parses the bracket expression starting at p[start] == '[' and
// reports whether it contains c, and the offset just after its closing ']'.
func matchBracket(p string, start int, c rune) (matched bool, end int, pr problem) {
	i := start + 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	for {
		if i >= len(p) {
			return false, 0, problem{kind: unterminatedBracket, offset: start}
		}
		// A ']' right after '[' or '[!' is a member, as in fnmatch.
		if p[i] == ']' && !first {
			return matched != negate, i + 1, problem{}
		}
		first = false
		lo, class, next, pr := bracketElement(p, i)
		if pr.kind != noProblem {
			return false, 0, pr
		}
		if class != noClass {
			matched = matched || inClass(class, c)
			i = next
			continue
		}
		if next+1 < len(p) && p[next] == '-' && p[next+1] != ']' {
			hi, hiClass, after, pr := bracketElement(p, next+1)
			if pr.kind != noProblem {
				return false, 0, pr
			}
			if hiClass != noClass {
				return false, 0, problem{kind: classEndsRange, offset: next + 1}
			}
			if lo > hi {
				return false, 0, problem{kind: reversedRange, offset: i, end: after}
			}
			matched = matched || (lo <= c && c <= hi)
			i = after
			continue
		}
		matched = matched || lo == c
		i = next
	}
}

// bracketElement parses one element of a bracket expression at p[i]: a
// character (possibly escaped), a collating symbol [.c.] or equivalence class
// [=c=] of a single character, or a character class [:name:].
func bracketElement(p string, i int) (char rune, class charClass, next int, pr problem) {
	switch {
	case p[i] == '[' && i+1 < len(p) && (p[i+1] == ':' || p[i+1] == '=' || p[i+1] == '.'):
		delim := p[i+1]
		closeAt := -1
		for j := i + 2; j+1 < len(p); j++ {
			if p[j] == delim && p[j+1] == ']' {
				closeAt = j
				break
			}
		}
		if closeAt < 0 {
			return 0, noClass, 0, problem{kind: unterminatedElement, offset: i}
		}
		body := p[i+2 : closeAt]
		if delim == ':' {
			cl := lookupClass(body)
			if cl == noClass {
				return 0, noClass, 0, problem{kind: unknownClass, offset: i, end: closeAt + 2, bodyOffset: i + 2}
			}
			return 0, cl, closeAt + 2, problem{}
		}
		r, w := utf8.DecodeRuneInString(body)
		if len(body) == 0 || w != len(body) {
			return 0, noClass, 0, problem{kind: notSingleChar, offset: i, end: closeAt + 2}
		}
		return r, noClass, closeAt + 2, problem{}
	case p[i] == '\\':
		if i+1 == len(p) {
			return 0, noClass, 0, problem{kind: trailingEscape, offset: i}
		}
		r, w := utf8.DecodeRuneInString(p[i+1:])
		return r, noClass, i + 1 + w, problem{}
	default:
		r, w := utf8.DecodeRuneInString(p[i:])
		return r, noClass, i + w, problem{}
	}
}

// charClass is a POSIX character class with its "C" locale (ASCII) meaning,
// the locale a measured program runs in unless it calls setlocale.
type charClass int8

const (
	noClass charClass = iota - 1
	classAlnum
	classAlpha
	classBlank
	classCntrl
	classDigit
	classGraph
	classLower
	classPrint
	classPunct
	classSpace
	classUpper
	classXdigit
)

// classNames is indexed by charClass.
var classNames = [...]string{"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "xdigit"}

func lookupClass(name string) charClass {
	for i, n := range classNames {
		if n == name {
			return charClass(i)
		}
	}
	return noClass
}

func inClass(cl charClass, c rune) bool {
	if c < 0 || c > 0x7f {
		return false
	}
	lower := 'a' <= c && c <= 'z'
	upper := 'A' <= c && c <= 'Z'
	digit := '0' <= c && c <= '9'
	switch cl {
	case classAlnum:
		return lower || upper || digit
	case classAlpha:
		return lower || upper
	case classBlank:
		return c == ' ' || c == '\t'
	case classCntrl:
		return c < 0x20 || c == 0x7f
	case classDigit:
		return digit
	case classGraph:
		return 0x21 <= c && c <= 0x7e
	case classLower:
		return lower
	case classPrint:
		return 0x20 <= c && c <= 0x7e
	case classPunct:
		return 0x21 <= c && c <= 0x7e && !lower && !upper && !digit
	case classSpace:
		return c == ' ' || ('\t' <= c && c <= '\r')
	case classUpper:
		return upper
	case classXdigit:
		return digit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
	}
	return false
}

// literalOf returns the name a pattern without wildcards matches (its
// escapes removed) and true, or "", false if the pattern has a wildcard or
// ends in a lone backslash.
func literalOf(p string) (string, bool) {
	escapes := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[':
			return "", false
		case '\\':
			if i+1 == len(p) {
				return "", false
			}
			escapes++
			i++
		}
	}
	if escapes == 0 {
		return p, true
	}
	var b strings.Builder
	b.Grow(len(p) - escapes)
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String(), true
}

// EscapeName returns a pattern that matches exactly name, safe to use both as
// a token in a filter file and as an item of a pattern list: wildcard
// characters, '\\', '#', ',' and ASCII white space get a backslash, and so
// does the first character of a name that a filter file would read as a
// keyword. A name containing a line break still cannot go into a filter file.
func EscapeName(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 4)
	if keywordLike(name) {
		b.WriteByte('\\')
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case '*', '?', '[', '\\', '#', ',', ' ', '\t', '\n', '\v', '\f', '\r':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
