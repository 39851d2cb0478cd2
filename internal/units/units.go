// Package units formats the numbers that the summary, the report and the
// analyses print for people: counts with thousands separators, durations and
// sizes in a unit that keeps a few digits, shares as percentages, clock
// rates. One implementation, so that every tool words a number the same way.
package units

import (
	"fmt"
	"math"
	"strconv"
)

// Count formats n with thousands separators: 1234567 is "1,234,567".
func Count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Duration formats nanoseconds with a unit that keeps 3-4 digits: s, ms or
// µs with three decimals, ns with one. Infinities and NaN print as Go does.
func Duration(ns float64) string {
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

// Size formats bytes with binary units: GiB, MiB or KiB with one decimal,
// whole bytes below 1 KiB.
func Size(b float64) string {
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

// Share formats part of whole as a percentage with one decimal, "-" when
// whole is not positive (there is nothing to be a share of).
func Share(part, whole float64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*part/whole)
}

// Rate formats a clock rate in GHz from 1 GHz up, else in MHz.
func Rate(hz float64) string {
	if hz >= 1e9 {
		return fmt.Sprintf("%.3f GHz", hz/1e9)
	}
	return fmt.Sprintf("%.1f MHz", hz/1e6)
}

// Plural words a count with its noun: "1 location", "2 locations", "0
// locations". many is the plural spelled out, as English has no one rule
// ("1 location was", "3 locations were"). One implementation, so that no
// tool prints "1 locations".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
