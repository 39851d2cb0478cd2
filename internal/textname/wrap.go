package textname

import (
	"strings"
	"unicode/utf8"
)

// Wrap joins items with ", " into lines of at most width characters, the
// first line after lead (which it counts), each further one after indent;
// an item longer than a line has a line of its own. A list of thousands
// of region names so stays readable on a terminal and in a diff, where one
// line of 9,707 characters was not. width ≤ 0 means one line.
func Wrap(lead string, items []string, width int, indent string) string {
	var b strings.Builder
	b.WriteString(lead)
	col := utf8.RuneCountInString(lead)
	start := col // the column where the current line's items begin
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		n := utf8.RuneCountInString(it)
		switch {
		case col == start:
			// The line's first item goes there, whatever its length.
		case width > 0 && col+1+n > width:
			b.WriteString("\n")
			b.WriteString(indent)
			col = utf8.RuneCountInString(indent)
			start = col
		default:
			b.WriteString(" ")
			col++
		}
		b.WriteString(it)
		col += n
	}
	return b.String()
}
