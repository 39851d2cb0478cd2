package filter

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// refElem is one element of a pattern as the reference matcher sees it.
type refElem struct {
	kind byte // '*', '?', 'l' (literal byte), 'c' (bracket expression)
	lit  byte
	set  func(rune) bool
}

// refClasses spells the POSIX classes out as character lists, independently
// of inClass.
var refClasses = func() map[string]string {
	var cntrl, print strings.Builder
	for c := 0; c < 0x80; c++ {
		if c < 0x20 || c == 0x7f {
			cntrl.WriteByte(byte(c))
		} else {
			print.WriteByte(byte(c))
		}
	}
	upper := "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower := "abcdefghijklmnopqrstuvwxyz"
	digit := "0123456789"
	punct := "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	return map[string]string{
		"alnum": upper + lower + digit, "alpha": upper + lower, "blank": " \t",
		"cntrl": cntrl.String(), "digit": digit, "graph": upper + lower + digit + punct,
		"lower": lower, "print": print.String(), "punct": punct, "space": " \t\n\v\f\r",
		"upper": upper, "xdigit": digit + "abcdefABCDEF",
	}
}()

// refCompile is a straightforward reading of the documented pattern syntax;
// ok is false for a malformed pattern.
func refCompile(p string) (elems []refElem, ok bool) {
	for i := 0; i < len(p); {
		switch p[i] {
		case '*':
			elems = append(elems, refElem{kind: '*'})
			i++
		case '?':
			elems = append(elems, refElem{kind: '?'})
			i++
		case '\\':
			if i+1 >= len(p) {
				return nil, false
			}
			elems = append(elems, refElem{kind: 'l', lit: p[i+1]})
			i += 2
		case '[':
			set, n, ok := refBracket(p[i:])
			if !ok {
				return nil, false
			}
			elems = append(elems, refElem{kind: 'c', set: set})
			i += n
		default:
			elems = append(elems, refElem{kind: 'l', lit: p[i]})
			i++
		}
	}
	return elems, true
}

// refBracket parses a bracket expression at the start of p and returns its
// membership test and length.
func refBracket(p string) (func(rune) bool, int, bool) {
	pos := 1
	negate := false
	if pos < len(p) && strings.ContainsRune("!^", rune(p[pos])) {
		negate = true
		pos++
	}
	type span struct{ lo, hi rune }
	var spans []span
	var classes []string
	// next reads one element: a character or a class name.
	next := func() (r rune, class string, ok bool) {
		if strings.HasPrefix(p[pos:], "[:") || strings.HasPrefix(p[pos:], "[=") || strings.HasPrefix(p[pos:], "[.") {
			kind := p[pos+1]
			end := strings.Index(p[pos+2:], string(kind)+"]")
			if end < 0 {
				return 0, "", false
			}
			body := p[pos+2 : pos+2+end]
			pos += 2 + end + 2
			if kind == ':' {
				if _, known := refClasses[body]; !known {
					return 0, "", false
				}
				return 0, body, true
			}
			if utf8.RuneCountInString(body) != 1 {
				return 0, "", false
			}
			r, _ := utf8.DecodeRuneInString(body)
			return r, "", true
		}
		if p[pos] == '\\' {
			pos++
			if pos >= len(p) {
				return 0, "", false
			}
		}
		r, w := utf8.DecodeRuneInString(p[pos:])
		pos += w
		return r, "", true
	}
	for count := 0; ; count++ {
		if pos >= len(p) {
			return nil, 0, false
		}
		if p[pos] == ']' && count > 0 {
			pos++
			break
		}
		lo, class, ok := next()
		if !ok {
			return nil, 0, false
		}
		if class != "" {
			classes = append(classes, class)
			continue
		}
		hi := lo
		if pos+1 < len(p) && p[pos] == '-' && p[pos+1] != ']' {
			pos++
			var hiClass string
			hi, hiClass, ok = next()
			if !ok || hiClass != "" || hi < lo {
				return nil, 0, false
			}
		}
		spans = append(spans, span{lo, hi})
	}
	set := func(r rune) bool {
		in := false
		for _, s := range spans {
			in = in || (s.lo <= r && r <= s.hi)
		}
		for _, c := range classes {
			in = in || (r < 0x80 && strings.ContainsRune(refClasses[c], r))
		}
		return in != negate
	}
	return set, pos, true
}

