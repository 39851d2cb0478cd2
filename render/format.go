package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/textname"
)

// percent formats a fraction as a percentage; an infinite one (a ratio to
// nothing) is "inf", and shares of 100 and more drop the decimal.
func percent(fraction float64) string {
	switch {
	case math.IsNaN(fraction):
		return "-"
	case math.IsInf(fraction, 1):
		return "inf"
	case fraction >= 100:
		return fmt.Sprintf("%.0f%%", 100*fraction)
	}
	return fmt.Sprintf("%.1f%%", 100*fraction)
}

// sizeSetting formats bytes as an HMB_BUFFER_SIZE value: whole KiB, MiB or
// GiB, rounded up so that the setting is at least b.
func sizeSetting(b uint64) string {
	const k, m, g = 1 << 10, 1 << 20, 1 << 30
	switch {
	case b >= 8*g:
		return fmt.Sprintf("%dG", (b+g-1)/g)
	case b >= 8*m:
		return fmt.Sprintf("%dM", (b+m-1)/m)
	}
	return fmt.Sprintf("%dK", (b+k-1)/k)
}

// quoteList writes names as Go-quoted strings separated by commas, so that
// a name with a comma, quote or control character stays one readable item.
func quoteList(names []string) string {
	return strings.Join(quoted(names), ", ")
}

// listWidth is where the commands' long lists of names wrap: a line of
// thousands of synchronisation regions reads as a paragraph.
const listWidth = 100

// quoteLines is quoteList after lead, wrapped at listWidth with further
// lines indented by two spaces.
func quoteLines(lead string, names []string) string {
	return textname.Wrap(lead, quoted(names), listWidth, "  ")
}

func quoted(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return q
}
