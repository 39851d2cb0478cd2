package dynamics

import "math"

// Energy is the variability of a series measured on its Haar coefficients
// (Oleynik, §6.2.2). Thanks to orthonormality, Total equals the sum of
// squares of the samples (eq. 6.3) and Dynamic equals N times their
// population variance (eq. 6.4).
type Energy struct {
	// Total is the sum of squares of all coefficients (getTotalEnergy).
	Total float64
	// Dynamic is the sum of squares of the wavelet coefficients, the total
	// without the mean (getDynamicEnergy).
	Dynamic float64
	// PerScale[j-1] is the energy of the wavelet coefficients at scale 2^j:
	// how much of the variability lives at that time scale.
	PerScale []float64
	// ShortScales and WideScales split Dynamic into scales 1..⌊J/2⌋ (spikes)
	// and ⌊J/2⌋+1..J (trends), as getShortScalesEnergy and
	// getWideScalesEnergy do.
	ShortScales, WideScales float64
}

// Variability returns Dynamic/Total, the ratio Oleynik's "significant
// variability" property compares against a threshold; 0 for an all-zero series.
func (e Energy) Variability() float64 {
	if e.Total == 0 {
		return 0
	}
	return e.Dynamic / e.Total
}

// Energy returns the energies of the transform.
func (t Transform) Energy() Energy {
	e := Energy{PerScale: make([]float64, len(t.Detail))}
	short := len(t.Detail) / 2
	for j, d := range t.Detail {
		var s float64
		for _, c := range d {
			s += c * c
		}
		e.PerScale[j] = s
		e.Dynamic += s
		if j < short {
			e.ShortScales += s
		} else {
			e.WideScales += s
		}
	}
	e.Total = e.Dynamic + t.Approx*t.Approx
	return e
}

// EnergyInTime spreads the energy of every wavelet coefficient evenly over the
// iterations it covers and returns, per iteration, the sum over all scales:
// where in time the variability is. The slice sums to Energy().Dynamic.
// It runs in O(N), descending the scales like the inverse transform.
func (t Transform) EnergyInTime() []float64 {
	if t.N == 0 {
		return nil
	}
	v := make([]float64, t.N)
	for j := len(t.Detail); j >= 1; j-- {
		half := 1 << (j - 1)
		m := (t.N + half - 1) / half
		pairs := m / 2
		d := t.Detail[j-1]
		if m%2 == 1 {
			v[m-1] = v[pairs]
		}
		for k := pairs - 1; k >= 0; k-- {
			from, to := t.Support(j, k)
			p := v[k] + d[k]*d[k]/float64(to-from)
			v[2*k], v[2*k+1] = p, p
		}
	}
	return v
}

// madScale converts a median absolute deviation into the standard deviation
// of a Gaussian: 1/Φ⁻¹(3/4).
const madScale = 1.482602218505602

// NoiseLevel estimates the standard deviation of the noise in x from its
// finest-scale Haar coefficients, taken at every shift (the maximal-overlap
// transform: (x[i+1] - x[i])/√2 for all i, twice as many as the decimated
// transform has, which halves the variance of the estimate on short series):
// 1.4826 × their median absolute deviation from their median, the robust
// estimator of Donoho and Johnstone, centred so that a linear trend, which
// shifts all of them alike, does not count as noise. A step touches one
// coefficient and a spike two, which hardly moves the median. When more than
// half of them are equal (quantised timings) the MAD is zero and the mean
// absolute deviation, scaled to a Gaussian σ, is used instead. Zero means the
// series has no noise at all.
func NoiseLevel(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	d := make([]float64, len(x)-1)
	for i := range d {
		d[i] = (x[i+1] - x[i]) / math.Sqrt2
	}
	med := median(d)
	var meanAbs float64
	for i, c := range d {
		d[i] = math.Abs(c - med)
		meanAbs += d[i]
	}
	if mad := median(d); mad > 0 {
		return madScale * mad
	}
	return math.Sqrt(math.Pi/2) * meanAbs / float64(len(d))
}

// median returns the median of v, reordering v.
func median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	m := quickselect(v, n/2)
	if n%2 == 1 {
		return m
	}
	lo := v[0]
	for _, x := range v[:n/2] {
		lo = max(lo, x)
	}
	return (lo + m) / 2
}

// quickselect places the k-th smallest element of v at v[k] with smaller or
// equal elements before it, and returns it. Expected O(len(v)).
func quickselect(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		// Median of three as pivot keeps sorted and reversed inputs linear.
		mid := lo + (hi-lo)/2
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		p := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] < p {
				i++
			}
			for v[j] > p {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}
