package textname

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The tables of summary, score and the report show a region's name in a
// column of fixed width. A C++ or generated name is often longer, and
// which part of it a user needs is known: the function's own name, then
// what sets it apart from its neighbours. A name is therefore shortened
// in steps, each taken only when the name still does not fit: parameter
// lists become "(…)", template arguments "<…>", leading namespaces and
// classes "…::"; only then is the middle cut, and never inside the
// function's own name and what follows it (the clone suffix of an
// outlined OpenMP body, the source line). Names that the steps make equal
// go back to a longer form, and a number sets apart those that stay equal.

// Shorten returns the escaped name (Escape) in at most width characters
// where that is possible without cutting the function's own name: a name
// whose own name alone is longer keeps its own name's beginning and end.
// width ≤ 0 means the whole name.
func Shorten(name string, width int) string {
	e := Escape(name)
	if width <= 0 || utf8.RuneCountInString(e) <= width {
		return e
	}
	forms := shortForms(e, width)
	return fitForm(forms, len(forms)-1, width)
}

// Distinct shortens each of names as Shorten does, and makes the results
// as distinct as the names are: equal names get equal results, different
// names different ones. Where the shortened forms of different names
// coincide, each of them takes the shortest longer form that sets them
// apart; names that differ only in what the width cannot show end with
// " #1", " #2", ... in the order of the names.
func Distinct(names []string, width int) []string {
	return distinct(names, width, Escape)
}

// DistinctEscaped is Distinct for names escaped already (Escape).
func DistinctEscaped(escaped []string, width int) []string {
	return distinct(escaped, width, func(s string) string { return s })
}

