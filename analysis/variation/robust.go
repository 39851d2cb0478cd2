package variation

import (
	"math"
	"sort"
)

// madScale makes the median absolute deviation of a normal sample an
// estimate of its standard deviation, so that robust z-scores read like
// ordinary ones.
const madScale = 1.4826

// meanADScale does the same for the mean absolute deviation, used when more
// than half of the values are equal and the MAD is zero (Iglewicz and
// Hoaglin's modified z-score).
const meanADScale = 1.2533

// robustScale returns the median of xs and the spread robust z-scores are
// measured in: 1.4826 × MAD, or 1.2533 × the mean absolute deviation from
// the median when the MAD is zero. The spread is 0 only when all values are
// equal. xs is not modified.
func robustScale(xs []float64) (median, mad, spread float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	median = middle(s)
	var meanAD float64
	for i, x := range s {
		d := math.Abs(x - median)
		s[i] = d
		meanAD += d
	}
	meanAD /= float64(len(s))
	sort.Float64s(s)
	mad = middle(s)
	switch {
	case mad > 0:
		spread = madScale * mad
	case meanAD > 0:
		spread = meanADScale * meanAD
	}
	return median, mad, spread
}

// middle returns the median of sorted values.
func middle(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// robustZ is x's distance from the median in units of spread; 0 when all
// values are equal.
func robustZ(x, median, spread float64) float64 {
	if spread == 0 {
		return 0
	}
	return (x - median) / spread
}
