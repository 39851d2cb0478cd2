package variation

import (
	"errors"
	"fmt"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// DominanceRule says how the time-dominant region is chosen, for the help of
// the commands that print it.
const DominanceRule = `The time-dominant region (Weber et al.) is the region of the program's own computation with the
highest inclusive time summed over all locations, among those invoked at least 2p times on p locations
(so that its invocations cut every location into segments). Not candidates: MPI calls and OpenMP
constructs, synchronization regions (MPI waits and collectives, OpenMP barriers and waits, -sync
patterns), and regions that spend more than half of their traced time in MPI calls and
synchronization nested in them (an iteration that mostly waits in MPI_Allreduce on a loaded
machine): waiting and communication are what the SOS-time subtracts, never the work measured.
A trace with no other region, such as one of the MPI wrappers alone, has no time-dominant region:
then name one with -region.`

// MaxWaitShare is the share of its traced time a region may spend in MPI
// calls, OpenMP constructs' waits and synchronization regions nested in it
// and still be a candidate for the time-dominant region.
const MaxWaitShare = 0.5

// ErrNoComputation is the error (a *NoComputationError, with the regions
// that were passed over) of a trace in which every region invoked often enough is an
// MPI call, an OpenMP construct, a synchronization region or mostly waits
// in them.
var ErrNoComputation = errors.New("no computation region")

// Dominance is the choice of the time-dominant region (Weber et al.,
// section IV): of the regions of the program's computation invoked at least
// 2p times over p locations, the one with the highest aggregated inclusive
// time. Top-level regions such as main have the most inclusive time but only
// one invocation per location; they would not cut the run into segments.
// Communication and synchronization are what the SOS-time subtracts, so they
// are never the candidate, and neither is a region that mostly waits in them.
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
	// Paradigm are the MPI calls and OpenMP constructs, other than the
	// synchronization regions, with more inclusive time than Region.
	Paradigm []RegionTotal
	// Waiting are the regions with more inclusive time than Region that
	// spend more than MaxWaitShare of their traced time in MPI calls or
	// synchronization regions nested in them.
	Waiting []WaitingRegion
}

// WaitingRegion is a region passed over for waiting most of its time.
type WaitingRegion struct {
	RegionTotal
	Share float64 // of its traced inclusive time, spent in MPI calls and synchronization
}

// regionKind is what a region is to the choice of the time-dominant one.
type regionKind uint8

const (
	kindWork     regionKind = iota
	kindSync                // a synchronization region: waiting
	kindParadigm            // an MPI call (time in it is communication) or an OpenMP construct
	kindTask                // an OpenMP task's execution: work even inside a barrier
)

// classifier tells the kind of a region by its name and paradigm.
type classifier struct {
	sync     analysis.SyncMatcher
	paradigm map[string]tracefile.Paradigm // regions not of the user's or the compiler's paradigm, by name
}

func newClassifier(files []*tracefile.File, sync analysis.SyncMatcher) classifier {
	c := classifier{sync: sync, paradigm: map[string]tracefile.Paradigm{}}
	for _, f := range files {
		for _, r := range f.Regions {
			if r.Paradigm.Runtime() {
				c.paradigm[r.Name] = r.Paradigm
			}
		}
	}
	return c
}

func (c classifier) kind(name string) regionKind {
	switch {
	case c.sync.Match(name):
		return kindSync
	case analysis.IsTaskRun(name):
		return kindTask
	case c.paradigm[name] != 0 || analysis.IsOpenMPName(name):
		return kindParadigm
	}
	return kindWork
}

// waits reports whether time in a region of kind k is waiting or
// communication: synchronization and MPI calls, not the OpenMP constructs
// whose bodies (a parallel region's, a loop's) are the program's work.
func (c classifier) waits(name string, k regionKind) bool {
	return k == kindSync || k == kindParadigm && c.paradigm[name] == tracefile.ParadigmMPI
}

