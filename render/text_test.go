package render

import (
	"testing"
	"unicode/utf8"
)

func TestShorten(t *testing.T) {
	for _, c := range []struct {
		name  string
		width int
		want  string
	}{
		{"solve", 10, "solve"},
		{"solve", 5, "solve"},
		{"abcdefghij", 5, "ab…ij"},
		{"abcdefghij", 6, "ab…hij"},
		{"abcdefghij", 1, "…"},
		{"abcdefghij", 0, "abcdefghij"},
		{"abcdefghij", -1, "abcdefghij"},
		{"äöüßäöüß", 5, "äö…üß"},
	} {
		got := Shorten(c.name, c.width)
		if got != c.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.name, c.width, got, c.want)
		}
		if c.width > 0 && utf8.RuneCountInString(got) > c.width {
			t.Errorf("Shorten(%q, %d) = %q: longer than %d", c.name, c.width, got, c.width)
		}
	}
}
