package trend

import (
	"github.com/hmbtrace/hmbtrace/analysis/dynamics"
)

// A region's time includes the time of the regions it calls: when "update
// row" slows down from iteration 244, so do "compute" around it and the
// iteration itself, by the same amount. Listing all three would tell one
// finding three times; it is told once, at the innermost region, with the
// enclosing ones named.
//
// A phase series does not record which region calls which, so enclosure is
// read from the values: region P can enclose C on a location if P's value
// is at least C's in every sample (a caller's inclusive time holds its
// callee's). P's feature echoes C's if it has the same kind, their
// iterations overlap by at least half of the shorter, and C's cost is at
// least half of P's with the same sign: most of P's change is C's.

// featureRef names one feature of one series.
type featureRef struct {
	s *Series
	f dynamics.Feature
}

// fold records that region's feature was folded into into.
type fold struct {
	region string
	into   featureRef
}

// fold removes from r.Relevant every feature that echoes one of a region
// inside it and records where it went.
func (r *Result) fold() {
	type key struct{ location, metric string }
	groups := map[key][]int{}
	for i, s := range r.Series {
		k := key{s.Location, s.Metric}
		groups[k] = append(groups[k], i)
	}
	target := map[featureRef]featureRef{}
	for _, members := range groups {
		for _, p := range members {
			for _, pf := range r.Relevant[p] {
				var best featureRef
				bestTotal := 0.0
				for _, c := range members {
					if c == p || !encloses(r.Series[p], r.Series[c]) {
						continue
					}
					for _, cf := range r.Relevant[c] {
						if echoes(pf, cf) {
							if t := r.Series[c].Total(); best.s == nil || t < bestTotal {
								best, bestTotal = featureRef{r.Series[c], cf}, t
							}
						}
					}
				}
				if best.s != nil {
					target[featureRef{r.Series[p], pf}] = best
				}
			}
		}
	}
	if len(target) == 0 {
		return
	}
	// Follow chains to the innermost region: iteration → compute → update row.
	final := func(ref featureRef) featureRef {
		for range len(target) {
			next, ok := target[ref]
			if !ok {
				break
			}
			ref = next
		}
		return ref
	}
	for i, s := range r.Series {
		kept := r.Relevant[i][:0:0]
		for _, f := range r.Relevant[i] {
			ref := featureRef{s, f}
			if _, ok := target[ref]; ok {
				r.folded = append(r.folded, fold{region: s.Region, into: final(ref)})
				continue
			}
			kept = append(kept, f)
		}
		if len(kept) == 0 && len(r.Relevant[i]) > 0 {
			r.echoes[s] = true
		}
		r.Relevant[i] = kept
	}
}

// encloses reports whether p's values are at least c's in every sample
// (within rounding), and p is not c's twin: some sample is larger.
func encloses(p, c *Series) bool {
	if len(p.Values) != len(c.Values) || p.Region == c.Region {
		return false
	}
	larger := false
	for k, v := range p.Values {
		w := c.Values[k]
		if v < w-1e-9*max(v, w) {
			return false
		}
		if v > w {
			larger = true
		}
	}
	return larger
}

// echoes reports whether the enclosing region's feature p is mostly the
// enclosed region's feature c.
func echoes(p, c dynamics.Feature) bool {
	if p.Kind != c.Kind || sign(p.Severity) != sign(c.Severity) {
		return false
	}
	lo, hi := max(p.From, c.From), min(p.To, c.To)
	shorter := min(p.To-p.From, c.To-c.From) + 1
	if hi < lo || 2*(hi-lo+1) < shorter {
		return false
	}
	return 2*abs(c.Severity) >= abs(p.Severity)
}

func sign(v float64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