// TimeDominant picks the time-dominant region of files, from their exact
// flat profiles (events the buffer shed count too), and the share of each
// candidate's traced time spent waiting, from their events. Ties in
// inclusive time go to the region with more invocations, then to the name
// first in order.
// The events are read by HMB_TOOL_PROCS or GOMAXPROCS workers.
func TimeDominant(files []*tracefile.File) (Dominance, error) {
	procs, err := parallel.Procs(0)
	if err != nil {
		return Dominance{}, fmt.Errorf("analysis: %w", err)
	}
	return timeDominant(files, Totals(files), analysis.SyncMatcher{}, procs)
}

// timeDominant is TimeDominant of the files' Totals that also passes over
// the regions of the extra synchronization patterns (variation -sync),
// with procs workers.
func timeDominant(files []*tracefile.File, totals []RegionTotal, sync analysis.SyncMatcher, procs int) (Dominance, error) {
	d := Dominance{}
	for _, f := range files {
		d.Locations += len(f.Locations)
	}
	d.MinVisits = 2 * uint64(d.Locations)
	if d.Locations == 0 {
		return d, fmt.Errorf("analysis: the trace has no locations")
	}
	cl := newClassifier(files, sync)
	var shares map[string]waitShare // computed when the first candidate needs it
	found, often := false, 0
	for _, t := range totals {
		k := cl.kind(t.Name)
		if t.Visits >= d.MinVisits {
			often++
		}
		switch {
		case k == kindSync:
			if !found {
				d.Sync = append(d.Sync, t)
			}
			continue
		case k == kindParadigm:
			if !found {
				d.Paradigm = append(d.Paradigm, t)
			}
			continue
		case t.Visits < d.MinVisits:
			if !found {
				d.Ineligible = append(d.Ineligible, t)
			}
			continue
		}
		// Time in nested regions is inclusive less exclusive time: a region
		// with at most MaxWaitShare of it cannot wait more, and needs no
		// walk over the events.
		nested := t.Inclusive - t.Exclusive
		if shares == nil && float64(nested) > MaxWaitShare*float64(t.Inclusive) {
			var err error
			if shares, err = waitShares(files, cl, procs); err != nil {
				return d, err
			}
		}
		if s := shares[t.Name].share(); s > MaxWaitShare {
			if !found {
				d.Waiting = append(d.Waiting, WaitingRegion{t, s})
			}
			continue
		}
		switch {
		case !found:
			d.Region, found = t, true
		case !d.HasRunnerUp:
			d.RunnerUp, d.HasRunnerUp = t, true
		}
	}
	switch {
	case found:
		return d, nil
	case often > 0:
		return d, &NoComputationError{Dominance: d}
	}
	return d, fmt.Errorf("analysis: no region is invoked at least %d times (2 × %d locations); name the region to segment by", d.MinVisits, d.Locations)
}

// waitShare is a region's traced inclusive time, its outermost calls'
// only, and the part of it spent waiting in MPI calls or synchronization
// regions nested in it, less the OpenMP tasks run inside them. A call
// inside a wait (a region the user named as synchronization, say) does not
// wait itself unless a wait is nested in it.
type waitShare struct {
	traced, waiting int64 // ns
}

// share returns the part of the traced time spent waiting; 0 for a region
// the trace does not hold (its events were shed), which then counts as
// computation, as its flat profile cannot tell.
func (w waitShare) share() float64 {
	if w.traced <= 0 {
		return 0
	}
	return float64(w.waiting) / float64(w.traced)
}

