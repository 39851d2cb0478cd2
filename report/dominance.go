package report

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The choice of the time-dominant region, as variation.TimeDominant makes
// it (with the heat map's extra synchronization patterns, which that
// function does not take), reading the locations' events in parallel when
// a candidate's waiting must be measured.

type regionKind uint8

const (
	kindWork     regionKind = iota
	kindSync                // a synchronization region: waiting
	kindParadigm            // an MPI call or an OpenMP construct
	kindTask                // an OpenMP task's execution: work even inside a barrier
)

// classifier tells the kind of a region by its name and paradigm.
type classifier struct {
	sync     analysis.SyncMatcher
	paradigm map[string]tracefile.Paradigm
}

func newClassifier(files []*tracefile.File, sync analysis.SyncMatcher) classifier {
	c := classifier{sync: sync, paradigm: map[string]tracefile.Paradigm{}}
	for _, f := range files {
		for _, r := range f.Regions {
			if r.Paradigm == tracefile.ParadigmMPI || r.Paradigm == tracefile.ParadigmOpenMP {
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
// communication.
func (c classifier) waits(name string, k regionKind) bool {
	return k == kindSync || k == kindParadigm && c.paradigm[name] == tracefile.ParadigmMPI
}

// timeDominant picks the time-dominant region of files (Weber et al.) as
// variation.TimeDominant does, with sync's extra patterns.
func timeDominant(files []*tracefile.File, totals []variation.RegionTotal, sync analysis.SyncMatcher) (variation.Dominance, error) {
	d := variation.Dominance{}
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
		// A region with at most MaxWaitShare of its time in nested
		// regions cannot wait more, and needs no walk over the events.
		nested := t.Inclusive - t.Exclusive
		if shares == nil && float64(nested) > variation.MaxWaitShare*float64(t.Inclusive) {
			var err error
			if shares, err = waitShares(files, cl); err != nil {
				return d, err
			}
		}
		if s := shares[t.Name].share(); s > variation.MaxWaitShare {
			if !found {
				d.Waiting = append(d.Waiting, variation.WaitingRegion{RegionTotal: t, Share: s})
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
		return d, &variation.NoComputationError{Dominance: d}
	}
	return d, fmt.Errorf("analysis: no region is invoked at least %d times (2 × %d locations); name the region to segment by", d.MinVisits, d.Locations)
}

// waitShare is a region's traced inclusive time, its outermost calls'
// only, and the part of it spent waiting in MPI calls or synchronization
// regions nested in it, less the OpenMP tasks run inside them.
type waitShare struct {
	traced, waiting int64 // ns
}

func (w waitShare) share() float64 {
	if w.traced <= 0 {
		return 0
	}
	return float64(w.waiting) / float64(w.traced)
}

// waitShares reads every event of files once, the locations in parallel,
// and returns the waitShare of each region by name. Without any MPI or
// synchronization region no region waits, and no event is read.
func waitShares(files []*tracefile.File, cl classifier) (map[string]waitShare, error) {
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
	type fileKinds struct {
		kinds []regionKind
		waits []bool
		names []string
	}
	fk := make([]fileKinds, len(files))
	type ref struct{ file, loc int }
	var refs []ref
	for fi, f := range files {
		n := len(f.Regions) + 1
		k := fileKinds{make([]regionKind, n), make([]bool, n), make([]string, n)}
		for _, r := range f.Regions {
			if int(r.ID) < n {
				k.kinds[r.ID] = cl.kind(r.Name)
				k.waits[r.ID] = cl.waits(r.Name, k.kinds[r.ID])
				k.names[r.ID] = r.Name
			}
		}
		fk[fi] = k
		for i := range f.Locations {
			refs = append(refs, ref{fi, i})
		}
	}
	per := make([][]waitShare, len(refs))
	errs := make([]error, len(refs))
	parallel(len(refs), func(i int) {
		f, k := files[refs[i].file], fk[refs[i].file]
		per[i], errs[i] = locationWaitShares(f, &f.Locations[refs[i].loc], k.kinds, k.waits)
	})
	for i, ref := range refs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		names := fk[ref.file].names
		for id, s := range per[i] {
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

// locationWaitShares measures the wait shares of one location's regions,
// indexed by region id (0 for the ids the file does not define).
func locationWaitShares(f *tracefile.File, loc *tracefile.Location, kinds []regionKind, waits []bool) ([]waitShare, error) {
	type frame struct {
		region    uint32
		outermost bool
		enter     int64 // ns
		marks     int   // open marks when it was entered
		waitedAt  int64 // nested[marks] when it was entered
		mark      bool  // a wait or task region: changes whether time is waiting
	}
	n := len(kinds)
	active := make([]int, n)
	slot := func(id uint32) uint32 {
		if int(id) < n {
			return id
		}
		return 0
	}
	per := make([]waitShare, n)
	var (
		stack []frame
		marks []bool // the open wait (true) and task (false) regions, innermost last
		// nested[k] is the time spent waiting so far while the innermost
		// open mark was the k-th or a later one.
		nested []int64
		since  int64 // last time accounted
	)
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
	var e tracefile.Event
	it := f.Events(loc.ID)
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
