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

// Score sets the robust z-score of every segment of v among all of them,
// v's Median, MAD and Spread, and the median SOS-time of each row, whose
// Segments say how many of v.Segments (which are by row) are its.
//
// The spread is never below the coarsest timestamp unit of the rows'
// files (Row.Resolution): segments of a few timestamp units each had a MAD
// of 1 ns where their times were rounded from 6.5 ns ticks (111 or 112 ns
// for the same tick count), and a quarter of them stood out one tick above
// the median.
func (v *Variation) Score() {
	sos := make([]float64, len(v.Segments))
	for i, s := range v.Segments {
		sos[i] = float64(s.SOS)
	}
	v.Median, v.MAD, v.Spread = robustScale(sos)
	if v.Spread > 0 {
		for _, r := range v.Rows {
			v.Spread = max(v.Spread, r.Resolution)
		}
	}
	for i := range v.Segments {
		v.Segments[i].Score = robustZ(sos[i], v.Median, v.Spread)
	}
	for i, at := 0, 0; i < len(v.Rows); i++ {
		n := v.Rows[i].Segments
		if n > 0 {
			v.Rows[i].Median, _, _ = robustScale(sos[at : at+n])
		}
		at += n
	}
}
