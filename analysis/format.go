package analysis

import (
	"fmt"
	"math"
	"strconv"
)

// count formats n with thousands separators.
func count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// duration formats nanoseconds with a unit that keeps 3-4 digits.
func duration(ns float64) string {
	switch a := math.Abs(ns); {
	case math.IsInf(ns, 0) || math.IsNaN(ns):
		return fmt.Sprint(ns)
	case a >= 1e9:
		return fmt.Sprintf("%.3f s", ns/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

// percent formats a fraction as a percentage.
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

// size formats bytes with binary units.
func size(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
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