func distinct(names []string, width int, escape func(string) string) []string {
	out := make([]string, len(names))
	// Only names that were shortened can show alike: a shortened form
	// holds an ellipsis, which no other name shows unless it has one of
	// its own. The rest are their escaped selves, distinct as the names
	// are, and need no bookkeeping, which keeps a million short names
	// linear and cheap.
	type entry struct {
		forms  []string
		level  int    // index into forms of the form shown
		shown  string // forms[level] in the width
		number int    // among the names that show alike, from 1; 0: none yet
	}
	entries := map[string]*entry{} // by name, of the names that take part
	var order []string             // those names, first seen first
	for i, n := range names {
		esc := escape(n)
		out[i] = esc
		long := width > 0 && utf8.RuneCountInString(esc) > width
		if !long && !strings.Contains(esc, "…") {
			continue
		}
		if _, ok := entries[n]; !ok {
			e := &entry{forms: []string{esc}}
			if long {
				e.forms = shortForms(esc, width)
				e.level = len(e.forms) - 1
			}
			entries[n] = e
			order = append(order, n)
		}
	}
	if len(order) == 0 {
		return out
	}
	// A clash is a shown form that more than one name has. Each round
	// moves every clashing name one form longer; a name at its full form
	// stays there.
	count := make(map[string]int, len(order))
	for {
		clear(count)
		for _, n := range order {
			e := entries[n]
			e.shown = fitForm(e.forms, e.level, width)
			count[e.shown]++
		}
		moved := false
		for _, n := range order {
			if e := entries[n]; count[e.shown] > 1 && e.level > 0 {
				e.level--
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	// What no form sets apart is numbered, in the order of the names.
	numbered := map[string]int{}
	for i, n := range names {
		e, ok := entries[n]
		if !ok {
			continue
		}
		if count[e.shown] > 1 {
			if e.number == 0 {
				numbered[e.shown]++
				e.number = numbered[e.shown]
			}
			out[i] = e.shown + " #" + strconv.Itoa(e.number)
			continue
		}
		out[i] = e.shown
	}
	return out
}

// fitForm returns forms[level] if it fits in width, else that form cut
// in its middle before the function's own name.
func fitForm(forms []string, level, width int) string {
	s := forms[level]
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	return cutBefore(s, ownName(s), width)
}

// cutBefore cuts s to width characters keeping s[own:] (the function's own
// name and what follows it) whole and as much of s's beginning as fits,
// joined by "…". When s[own:] alone does not fit, the own name keeps its
// beginning and end, and what follows it is cut at its end.
func cutBefore(s string, own, width int) string {
	tail := s[own:]
	nt := utf8.RuneCountInString(tail)
	if nt+1 <= width {
		// The head keeps its beginning (an OpenMP construct, a return
		// type, the outer namespace) and its end, the class or module
		// right before the own name, which tells Kernel_DGZ::LTimes from
		// Kernel_GZD::LTimes. Fewer than three characters say nothing.
		head := []rune(s[:own])
		room := width - 1 - nt
		switch {
		case room < 3:
			return "…" + tail
		case room < 16:
			return string(head[:room]) + "…" + tail
		}
		end := room / 2
		return string(head[:room-end]) + "…" + string(head[len(head)-end:]) + tail
	}
	// The own name is the tail's first word: up to its parameter list or
	// the first space. Too long for it and two ellipses, it loses its
	// template arguments, then its leading dotted parts (main.main.func1),
	// then its middle.
	end := len(tail)
	if i := strings.IndexAny(tail, "( "); i > 0 {
		end = i
	}
	name, rest := tail[:end], tail[end:]
	cut := own > 0
	if i := strings.IndexByte(name, '<'); i > 0 && utf8.RuneCountInString(name)+2 > width {
		name, cut = name[:i], true
	}
	for utf8.RuneCountInString(name)+2 > width {
		i := strings.IndexByte(name, '.')
		if i < 0 || i+1 == len(name) {
			break
		}
		name, cut = name[i+1:], true
	}
	prefix := ""
	if cut {
		prefix = "…"
	}
	nn := utf8.RuneCountInString(prefix + name)
	if rest != "" {
		nn++ // the "…" that ends what follows the name
	}
	// Every form cut here shows an ellipsis, so that it never reads as
	// another, uncut name (Distinct relies on it).
	if nn > width {
		return shortenMiddle(name, width)
	}
	if rest == "" {
		return prefix + name
	}
	// The name whole, and the beginning of what follows it: never all of
	// it, or the tail would have fit.
	rr := []rune(rest)
	return prefix + name + string(rr[:min(width-nn, len(rr)-1)]) + "…"
}

// shortenMiddle keeps s's beginning and end around "…", width characters
// in all.
func shortenMiddle(s string, width int) string {
	r := []rune(s)
	if width <= 1 {
		return "…"
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// shortForms returns the escaped name e and its shorter forms, each step
// shorter than the one before, up to the first that fits in width
// characters (or all of them): parameter lists emptied, template
// arguments emptied, then the leading qualifiers of the function's own
// name dropped one at a time. The last form is the one to show.
func shortForms(e string, width int) []string {
	forms := []string{e}
	fits := func() bool { return utf8.RuneCountInString(forms[len(forms)-1]) <= width }
	add := func(s string) {
		if s != forms[len(forms)-1] {
			forms = append(forms, s)
		}
	}
	if fits() {
		return forms
	}
	add(collapse(e, '(', ')'))
	if fits() {
		return forms
	}
	add(collapse(forms[len(forms)-1], '<', '>'))
	// A generated name can nest thousands of qualifiers; past a few, the
	// middle cut serves as well.
	for range 16 {
		if fits() {
			break
		}
		s, ok := dropQualifier(forms[len(forms)-1])
		if !ok {
			break
		}
		add(s)
	}
	return forms
}

// collapse replaces the content of every outermost balanced open…close
// group that follows a name (a parameter list, template arguments) by
// "…". Groups that follow no name, such as "(anonymous namespace)", and
// an "operator<" stay; so does all of s when its brackets do not balance.
func collapse(s string, open, close byte) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		if c != open || i == 0 || !followsName(s[:i], open) || i+1 < len(s) && s[i+1] == close {
			b.WriteByte(c)
			i++
			continue
		}
		j := match(s, i, open, close)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteByte(open)
		b.WriteString("…")
		b.WriteByte(close)
		i = j + 1
	}
	return b.String()
}

// followsName reports whether the bracket open after s opens a name's
// parameters or template arguments: s ends with a name's character or a
// closing bracket. An operator's name ends with its symbol: the brackets
// of "operator<" and "operator()" are part of the name, and a parameter
// list follows the whole of it ("operator<<(", "operator()(").
func followsName(s string, open byte) bool {
	w := s[strings.LastIndexAny(s, " :")+1:]
	if strings.HasPrefix(w, "operator") && (len(w) == len("operator") || !identByte(w[len("operator")])) {
		return open == '(' && len(w) > len("operator") && !strings.HasSuffix(w, "operator(")
	}
	c := s[len(s)-1]
	return identByte(c) || c == '>' || c == ']'
}

// match returns the index of the close that balances the open at s[i],
// counting the other kind of bracket too so that "f(a<b)" does not pair
// wrongly; -1 when there is none.
func match(s string, i int, open, close byte) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf
}

// ownName returns where the function's own name begins in s: the word
// before the last parameter list, or, without one, the last word before
// the suffixes a region name may carry (" [clone ._omp_fn.0]",
// " @file.c:42"), after its qualifiers ("::", and "." or "/" as in Go's
// and Fortran's names).
func ownName(s string) int {
	core := trimSuffixes(s)
	end := len(core)
	if strings.HasSuffix(core, ")") {
		if k := openOf(core, len(core)-1); k > 0 && followsName(core[:k], '(') {
			end = k
		}
	}
	// The name proper: back over its template arguments, then over the
	// characters of a name.
	j := end
	if j > 0 && core[j-1] == '>' {
		if k := openOfAngle(core, j-1); k > 0 {
			j = k
		}
	}
	// A dot joins the parts of an outlined body's name (main._omp_fn.0)
	// and of a Go function's (heat.step); the name does not start with
	// one ((*grid).step).
	start := j
	for start > 0 && (identByte(core[start-1]) || core[start-1] == '.') {
		start--
	}
	for start < j && core[start] == '.' {
		start++
	}
	if start == j {
		// operator<<, operator() and other names of symbols: back to
		// the word's start.
		for start > 0 && core[start-1] != ' ' && core[start-1] != ':' {
			start--
		}
	}
	return start
}

// trimSuffixes returns s without its trailing " [...]" groups and
// " @where" word.
func trimSuffixes(s string) string {
	for {
		switch {
		case strings.HasSuffix(s, "]"):
			k := strings.LastIndex(s, " [")
			if k < 0 {
				return s
			}
			s = s[:k]
		default:
			k := strings.LastIndexByte(s, ' ')
			if k >= 0 && k+1 < len(s) && s[k+1] == '@' {
				s = s[:k]
				continue
			}
			if strings.HasSuffix(s, " const") {
				s = strings.TrimSuffix(s, " const")
				continue
			}
			return s
		}
	}
}

// openOf returns the index of the "(" that the ")" at s[i] closes, -1 if
// none.
func openOf(s string, i int) int {
	depth := 0
	for j := i; j >= 0; j-- {
		switch s[j] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// openOfAngle returns the index of the "<" that the ">" at s[i] closes, -1
// if none.
func openOfAngle(s string, i int) int {
	depth := 0
	for j := i; j >= 0; j-- {
		switch s[j] {
		case '>':
			depth++
		case '<':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// dropQualifier removes the first qualifier of the function's own name:
// "a::b::f(…)" becomes "…::b::f(…)", then "…::f(…)". Go's package paths
// ("example.com/x/pkg.f") lose a path element at a time. It reports false
// when the own name has no qualifier left to drop.
func dropQualifier(s string) (string, bool) {
	own := ownName(s)
	// The qualified run that ends at own: components joined by "::".
	q := own
	for q >= 2 && s[q-2:q] == "::" {
		k := q - 2
		// A component: a name with template arguments or "(anonymous
		// namespace)"; "…", a component dropped already, reads as a
		// name's characters (identByte).
		if k > 0 && s[k-1] == '>' {
			if o := openOfAngle(s, k-1); o >= 0 {
				k = o
			}
		} else if k > 0 && s[k-1] == ')' {
			if o := openOf(s, k-1); o >= 0 {
				k = o
			}
		}
		for k > 0 && identByte(s[k-1]) {
			k--
		}
		q = k
	}
	if q < own {
		run := strings.TrimPrefix(s[q:own], "…::")
		i := strings.Index(run, "::")
		if i < 0 {
			return s, false
		}
		rest := run[i+2:]
		return s[:q] + "…::" + rest + s[own:], true
	}
	// Go and paths: "a/b/pkg.f" drops "a/", then "b/".
	w := strings.LastIndexByte(s[:own], ' ') + 1
	word := s[w:own]
	word = strings.TrimPrefix(word, "…/")
	if i := strings.IndexByte(word, '/'); i >= 0 {
		return s[:w] + "…/" + word[i+1:] + s[own:], true
	}
	return s, false
}
