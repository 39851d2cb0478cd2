package dynamics

import (
	"math"
	"math/bits"
)

// fft is an iterative radix-2 complex FFT of one power-of-two size with
// precomputed twiddles and bit-reversal permutation.
type fft struct {
	n       int
	twiddle []complex128 // e^{-2πik/n}, k < n/2
	rev     []int32
}

func newFFT(n int) *fft {
	f := &fft{n: n, twiddle: make([]complex128, max(n/2, 1))}
	for k := range f.twiddle {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		f.twiddle[k] = complex(c, s)
	}
	f.rev = bitReversal(n)
	return f
}

// sub returns an FFT of the smaller power-of-two size n, its twiddles
// picked from f's rather than computed again (and kept contiguous: a strided
// table would cost a cache miss per butterfly).
func (f *fft) sub(n int) *fft {
	return &fft{n: n, twiddle: strided(f.twiddle, f.n/n, max(n/2, 1)), rev: bitReversal(n)}
}

// strided returns count elements of v, every stride-th.
func strided(v []complex128, stride, count int) []complex128 {
	out := make([]complex128, count)
	for k := range out {
		out[k] = v[k*stride]
	}
	return out
}

func bitReversal(n int) []int32 {
	rev := make([]int32, n)
	shift := 64 - bits.TrailingZeros(uint(n))
	for i := range rev {
		if n > 1 {
			rev[i] = int32(bits.Reverse64(uint64(i)) >> shift)
		}
	}
	return rev
}

// transform computes the forward DFT of a in place, or the inverse DFT
// without the 1/n factor when inverse is set.
func (f *fft) transform(a []complex128, inverse bool) {
	n := f.n
	for i, r := range f.rev {
		if int(r) > i {
			a[i], a[r] = a[r], a[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half := size >> 1
		step := n / size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				w := f.twiddle[k*step]
				if inverse {
					w = complex(real(w), -imag(w))
				}
				u := a[start+k]
				v := a[start+k+half] * w
				a[start+k] = u + v
				a[start+k+half] = u - v
			}
		}
	}
}

// dct computes DCT-II and its inverse of one power-of-two length m through an
// m-point complex FFT (Makhoul 1980).
type dct struct {
	m     int
	f     *fft
	shift []complex128 // e^{-iπk/(2m)}
	work  []complex128
}

func newDCT(m int) *dct {
	d := &dct{m: m, f: newFFT(m), shift: make([]complex128, m), work: make([]complex128, m)}
	for k := range d.shift {
		s, c := math.Sincos(-math.Pi * float64(k) / float64(2*m))
		d.shift[k] = complex(c, s)
	}
	return d
}

// sub returns a DCT of the smaller power-of-two length m with tables picked
// from d's and d's work space (so the two must not run at once).
func (d *dct) sub(m int) *dct {
	return &dct{m: m, f: d.f.sub(m), shift: strided(d.shift, d.m/m, m), work: d.work[:m]}
}

// forward sets dst[k] = Σ_n src[n]·cos(πk(2n+1)/(2m)).
func (d *dct) forward(dst, src []float64) {
	m, w := d.m, d.work
	for n := 0; n < m/2; n++ {
		w[n] = complex(src[2*n], 0)
		w[m-1-n] = complex(src[2*n+1], 0)
	}
	if m == 1 {
		w[0] = complex(src[0], 0)
	}
	d.f.transform(w, false)
	for k := range dst[:m] {
		dst[k] = real(w[k] * d.shift[k])
	}
}

// inverse undoes forward: dst[n] = (1/m)(src[0] + 2Σ_{k≥1} src[k]·cos(πk(2n+1)/(2m))).
func (d *dct) inverse(dst, src []float64) {
	m, w := d.m, d.work
	w[0] = complex(src[0], 0)
	for k := 1; k < m; k++ {
		s := d.shift[k]
		// Multiply by the conjugate shift e^{+iπk/(2m)}.
		w[k] = complex(src[k], -src[m-k]) * complex(real(s), -imag(s))
	}
	d.f.transform(w, true)
	inv := 1 / float64(m)
	for n := 0; n < m/2; n++ {
		dst[2*n] = real(w[n]) * inv
		dst[2*n+1] = real(w[m-1-n]) * inv
	}
	if m == 1 {
		dst[0] = real(w[0])
	}
}
