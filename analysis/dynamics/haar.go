package dynamics

import "math"

// Transform is the orthonormal Haar wavelet decomposition of a series of
// length N, carried to the coarsest scale (Oleynik's J̃ = J, eq. 6.2).
//
// Detail[j-1][n] is the wavelet coefficient W_f[j, n] at dyadic scale 2^j
// and shift n: it compares the mean of the right half of the iterations
// [n·2^j, min((n+1)·2^j, N)) with the mean of the left half, so a positive
// coefficient means the series increases there (a degradation, in Oleynik's
// convention). Approx is the single approximation coefficient, √N times the
// mean of the series.
//
// Lengths that are not powers of two are not padded and not truncated.
// At every scale the blocks are the dyadic ones, except that the last block
// is cut at N; a block without a partner is carried up unchanged, and a pair
// whose right block is shorter is combined with the unbalanced Haar wavelet
// (Girardi and Sweldens 1997; Fryzlewicz 2007), which weights each side by
// its length. Every basis vector is then still unit-norm, zero-sum (except
// the scaling vector) and orthogonal to the others, so energy conservation
// (eq. 6.3) and the variance decomposition (eq. 6.4) hold exactly for every
// N. Padding by reflection would count invented samples in the energies and
// padding by zeros would add a step at the end; truncation would drop data.
// For N a power of two the transform is the classical Haar transform.
type Transform struct {
	N      int
	Approx float64
	Detail [][]float64
}

// Levels returns J = ⌈log2 N⌉, the number of scales of a series of length n.
func Levels(n int) int {
	j := 0
	for (1 << j) < n {
		j++
	}
	return j
}

// Haar computes the orthonormal Haar transform of x. It does not modify x.
// Non-finite samples propagate into the coefficients that cover them.
func Haar(x []float64) Transform {
	n := len(x)
	t := Transform{N: n}
	if n == 0 {
		return t
	}
	levels := Levels(n)
	// All detail coefficients share one backing array: there are exactly N-1.
	backing := make([]float64, n-1)
	t.Detail = make([][]float64, levels)
	a := make([]float64, n)
	copy(a, x)
	m := n // number of blocks at the current level
	half := 1
	off := 0
	for j := 1; j <= levels; j++ {
		pairs := m / 2
		d := backing[off : off+pairs : off+pairs]
		off += pairs
		for k := 0; k < pairs; k++ {
			l, r := a[2*k], a[2*k+1]
			cl, cr := pairWeights(n, k, half)
			a[k] = cl*l + cr*r
			d[k] = cl*r - cr*l
		}
		if m%2 == 1 {
			a[pairs] = a[m-1]
		}
		t.Detail[j-1] = d
		m = (m + 1) / 2
		half *= 2
	}
	t.Approx = a[0]
	return t
}

// pairWeights returns the weights √(nL/n) and √(nR/n) of the pair k at the
// scale whose child blocks hold half iterations each; only the last pair of a
// scale can have a shorter right block.
func pairWeights(n, k, half int) (cl, cr float64) {
	nr := n - (2*k+1)*half
	if nr >= half {
		return math.Sqrt2 / 2, math.Sqrt2 / 2
	}
	tot := float64(half + nr)
	return math.Sqrt(float64(half) / tot), math.Sqrt(float64(nr) / tot)
}

// Inverse reconstructs the series from its coefficients.
func (t Transform) Inverse() []float64 {
	if t.N == 0 {
		return nil
	}
	a := make([]float64, t.N)
	a[0] = t.Approx
	levels := len(t.Detail)
	for j := levels; j >= 1; j-- {
		half := 1 << (j - 1)
		m := (t.N + half - 1) / half // blocks at level j-1
		pairs := m / 2
		d := t.Detail[j-1]
		if m%2 == 1 {
			a[m-1] = a[pairs]
		}
		// Walk backwards so that a[k] is read before a[2k], a[2k+1] are written.
		for k := pairs - 1; k >= 0; k-- {
			cl, cr := pairWeights(t.N, k, half)
			p := a[k]
			a[2*k] = cl*p - cr*d[k]
			a[2*k+1] = cr*p + cl*d[k]
		}
	}
	return a
}

// Support returns the iterations [from, to) covered by Detail[j-1][k].
func (t Transform) Support(j, k int) (from, to int) {
	from = k << j
	return from, min(from+(1<<j), t.N)
}
