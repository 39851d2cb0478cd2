package dynamics

import (
	"math"
	"slices"
)

// Timings on a shared machine carry rare, isolated outliers: an iteration
// the operating system interrupted, a page fault storm, a late message.
// They are far from Gaussian, and a fit that assumes Gaussian noise would
// turn each into a breakpoint pair and, on a ramp, cut the ramp at every
// one. So they are found first, against a running median, which follows
// steps and trends without lag but ignores up to three outliers in its
// window; they become one-iteration peaks or dips of their own, and the
// scale space and the fit see the series with the median in their place.

// spikeHalfWindow is the half-width of the running median: a window of 7
// samples ignores excursions of up to 3 iterations, which are then spikes;
// wider ones are left to the scale space, which sees them as peaks.
const spikeHalfWindow = 3

// spikeNoise is the standard deviation of a sample minus the median of its
// window of 2·spikeHalfWindow+1 samples, in units of the noise's: the
// median of m Gaussian samples has a variance of about π/(2m) times theirs.
var spikeNoise = math.Sqrt(1 + math.Pi/(2*(2*spikeHalfWindow+1)))

// spikeRun is a run of adjacent outliers: samples [from, to].
type spikeRun struct {
	from, to int
	up       bool
}

// findSpikes returns the runs of samples of z that stand out of the running
// median by more than z·noise, and a copy of z with the median in their place.
// A run is at most spikeHalfWindow samples long and its samples all lie on
// one side; longer stretches off the median are not isolated outliers.
func findSpikes(x []float64, noise, z float64) ([]spikeRun, []float64) {
	n := len(x)
	med := runningMedian(x, spikeHalfWindow)
	limit := z * noise * spikeNoise
	clean := slices.Clone(x)
	var runs []spikeRun
	for i := 0; i < n; {
		r := x[i] - med[i]
		if math.Abs(r) <= limit {
			i++
			continue
		}
		j := i
		for j+1 < n && math.Abs(x[j+1]-med[j+1]) > limit && (x[j+1] > med[j+1]) == (r > 0) {
			j++
		}
		if j-i+1 <= spikeHalfWindow {
			runs = append(runs, spikeRun{from: i, to: j, up: r > 0})
			copy(clean[i:j+1], med[i:j+1])
		}
		i = j + 1
	}
	return runs, clean
}

// runningMedian returns the median of x over [i-h, i+h] for each i, the
// window shrunk symmetrically at the ends: the median of a monotone window
// is its middle sample, so that a trend, however steep, and a step, however
// high, leave no residual. (The first and last samples are their own
// median and never outliers: a slow first iteration is a step of the fit.)
func runningMedian(x []float64, h int) []float64 {
	n := len(x)
	out := make([]float64, n)
	buf := make([]float64, 0, 2*h+1)
	for i := range x {
		w := min(h, i, n-1-i)
		buf = append(buf[:0], x[i-w:i+w+1]...)
		out[i] = median(buf)
	}
	return out
}
