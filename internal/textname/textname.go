// Package textname writes a region's, location's or file's name for the
// line formats of the hmbtrace commands (dump, summary, comm, score,
// variation): one line per record, fields split by tabs. Names are kept
// as the program gave them, any bytes; shown raw, a tab or newline would
// split a record, and a control character or invalid UTF-8 would garble a
// terminal. Escape is the one escaping the commands share; Shorten and
// Distinct the one way their tables shorten a name (keeping the
// function's own name), Wrap the one way their long lists wrap.
package textname

import (
	"strings"
	"unicode/utf8"
)

// Escape returns s with a backslash as \\, a tab as \t, a newline as \n,
// a carriage return as \r, any other control character (C0, DEL, C1) and
// each byte of invalid UTF-8 as \xHH (C1 as \u0080 to \u009f), and the
// characters that reorder text on a terminal (bidirectional controls such
// as U+202E, which make a name read as another) as \uXXXX. Every other
// character stays as it is; a name without any of these is returned
// unchanged. The escaped form has no tab, newline or control character,
// so it aligns by its characters.
func Escape(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r >= 0x80 && r <= 0x9f || bidi(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c < 0x20 || c == 0x7f:
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		case r >= 0x80 && r <= 0x9f || bidi(r):
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&15])
			b.WriteByte(hex[r>>8&15])
			b.WriteByte(hex[r>>4&15])
			b.WriteByte(hex[r&15])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// bidi reports whether r is a bidirectional formatting character: the
// marks (U+061C, U+200E, U+200F), embeddings and overrides (U+202A to
// U+202E) and isolates (U+2066 to U+2069).
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
