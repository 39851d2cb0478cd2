package analysis

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Dominance is the choice of the time-dominant region (seed 000, section
// IV): of the regions invoked at least 2p times over p locations, the one
// with the highest aggregated inclusive time. Top-level regions such as
// main have the most inclusive time but only one invocation per location;
// they would not cut the run into segments.
type Dominance struct {
	Locations int         // p: locations of all files
	MinVisits uint64      // 2p
	Region    RegionTotal // the time-dominant region
	// RunnerUp is the eligible region with the next highest inclusive time;
	// HasRunnerUp is false when there is none.
	RunnerUp    RegionTotal
	HasRunnerUp bool
	// Ineligible are the regions with more inclusive time than Region that
	// were passed over for having fewer than MinVisits invocations.
	Ineligible []RegionTotal
	// Sync are the synchronization regions (DefaultSync, Options.Sync) with more
	// inclusive time than Region: waiting is never the work a run is cut
	// into segments by, however often a barrier is entered.
	Sync []RegionTotal
}

// TimeDominant picks the time-dominant region of files, from their exact
// flat profiles (events the buffer shed count too). Ties in inclusive time
// go to the region with more invocations, then to the name first in order.
func TimeDominant(files []*tracefile.File) (Dominance, error) {
	return timeDominant(files, syncMatcher{})
}

// timeDominant is TimeDominant that also passes over the regions of the
// extra synchronization patterns (variation -sync).
func timeDominant(files []*tracefile.File, sync syncMatcher) (Dominance, error) {
	d := Dominance{}
	for _, f := range files {
		d.Locations += len(f.Locations)
	}
	d.MinVisits = 2 * uint64(d.Locations)
	if d.Locations == 0 {
		return d, fmt.Errorf("analysis: the trace has no locations")
	}
	found := false
	for _, t := range Totals(files) {
		switch {
		case sync.match(t.Name):
			if !found {
				d.Sync = append(d.Sync, t)
			}
		case t.Visits < d.MinVisits:
			if !found {
				d.Ineligible = append(d.Ineligible, t)
			}
		case !found:
			d.Region, found = t, true
		case !d.HasRunnerUp:
			d.RunnerUp, d.HasRunnerUp = t, true
		}
	}
	if !found {
		return d, fmt.Errorf("analysis: no region is invoked at least %d times (2 × %d locations); name the region to segment by", d.MinVisits, d.Locations)
	}
	return d, nil
}
