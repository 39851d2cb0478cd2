package waitstate

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Replayable tells whether files define a region the replay looks at (an
// MPI call, an OpenMP barrier): without one, a run has no wait state and
// a tool need not replay it.
func Replayable(files []*tracefile.File) bool {
	for _, f := range files {
		for _, reg := range f.Regions {
			switch kindOfRegion(reg) {
			case regionMPI, regionOMPBarrier, regionOMPImplicitBarrier:
				return true
			}
		}
	}
	return false
}

// WriteWhy prints the short form of r for the end of a summary: the top
// patterns by time, each with where it waited most and the call path that
// caused most of it (its delay costs), then the critical path's most
// imbalanced region. It prints nothing when r holds no wait.
func WriteWhy(w io.Writer, r *Result, top int) error {
	var pats []Pattern
	for p := Pattern(0); p < NumPatterns; p++ {
		if _, sub := p.Parent(); !sub && r.Totals[p] > 0 {
			pats = append(pats, p)
		}
	}
	if len(pats) == 0 {
		return nil
	}
	slices.SortStableFunc(pats, func(a, b Pattern) int { return cmp.Compare(r.Totals[b], r.Totals[a]) })
	causes := r.Causes()
	var all int64
	for _, p := range pats {
		all += r.Totals[p]
	}
	fmt.Fprintln(w)
	share := 0.0
	if r.Total > 0 {
		share = 100 * float64(all) / float64(r.Total)
	}
	fmt.Fprintf(w, "Why ranks wait: %s of waiting in all, %.2f%% of the run (hmbtrace waitstate tells more):\n", ms(all), share)
	for i, p := range pats {
		if i >= top {
			break
		}
		worst := Value{Loc: -1}
		for _, v := range r.Pattern(p) {
			if v.Time > worst.Time {
				worst = v
			}
		}
		fmt.Fprintf(w, "  %s %s, %.2f%% of the run: most in %s on %s (%s)", ms(r.Totals[p]), p, 100*r.Share(p),
			textname.Escape(r.PathName(worst.Path)), textname.Escape(r.describe(worst.Loc)), ms(worst.Time))
		for _, c := range causes {
			if c.Pattern == p {
				fmt.Fprintf(w, "; caused most by %s on %s (%s", textname.Escape(r.PathName(c.Path)), textname.Escape(r.describe(c.Loc)), ms(c.Short))
				if c.Long > 0 {
					fmt.Fprintf(w, " directly, %s through waits it propagated", ms(c.Long))
				}
				fmt.Fprint(w, ")")
				break
			}
		}
		fmt.Fprintln(w)
	}
	if cp := r.CriticalPath; cp != nil && len(cp.Regions) > 0 {
		best := cp.Regions[0]
		for _, g := range cp.Regions {
			if g.Imbalance > best.Imbalance {
				best = g
			}
		}
		fmt.Fprintf(w, "  critical path %s; %s holds %s of it", ms(cp.Length), textname.Escape(cp.Regions[0].Region), ms(cp.Regions[0].Path))
		if best.Imbalance > 0 {
			fmt.Fprintf(w, ", the largest imbalance is %s's (%s over its mean per location)", textname.Escape(best.Region), ms(best.Imbalance))
		}
		fmt.Fprintln(w)
	}
	return nil
}
