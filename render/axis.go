package render

import (
	"fmt"
	"math"
)

// niceStep returns the smallest of 1, 2, 5, 10, 20, 50, ... not below x.
func niceStep(x float64) int {
	for s := 1; ; s *= 10 {
		for _, m := range []int{1, 2, 5} {
			if float64(s*m) >= x {
				return s * m
			}
		}
	}
}

// axisLabel labels tick t (ns) of an axis of ticks step apart that ends at
// last: in one unit for the whole axis, that of last, with the decimals the
// step needs, so that "800 ms" is not followed by "1.000 s".
func axisLabel(t, step, last float64) string {
	unit, name := 1.0, "ns"
	switch a := math.Abs(last); {
	case a >= 1e9:
		unit, name = 1e9, "s"
	case a >= 1e6:
		unit, name = 1e6, "ms"
	case a >= 1e3:
		unit, name = 1e3, "µs"
	}
	decimals := max(0, int(-math.Floor(math.Log10(step/unit)+1e-9)))
	return fmt.Sprintf("%.*f %s", decimals, t/unit, name)
}

// niceStepF returns a step of 1, 2 or 5 times a power of ten near x (>= 1).
func niceStepF(x float64) float64 {
	if !(x > 1) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}
