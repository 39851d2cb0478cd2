package summary

import (
	"fmt"
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
func duration(ns int64) string { return durationF(float64(ns)) }

func durationF(ns float64) string {
	switch a := max(ns, -ns); {
	case a >= 1e9:
		return fmt.Sprintf("%.3f s", ns/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

func percentU(part, whole uint64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// size formats bytes with binary units.
func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func rate(hz float64) string {
	if hz >= 1e9 {
		return fmt.Sprintf("%.3f GHz", hz/1e9)
	}
	return fmt.Sprintf("%.1f MHz", hz/1e6)
}
