package summary

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
	"github.com/hmbtrace/hmbtrace/render"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// throttleVerdict says why a region was or was not throttled, over the
// locations of the files that timed enough of its visits for the rule
// (tracefile.ThrottleRule) to decide, or that throttled it.
type throttleVerdict struct {
	Name string
	// Off and Early count the locations that switched it off, Early those
	// at the rule's early step; Visits and Long are their timed visits and
	// long calls, summed.
	Off, Early   int
	Visits, Long uint64
	// Kept counts the locations that visited it at least the early step's
	// visits and kept it; KeptVisits and KeptLong are theirs, summed, and
	// BelowLate those of them with fewer visits than the late step's.
	Kept, BelowLate      int
	KeptVisits, KeptLong uint64
	// Few counts the locations that kept it with fewer visits than the
	// early step's: the rule never looked at it there.
	Few int
}

// throttleVerdicts returns the verdicts of the regions throttled on any
// location and of those the rule looked at and kept, by name: the
// throttled ones first, then by visits, the most first. It returns the
// rule of the first file that has one, nil if none has (throttling off, or
// files written before the rule was recorded).
func throttleVerdicts(files []*tracefile.File) ([]throttleVerdict, *tracefile.ThrottleRule) {
	var first *tracefile.ThrottleRule
	byName := map[string]*throttleVerdict{}
	for _, f := range files {
		rule := f.ThrottleRule
		if rule == nil {
			continue
		}
		if first == nil {
			first = rule
		}
		for i := range f.Locations {
			l := &f.Locations[i]
			for _, e := range l.Profile {
				if paradigmOf(&f.Trace, e.Region).Runtime() || l.Phase != nil && e.Region == l.Phase.Region {
					continue // never throttled, as the phase region: the rule does not apply
				}
				name := f.RegionName(e.Region)
				v := byName[name]
				if v == nil {
					v = &throttleVerdict{Name: name}
					byName[name] = v
				}
				switch {
				case e.Throttled:
					v.Off++
					v.Visits += e.Visits
					v.Long += e.LongCalls
					if e.LongCalls<<rule.EarlyShift <= e.Visits {
						v.Early++
					}
				case e.Visits >= rule.Early:
					v.Kept++
					v.KeptVisits += e.Visits
					v.KeptLong += e.LongCalls
					if e.Visits < rule.Calls {
						v.BelowLate++
					}
				default:
					v.Few++
				}
			}
		}
	}
	var out []throttleVerdict
	for _, v := range byName {
		if v.Off > 0 || v.Kept > 0 {
			out = append(out, *v)
		}
	}
	slices.SortFunc(out, func(a, b throttleVerdict) int {
		if (a.Off > 0) != (b.Off > 0) {
			if a.Off > 0 {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Visits+b.KeptVisits, a.Visits+a.KeptVisits); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out, first
}

// The most regions the summary lists switched off, and looked at and
// kept, the most visited first: a C++ code can have hundreds of accessors.
const (
	throttleOffRows  = 12
	throttleKeptRows = 8
)

// throttling prints why regions were or were not throttled: the rule, and
// a line per region the rule switched off or looked at and kept.
func throttling(out io.Writer, files []*tracefile.File, width int) {
	vs, rule := throttleVerdicts(files)
	if len(vs) == 0 {
		return
	}
	tps := files[0].Header.TicksPerSecond
	for _, f := range files {
		if f.ThrottleRule != nil {
			tps = f.Header.TicksPerSecond
			break
		}
	}
	long := "?"
	if tps > 0 {
		long = units.Duration(float64(rule.LongTicks) / tps * 1e9)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Throttling (HMB_THROTTLE): a call is long from %s; a region is switched off after %s visits if at most 1 call in %s was long, after %s if at most 1 in %s\n",
		long, units.Count(rule.Early), units.Count(1<<rule.EarlyShift), units.Count(rule.Calls), units.Count(1<<rule.LateShift))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	off, kept := 0, 0
	for _, v := range vs {
		n, most := &kept, throttleKeptRows
		if v.Off > 0 {
			n, most = &off, throttleOffRows
		}
		if *n++; *n <= most {
			fmt.Fprintf(tw, "  %s\t%s\n", render.Shorten(textname.Escape(v.Name), width), throttleReason(v, rule))
		}
	}
	tw.Flush()
	if off > throttleOffRows {
		fmt.Fprintf(out, "  and %s switched off\n", units.Plural(off-throttleOffRows, "more region", "more regions"))
	}
	if kept > throttleKeptRows {
		fmt.Fprintf(out, "  and %s looked at and kept\n", units.Plural(kept-throttleKeptRows, "more region", "more regions"))
	}
}

// throttleReason is a verdict's text.
func throttleReason(v throttleVerdict, rule *tracefile.ThrottleRule) string {
	s := ""
	if v.Off > 0 {
		step := fmt.Sprintf("%d early", v.Early)
		switch v.Early {
		case v.Off:
			step = "early"
		case 0:
			step = "late"
		}
		s = fmt.Sprintf("off on %s (%s): %s of %s timed calls long", units.Plural(v.Off, "location", "locations"), step,
			units.Count(v.Long), units.Count(v.Visits))
	}
	if v.Kept > 0 {
		if s != "" {
			s += "; "
		}
		why := fmt.Sprintf("more than 1 in %s", units.Count(1<<rule.LateShift))
		if v.BelowLate == v.Kept {
			why = fmt.Sprintf("more than 1 in %s, and fewer than %s visits", units.Count(1<<rule.EarlyShift), units.Count(rule.Calls))
		}
		s += fmt.Sprintf("kept on %s: %s of %s calls long (%s)", units.Plural(v.Kept, "location", "locations"),
			units.Count(v.KeptLong), units.Count(v.KeptVisits), why)
	}
	if v.Few > 0 && v.Off > 0 {
		s += fmt.Sprintf("; kept on %s with fewer than %s visits", units.Plural(v.Few, "location", "locations"), units.Count(rule.Early))
	}
	return s
}