// refMatch matches by memoised recursion over (element, byte offset).
func refMatch(elems []refElem, s string) bool {
	memo := map[[2]int]bool{}
	var m func(e, i int) bool
	m = func(e, i int) bool {
		key := [2]int{e, i}
		if v, ok := memo[key]; ok {
			return v
		}
		res := false
		if e == len(elems) {
			res = i == len(s)
		} else {
			el := elems[e]
			switch el.kind {
			case '*':
				for j := i; j <= len(s) && !res; j++ {
					res = m(e+1, j)
				}
			case 'l':
				res = i < len(s) && s[i] == el.lit && m(e+1, i+1)
			case '?':
				if i < len(s) {
					_, w := utf8.DecodeRuneInString(s[i:])
					res = m(e+1, i+w)
				}
			case 'c':
				if i < len(s) {
					r, w := utf8.DecodeRuneInString(s[i:])
					res = el.set(r) && m(e+1, i+w)
				}
			}
		}
		memo[key] = res
		return res
	}
	return m(0, 0)
}

// checkAgainstReferences compares MatchPattern with the reference matcher
// and, where the syntaxes agree, with path.Match.
func checkAgainstReferences(t *testing.T, pattern, name string) {
	t.Helper()
	elems, refOK := refCompile(pattern)
	err := CheckPattern(pattern)
	if refOK != (err == nil) {
		t.Fatalf("CheckPattern(%q) = %v, reference says valid=%v", pattern, err, refOK)
	}
	got := MatchPattern(pattern, name)
	if !refOK {
		if got {
			t.Fatalf("MatchPattern(%q, %q) = true for a malformed pattern", pattern, name)
		}
		return
	}
	if want := refMatch(elems, name); got != want {
		t.Fatalf("MatchPattern(%q, %q) = %v, reference = %v", pattern, name, got, want)
	}
	// path.Match has the same rules except that '*', '?' and sets stop at
	// '/', '!' does not negate, and there are no [: [= [. elements.
	if !strings.Contains(pattern+name, "/") && !strings.Contains(pattern, "[!") &&
		!strings.Contains(pattern, "[:") && !strings.Contains(pattern, "[=") && !strings.Contains(pattern, "[.") {
		if pm, perr := path.Match(pattern, name); perr == nil && pm != got {
			t.Fatalf("MatchPattern(%q, %q) = %v, path.Match = %v", pattern, name, got, pm)
		}
	}
	if lit, isLit := literalOf(pattern); isLit && (lit == name) != got {
		t.Fatalf("pattern %q has literal %q, but MatchPattern(%q) = %v", pattern, lit, name, got)
	}
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/with/slashes", true},
		{"*", ".hidden", true},
		{"solve*", "solve", true},
		{"solve*", "solver_step", true},
		{"solve*", "xsolve", false},
		{"*_step", "solver_step", true},
		{"*a*b*c*", "xaybzc", true},
		{"*a*b*c*", "xaybz", false},
		{"a*b", "a", false},
		{"mpi_?", "mpi_x", true},
		{"mpi_?", "mpi_", false},
		{"mpi_?", "mpi_xy", false},
		{"?", "é", true},    // one rune
		{"??", "é", false},  // not two
		{"?", "\xff", true}, // one invalid byte is one character
		{"é", "é", true},    // literal bytes
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[!a-c]x", "dx", true},
		{"[^a-c]x", "ax", false},
		{"[]]", "]", true},
		{"[!]]", "]", false},
		{"[!]]", "a", true},
		{"[a-]", "-", true},
		{"[-a]", "-", true},
		{"[\\]]", "]", true},
		{"[[:digit:]]*", "7up", true},
		{"[[:digit:]]*", "up", false},
		{"[[:alpha:]_][[:alnum:]_]*", "_x9", true},
		{"[[:upper:]]", "é", false}, // classes are ASCII
		{"[[:punct:]]", "$", true},
		{"[[:space:]]", "\t", true},
		{"[[.a.]-c]", "b", true},
		{"[[=x=]]", "x", true},
		{"[é-ë]", "ê", true},
		{"[!a]", "é", true},
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"a\\ b", "a b", true},
		{"\\#", "#", true},
		{"\\\\", "\\", true},
		{"a]", "a]", true},
		{"***", "", true},
		{"*?", "", false},
		{"*?", "é", true},
		// Malformed patterns match nothing.
		{"[a", "[a", false},
		{"a\\", "a\\", false},
		{"[z-a]", "m", false},
		{"[[:nope:]]", "n", false},
	}
	for _, tc := range tests {
		if got := MatchPattern(tc.pattern, tc.name); got != tc.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
		checkAgainstReferences(t, tc.pattern, tc.name)
	}
}

