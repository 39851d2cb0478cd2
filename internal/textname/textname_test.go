package textname

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"solve":              "solve",
		"ns::f(int)":         "ns::f(int)",
		"Übergang λ":         "Übergang λ",
		"a\tb":               `a\tb`,
		"line1\nline2\r":     `line1\nline2\r`,
		`C:\path`:            `C:\\path`,
		"bell\a\x00\x1b\x7f": `bell\x07\x00\x1b\x7f`,
		"bad\xff\xfeutf8":    `bad\xff\xfeutf8`,
		"cut\xc3":            `cut\xc3`,
		"c1\u0085":           `c1\u0085`,
		"evil\u202egnp.exe":  `evil\u202egnp.exe`,
		"iso\u2066x\u2069":   `iso\u2066x\u2069`,
		"mark\u200f":         `mark\u200f`,
		"":                   "",
	} {
		got := Escape(in)
		if got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\t\n\r\x00") {
			t.Errorf("Escape(%q) = %q: not one printable field", in, got)
		}
	}
}

// FuzzEscape checks that every name escapes to one valid field and that
// distinct names stay distinct (the escaping is reversible).
func FuzzEscape(f *testing.F) {
	f.Add("a\tb\\n")
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if !utf8.ValidString(e) || strings.ContainsAny(e, "\t\n\r") {
			t.Fatalf("Escape(%q) = %q", s, e)
		}
		if u := unescape(e); u != s {
			t.Fatalf("unescape(Escape(%q)) = %q", s, u)
		}
	})
}

// unescape inverts Escape, for the test.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'x':
			b.WriteByte(hexVal(s[i+1])<<4 | hexVal(s[i+2]))
			i += 2
		case 'u':
			b.WriteRune(rune(hexVal(s[i+3])<<4 | hexVal(s[i+4])))
			i += 4
		}
	}
	return b.String()
}

func hexVal(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

func TestShortenEscapes(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	if got := Shorten(long, 11); got != "aaaaa…aaaaa" {
		t.Errorf("Shorten of a 1 MiB name: %q", got)
	}
	if got := Shorten("solve\t", 10); got != `solve\t` {
		t.Errorf("Shorten of a short name: %q", got)
	}
}
