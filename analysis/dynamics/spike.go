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

// findSpikes returns the runs of samples of x that stand out of the running
// median by more than z·noise, and a copy of x with the median in their
// place.
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

// periodicMin is the shortest period recognised: with a period of 4 or more
// the running median's window of 7 holds at most two of the peaks and still
// gives the level between them.
const periodicMin = 4

// periodicRun is a peak that recurs every period iterations, at from,
// from+period, ... up to to.
type periodicRun struct {
	period, from, to int
}

// findPeriodic looks among the one-iteration upward outliers for a regular
// pattern: at least four, at least half of the places of a period p ≥
// periodicMin between the first and the last of them taken, over at least
// half of the series, and four in five of them at those places. The
// spacing most common between consecutive ones is p: outliers the threshold
// missed leave gaps of 2p or 3p, which still count.
func findPeriodic(runs []spikeRun, n int) (periodicRun, bool) {
	var at []int
	for _, r := range runs {
		if r.up && r.from == r.to {
			at = append(at, r.from)
		}
	}
	if len(at) < 4 {
		return periodicRun{}, false
	}
	gaps := map[int]int{}
	for k := 1; k < len(at); k++ {
		gaps[at[k]-at[k-1]]++
	}
	p, most := 0, 0
	for g, c := range gaps {
		if c > most || c == most && g < p {
			p, most = g, c
		}
	}
	if p < periodicMin {
		return periodicRun{}, false
	}
	phase := map[int]int{}
	for _, i := range at {
		phase[i%p]++
	}
	ph, on := 0, 0
	for f, c := range phase {
		if c > on || c == on && f < ph {
			ph, on = f, c
		}
	}
	first, last := -1, -1
	for _, i := range at {
		if i%p == ph {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	places := (last-first)/p + 1
	if on < 4 || 5*on < 4*len(at) || 3*on < places || 2*(last-first) < n {
		return periodicRun{}, false
	}
	// The pattern holds over the whole series: its places before the
	// first and after the last outlier found are part of it too.
	return periodicRun{period: p, from: ph, to: ph + (n-1-ph)/p*p}, true
}

// at reports whether sample i is one of the run's places.
func (r periodicRun) at(i int) bool {
	return r.period > 0 && i >= r.from && i <= r.to && (i-r.from)%r.period == 0
}

// clean puts in place of each of the run's places in c the median of x
// around it without the run's places (a window of 7 others, moved inward
// at the ends), and returns the other outliers: runs cut where they touch
// a place of the pattern.
func (r periodicRun) clean(x, c []float64, runs []spikeRun) []spikeRun {
	n := len(x)
	var buf []float64
	for i := r.from; i <= r.to; i += r.period {
		buf = buf[:0]
		for d := 1; len(buf) < 2*spikeHalfWindow && d < n; d++ {
			for _, j := range [2]int{i - d, i + d} {
				if j >= 0 && j < n && !r.at(j) && len(buf) < 2*spikeHalfWindow {
					buf = append(buf, c[j])
				}
			}
		}
		if len(buf) > 0 {
			c[i] = median(buf)
		}
	}
	var out []spikeRun
	for _, s := range runs {
		from := s.from
		for i := s.from; i <= s.to+1; i++ {
			if i > s.to || r.at(i) {
				if i > from {
					out = append(out, spikeRun{from: from, to: i - 1, up: s.up})
				}
				from = i + 1
			}
		}
	}
	return out
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