// waitShares reads every event of files once and returns the waitShare of
// each region by name, the locations on procs workers (the sums are of
// integers, so they do not depend on the order). Without any MPI or
// synchronization region no region waits, and no event is read.
func waitShares(files []*tracefile.File, cl classifier, procs int) (map[string]waitShare, error) {
	out := map[string]waitShare{}
	some := false
	for _, f := range files {
		for _, r := range f.Regions {
			some = some || cl.waits(r.Name, cl.kind(r.Name))
		}
	}
	if !some {
		return out, nil
	}
	type fileRegions struct {
		kinds []regionKind
		waits []bool
		names []string
	}
	byFile := make([]fileRegions, len(files))
	type where struct{ file, loc int }
	var locs []where
	for i, f := range files {
		n := len(f.Regions) + 1
		fr := fileRegions{kinds: make([]regionKind, n), waits: make([]bool, n), names: make([]string, n)}
		for _, r := range f.Regions {
			if int(r.ID) < n {
				fr.kinds[r.ID] = cl.kind(r.Name)
				fr.waits[r.ID] = cl.waits(r.Name, fr.kinds[r.ID])
				fr.names[r.ID] = r.Name
			}
		}
		byFile[i] = fr
		for k := range f.Locations {
			locs = append(locs, where{i, k})
		}
	}
	perLoc := make([][]waitShare, len(locs))
	err := parallel.Do(procs, len(locs), func(n int) error {
		f, fr := files[locs[n].file], byFile[locs[n].file]
		per, err := locationWaits(f, &f.Locations[locs[n].loc], fr.kinds, fr.waits, procs > len(locs))
		perLoc[n] = per
		return err
	})
	if err != nil {
		return nil, err
	}
	for n, per := range perLoc {
		names := byFile[locs[n].file].names
		for id, s := range per {
			if id == 0 || s.traced == 0 {
				continue
			}
			t := out[names[id]]
			t.traced += s.traced
			t.waiting += s.waiting
			out[names[id]] = t
		}
	}
	return out, nil
}

// locationWaits returns the waitShare of each region id of file f (0 for
// the ids the file does not define) on location loc; with ahead, its
// events are read on a goroutine of their own.
func locationWaits(f *tracefile.File, loc *tracefile.Location, kinds []regionKind, waits []bool, ahead bool) ([]waitShare, error) {
	type frame struct {
		region    uint32
		outermost bool
		enter     int64 // ns
		marks     int   // open marks when it was entered
		waitedAt  int64 // nested[marks] when it was entered
		mark      bool  // a wait or task region: changes whether time is waiting
	}
	n := len(kinds)
	slot := func(id uint32) uint32 {
		if int(id) < n {
			return id
		}
		return 0
	}
	active := make([]int, n)
	per := make([]waitShare, n)
	var (
		e     tracefile.Event
		stack []frame
		marks []bool // the open wait (true) and task (false) regions, innermost last
		// nested[k] is the time spent waiting so far while the
		// innermost open mark was the k-th or a later one: the
		// waiting nested in a call entered with k marks open.
		nested []int64
		since  int64 // last time accounted
	)
	// account adds the time up to now to the waiting in the
	// innermost mark, and to that of every call around it.
	account := func(now int64) {
		if k := len(marks) - 1; k >= 0 && marks[k] {
			for len(nested) <= k {
				nested = append(nested, 0)
			}
			for j := 0; j <= k; j++ {
				nested[j] += now - since
			}
		}
		since = now
	}
	it := f.EventsWith(loc.ID, ahead)
	defer it.Close()
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindEnter:
			id := slot(e.Region)
			now := f.Nanos(e.Time)
			account(now)
			fr := frame{region: id, outermost: active[id] == 0 && !e.Truncated, enter: now,
				marks: len(marks), mark: waits[id] || kinds[id] == kindTask}
			for len(nested) <= fr.marks {
				nested = append(nested, 0)
			}
			fr.waitedAt = nested[fr.marks]
			if fr.mark {
				marks = append(marks, waits[id])
			}
			stack = append(stack, fr)
			active[id]++
		case encode.KindLeave:
			if len(stack) == 0 {
				continue
			}
			now := f.Nanos(e.Time)
			account(now)
			fr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			active[fr.region]--
			if fr.mark && len(marks) > 0 {
				marks = marks[:len(marks)-1]
			}
			if fr.outermost {
				per[fr.region].traced += now - fr.enter
				per[fr.region].waiting += nested[fr.marks] - fr.waitedAt
			}
		}
	}
	return per, it.Err()
}
