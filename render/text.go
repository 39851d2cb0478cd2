package render

import "unicode/utf8"

// Shorten returns name if it has at most width characters, else its
// beginning and end joined by an ellipsis, width characters in all: the
// beginning of a qualified name says where it is (namespace, module,
// class), the end which one it is (procedure, C++ parameters).
func Shorten(name string, width int) string {
	if width <= 0 || utf8.RuneCountInString(name) <= width {
		return name
	}
	r := []rune(name)
	if width == 1 {
		return "…"
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