// TestMatchPatternExhaustive checks every short pattern over a small
// alphabet against the references on every short name.
func TestMatchPatternExhaustive(t *testing.T) {
	patternAlphabet := []string{"a", "b", "*", "?", "[", "]", "!", "-", "\\", "é"}
	nameAlphabet := []string{"a", "b", "-", "]", "é"}
	var names []string
	var grow func(prefix string, n int, alphabet []string, out *[]string)
	grow = func(prefix string, n int, alphabet []string, out *[]string) {
		*out = append(*out, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1, alphabet, out)
		}
	}
	grow("", 3, nameAlphabet, &names)
	var patterns []string
	grow("", 4, patternAlphabet, &patterns)
	for _, p := range patterns {
		for _, n := range names {
			checkAgainstReferences(t, p, n)
		}
	}
}

func TestCheckPatternErrors(t *testing.T) {
	tests := []struct {
		pattern string
		offset  int
		reason  string
	}{
		{"foo[", 3, "unterminated bracket expression"},
		{"foo[]", 3, "unterminated bracket expression"},
		{"[!]", 0, "unterminated bracket expression"},
		{"ab\\", 2, "escape character at end of pattern"},
		{"x[a\\", 3, "escape character at end of pattern"},
		{"a[z-a]", 2, "reversed range"},
		{"[[:word:]]", 1, "unknown character class"},
		{"[[:alpha]]", 1, "unterminated \"[:\""},
		{"[[.ab.]]", 1, "single character"},
		{"[a-[:digit:]]", 3, "character class cannot end a range"},
	}
	for _, tc := range tests {
		err := CheckPattern(tc.pattern)
		var perr *PatternError
		if !errors.As(err, &perr) {
			t.Errorf("CheckPattern(%q) = %v, want a *PatternError", tc.pattern, err)
			continue
		}
		if perr.Offset != tc.offset || !strings.Contains(perr.Reason, tc.reason) || perr.Pattern != tc.pattern {
			t.Errorf("CheckPattern(%q) = %+v, want offset %d and reason containing %q", tc.pattern, *perr, tc.offset, tc.reason)
		}
		if !strings.Contains(err.Error(), tc.pattern) {
			t.Errorf("error %q does not name the pattern", err)
		}
	}
	for _, ok := range []string{"", "*", "[]]", "[!]]", "[a-]", "\\[", "[[:alpha:]]", "[[.-.]-z]"} {
		if err := CheckPattern(ok); err != nil {
			t.Errorf("CheckPattern(%q) = %v, want nil", ok, err)
		}
	}
}

func TestEscapeName(t *testing.T) {
	names := []string{
		"plain", "a*b", "a?b", "[x]", "back\\slash", "hash#tag", "comma,name", "with space",
		"tab\there", "cr\r", "EXCLUDE", "include", "SCOREP_REGION_NAMES_END", "SCOREP_X9",
		"!$omp parallel @solver.c:12", "é", "\xff\xfe", "*",
	}
	for _, name := range names {
		p := EscapeName(name)
		if err := CheckPattern(p); err != nil {
			t.Errorf("EscapeName(%q) = %q, not a valid pattern: %v", name, p, err)
		}
		if !MatchPattern(p, name) {
			t.Errorf("EscapeName(%q) = %q does not match the name", name, p)
		}
		if lit, ok := literalOf(p); !ok || lit != name {
			t.Errorf("EscapeName(%q) = %q is not the literal pattern of the name (literalOf = %q, %v)", name, p, lit, ok)
		}
		if keywordLike(p) {
			t.Errorf("EscapeName(%q) = %q still reads as a keyword", name, p)
		}
	}
	if got := EscapeName("solve_step"); got != "solve_step" {
		t.Errorf("EscapeName of a plain name = %q, want it unchanged", got)
	}
}

func TestMatchPatternDoesNotAllocate(t *testing.T) {
	cases := [][2]string{
		{"solve*", "solver_step"},
		{"*a*b*c*", "xxaxxbxxcxx"},
		{"[[:alpha:]_][!0-9]?*", "_xé1"},
		{"mpi_\\*", "mpi_*"},
		{"[z-a]", "q"},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, func() { MatchPattern(c[0], c[1]) }); n != 0 {
			t.Errorf("MatchPattern(%q, %q) allocates %v times", c[0], c[1], n)
		}
	}
}

// TestMatchPatternLongInput guards the O(len(pattern)*len(name)) bound: a
// naive recursive matcher needs exponential time on this input.
func TestMatchPatternLongInput(t *testing.T) {
	name := strings.Repeat("a", 5000)
	pattern := strings.Repeat("a*", 40) + "b"
	if MatchPattern(pattern, name) {
		t.Fatalf("pattern ending in b matched a name of a's")
	}
	if !MatchPattern(strings.Repeat("a*", 40), name) {
		t.Fatalf("pattern of a* did not match a name of a's")
	}
}
