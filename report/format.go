package report

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

// percent formats part of whole as a percentage, "-" when whole is 0.
func percent(part, whole float64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*part/whole)
}

func rate(hz float64) string {
	if hz >= 1e9 {
		return fmt.Sprintf("%.3f GHz", hz/1e9)
	}
	return fmt.Sprintf("%.1f MHz", hz/1e6)
}
