package variation

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hmbtrace/hmbtrace/analysis"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// DominanceRule says how the time-dominant region is chosen, for the help of
// the commands that print it.
const DominanceRule = `The time-dominant region is the region that carries the run's iterations. Candidates are the
program's own regions and the OpenMP constructs that run its code (parallel regions, loops), invoked
at least 2p times on p locations (Weber et al.), whatever share of their time they wait in MPI calls
or synchronization nested in them: the SOS-time subtracts that waiting. MPI calls and
synchronization regions (MPI waits and collectives, OpenMP barriers and waits, -sync patterns) are
not candidates. Each candidate is weighed by its SOS-time (its aggregated inclusive time less the
share of it spent waiting), which the load on the machine does not change, and the one with the
most is chosen, unless it is invoked at an irregular period (a helper called in bursts) and another
with at least 80 % of its SOS-time is regular. So a setup routine covering a few percent of the run
is never chosen over a solver covering most of it, however long the solver waits.
When no candidate covers 10 % of the run, or, with a collective loop as below, the best holds under
10 % of the run's computation (its time outside MPI calls and synchronization), or is called at
least twice per call of the loop and holds under half of it (a phase of the iteration, the solver
inlined into main as in LULESH), the iterations are cut
between consecutive calls of the MPI collective every location calls equally often, its calls
spanning at least half the run less the time waited in MPI calls and synchronization before its
first call (startup skew on a loaded machine is no run time; the fewest such calls, at least 2 per
location), and the output says so. A segment runs from one call to the next when the location returned
no higher in between than the depth it most often returns to between two calls, its loop's: wrappers
(ddot, gsum, a timer's barrier two functions down, several functions calling it in turn) return above
the call every iteration, to the same depth; a gap that returns higher left the loop (a later phase), and
the output says how many calls began the iterations again that way. When only
the master thread of each rank calls that collective
(MPI+OpenMP), every thread of the rank is cut at its master's calls (the threads of one process share
its clock; a thread's time outside every region is its wait for its master), and the output says the
cut was taken from the master thread. A weak choice (under
10 % of the run, or fewer invocations than that collective's loop) is reported with what to do:
mark the iterations with HMB_PHASE or a user region, or build with -fno-inline.
A trace with neither has no time-dominant region: then name one with -region.`

// StrongShare is the share of the largest candidate's SOS-time a regular
// candidate needs to be chosen over it when it is irregular.
const StrongShare = 0.8

// LoopSpan is the share of the run the calls of a collective must span,
// from the first to the last, to be the loop the fallback cuts at; the
// run less the time the locations waited in MPI calls and
// synchronization before its first call (Dominance.Loop).
const LoopSpan = 0.5

// WeakShare is the share of the run under which a chosen region is weak:
// its segments miss most of what the run does.
const WeakShare = 0.10

// MaxIrregularity is the largest standard deviation of the natural
// logarithms of the intervals between a region's consecutive invocations
// (the median over the locations) at which its period counts as regular.
// A loop of 40 iterations, 4 ranks on 2 shared cores, measured 1.15, and
// a few iterations 20× as long as the others add 0.5 to 0.8; a helper
// called 10 times in a burst per iteration, with a gap 1,000 times its
// period, is above it (2.1).
const MaxIrregularity = 2.0

// ErrNoComputation is the error (a *NoComputationError, with the regions
// that were passed over) of a trace in which every region invoked often
// enough is an MPI call or a synchronization region and no collective's
// calls span the run to cut the iterations at.
var ErrNoComputation = errors.New("no computation region")

// Weakness says why the choice of the time-dominant region is weak.
type Weakness uint8

const (
	// WeakNone: the region covers at least WeakShare of the run and is
	// invoked as often as the collective loop, if any.
	WeakNone Weakness = iota
	// WeakShareOfRun: the region covers less than WeakShare of the run
	// and no collective loop could replace it.
	WeakShareOfRun
	// WeakFewerThanLoop: the region is invoked fewer times per location
	// than half the calls of the collective loop (Dominance.Loop).
	WeakFewerThanLoop
	// WeakFallback: no region of the program carries the iterations; they
	// are cut between the calls of the collective Dominance.Loop.
	WeakFallback
	// WeakRankFallback: no region of the program carries the iterations
	// and the collective that does, Dominance.RankLoop, is called by one
	// thread of each rank (its master, in an MPI+OpenMP code): every
	// location is cut at the times of its rank master's calls
	// (Dominance.ByRank).
	WeakRankFallback
)

// Dominance is the choice of the time-dominant region (see DominanceRule):
// of the regions of the program's computation invoked at least 2p times
// over p locations, the one that carries the iterations. Top-level regions
// such as main have the most inclusive time but only one invocation per
// location; they would not cut the run into segments.
type Dominance struct {
	Locations int         // p: locations of all files
	MinVisits uint64      // 2p
	Region    RegionTotal // the time-dominant region (the collective when Between)
	// Run is the locations' run time summed (each location's time in
	// instrumented code less MPI_Init and MPI_Finalize, which no
	// iteration holds), in ns; Share is Region's inclusive time over it.
	Run   int64
	Share float64
	// Irregularity is the median over the locations of the standard
	// deviation of the logarithms of the intervals between Region's
	// invocations (see MaxIrregularity).
	Irregularity float64
	// Waiting is the share of Region's traced time spent in MPI calls and
	// synchronization nested in it: what its SOS-time subtracts.
	Waiting float64
	// Between says the segments run from one call of the collective
	// Region to the next: the fallback when no region of the program
	// carries the iterations.
	Between bool
	// ByRank says Region is the RankLoop, called by one location of each
	// rank: the rank's other locations are cut at the times of its calls,
	// as the threads of one process share its clock.
	ByRank bool
	// Weak says why the choice is weak (WeakNone when it is not).
	Weak Weakness
	// Loop is the collective called equally often on every location, its
	// calls spanning at least LoopSpan of the run less the waiting before
	// its first call, the fewest times (at least twice per location);
	// HasLoop is false when there is none.
	Loop    RegionTotal
	HasLoop bool
	// RankLoop is a collective that would be the Loop but that only one
	// location of each rank calls (the master thread of an MPI+OpenMP
	// code): when no region of the program carries the iterations, the
	// rank's other threads are cut at its calls' times (ByRank).
	// HasRankLoop is false when there is none.
	RankLoop    RegionTotal
	HasRankLoop bool
	// RunnerUp is the other candidate with the highest SOS-time;
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
	// Paradigm are the MPI calls, other than the synchronization regions,
	// with more inclusive time than Region.
	Paradigm []RegionTotal
	// Minor are the candidates with more inclusive time than Region passed
	// over: a smaller SOS-time, an irregular period or fewer invocations.
	Minor []MinorRegion
}

// MinorRegion is a candidate passed over for Dominance.Region.
type MinorRegion struct {
	RegionTotal
	Waiting float64 // share of its traced time spent in MPI calls and synchronization
	SOS     float64 // ns: its aggregated inclusive time less that share
	Regular bool    // invoked at a regular period
}

// regionKind is what a region is to the choice of the time-dominant one.
type regionKind uint8

const (
	kindWork     regionKind = iota
	kindSync                // a synchronization region: waiting
	kindParadigm            // an MPI call (time in it is communication)
	kindTask                // an OpenMP task's execution: work even inside a barrier
	kindOpenMP              // an OpenMP construct other than a wait: runs the program's code
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
	case analysis.IsOpenMPName(name) || c.paradigm[name] == tracefile.ParadigmOpenMP:
		return kindOpenMP
	case c.paradigm[name] != 0:
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

// collectives are the MPI calls every process of a communicator makes
// equally often: a loop that calls one per iteration is cut at its calls.
var collectives = []string{"MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Reduce_scatter",
	"MPI_Scan", "MPI_Exscan", "MPI_Gather", "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall"}

func isCollective(name string) bool {
	for _, c := range collectives {
		if rest, ok := strings.CutPrefix(name, c); ok && (rest == "" || rest == "v" || rest == "w" || rest == "_block") {
			return true
		}
	}
	return false
}

// isStartup tells the MPI calls that start and end the processes' MPI,
// which can take most of a short run and hold no iteration.
func isStartup(name string) bool {
	return name == "MPI_Init" || name == "MPI_Init_thread" || name == "MPI_Finalize"
}

// TimeDominant picks the time-dominant region of files, from their exact
// flat profiles (events the buffer shed count too) and the periods of the
// candidates' invocations, from their events.
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
	in := dominanceInput{totals: totals, cl: newClassifier(files, sync)}
	for _, f := range files {
		in.locations += len(f.Locations)
		if len(f.Locations) > 0 {
			in.ranks++
		}
		run, startup := runTimes(f)
		in.run += run
		in.startup += startup
	}
	return chooseDominance(in, func() (map[string]waitShare, int64, error) {
		sums, traced, err := waitSumsOf(files, in.cl, procs)
		return sums.shares(), traced, err
	})
}

// runTimes returns the time in instrumented code of the locations of f,
// less MPI_Init and MPI_Finalize, which no iteration holds, summed; and
// that startup time, in ns.
func runTimes(f *tracefile.File) (run, startup int64) {
	for i := range f.Locations {
		// The time in instrumented code: the exclusive times
		// partition it, also without a main around everything.
		var longest, covered, init uint64
		for _, p := range f.Locations[i].Profile {
			longest = max(longest, p.Inclusive)
			covered += p.Exclusive
			if isStartup(f.RegionName(p.Region)) {
				init += p.Inclusive
			}
		}
		run += f.TicksToNanos(max(longest, covered) - min(init, max(longest, covered)))
		startup += f.TicksToNanos(init)
	}
	return run, startup
}

// dominanceInput is what the choice of the time-dominant region starts
// from, besides the events: the run's totals, its locations, their run
// and startup times summed (runTimes), and the kinds of its regions.
type dominanceInput struct {
	totals       []RegionTotal
	locations    int
	ranks        int // files (processes) with locations
	run, startup int64
	cl           classifier
}

// chooseDominance chooses the time-dominant region of in (DominanceRule);
// walk returns the regions' waitShares and the traced time, from the
// events, called only when some region is a candidate.
func chooseDominance(in dominanceInput, walk func() (map[string]waitShare, int64, error)) (Dominance, error) {
	d := Dominance{Locations: in.locations, Run: in.run}
	totals, cl, startup := in.totals, in.cl, in.startup
	d.MinVisits = 2 * uint64(d.Locations)
	if d.Locations == 0 {
		return d, fmt.Errorf("analysis: the trace has no locations")
	}
	var cands, loops, rankLoops []RegionTotal
	often, ranks := 0, in.ranks
	for _, t := range totals {
		if t.Visits < d.MinVisits && !(isCollective(t.Name) && t.Visits >= 2*uint64(ranks)) {
			continue
		}
		if t.Visits >= d.MinVisits {
			often++
		}
		switch k := cl.kind(t.Name); {
		case t.Visits < d.MinVisits:
			if ranks < d.Locations && t.Locations == ranks && t.Visits%uint64(ranks) == 0 {
				rankLoops = append(rankLoops, t)
			}
		case k == kindWork || k == kindTask || k == kindOpenMP:
			cands = append(cands, t)
		case isCollective(t.Name) && t.Locations == d.Locations && t.Visits%uint64(d.Locations) == 0:
			loops = append(loops, t)
		case isCollective(t.Name) && ranks < d.Locations && t.Locations == ranks && t.Visits%uint64(ranks) == 0:
			rankLoops = append(rankLoops, t)
		}
	}
	var walked map[string]waitShare
	if len(cands)+len(loops)+len(rankLoops) > 0 {
		ws, traced, err := walk()
		if err != nil {
			return d, err
		}
		walked = ws
		// The events show the run also where the program's code is no
		// region (main not instrumented).
		d.Run = max(d.Run, traced-startup)
	}
	// The loop: of the collectives whose calls span at least LoopSpan of
	// the run, the one called the fewest times, so that an iteration
	// calling one twice is not cut in halves when another is called once
	// per iteration, and a burst of calls in the setup is no loop. The
	// run is taken less the waiting before the collective's first call:
	// the ranks of a loaded machine leave MPI_Init up to a second apart,
	// and that skew, waited out in the first synchronizing call, would
	// otherwise decide whether a short run has a loop.
	for _, t := range loops {
		w := walked[t.Name]
		if float64(w.span) < LoopSpan*float64(d.Run-w.before) {
			continue
		}
		if !d.HasLoop || t.Visits < d.Loop.Visits || t.Visits == d.Loop.Visits && t.Inclusive > d.Loop.Inclusive {
			d.Loop, d.HasLoop = t, true
		}
	}
	// The same for the collectives one location of each rank calls: their
	// spans, summed over those locations, against their share of the run.
	for _, t := range rankLoops {
		w := walked[t.Name]
		if float64(w.span) < LoopSpan*(float64(d.Run)*float64(ranks)/float64(d.Locations)-float64(w.before)) {
			continue
		}
		if !d.HasRankLoop || t.Visits < d.RankLoop.Visits || t.Visits == d.RankLoop.Visits && t.Inclusive > d.RankLoop.Inclusive {
			d.RankLoop, d.HasRankLoop = t, true
		}
	}
	best, runnerUp, found, hasRunnerUp := chooseCandidate(cands, walked)
	if found {
		d.Region = best
		d.Irregularity = walked[best.Name].irregularity
		d.Waiting = walked[best.Name].share()
	}
	share := func(t RegionTotal) float64 {
		if d.Run <= 0 {
			return 0
		}
		return float64(t.Inclusive) / float64(d.Run)
	}
	// The run's computation: its time outside MPI calls and
	// synchronization, which a candidate's SOS-time is a part of.
	work := d.Run
	for _, t := range totals {
		if cl.waits(t.Name, cl.kind(t.Name)) && !isStartup(t.Name) {
			work -= t.Exclusive
		}
	}
	// works says whether a candidate carries enough of the computation
	// to be the iteration when a collective loop could be. A region whose
	// inclusive time is mostly waiting nested in it can cover half the
	// run and hold a sliver of its work, and one called at least twice
	// per call of the loop holding under half of it is a phase of the
	// iteration: LULESH's CommSend, three calls an iteration, 37 % of the
	// run nearly all in MPI_Waitall, 12 % of the computation.
	// A loop's calls per location, against a candidate's: the rank loop
	// is called on one location of each rank.
	loop, loopCalls := d.Loop, float64(d.Loop.Visits)/float64(max(d.Loop.Locations, 1))
	if !d.HasLoop && d.HasRankLoop {
		loop, loopCalls = d.RankLoop, float64(d.RankLoop.Visits)/float64(ranks)
	}
	works := func(t RegionTotal) bool {
		if work <= 0 {
			return true
		}
		sos := walked[t.Name].sos(t)
		if float64(t.Visits)/float64(max(t.Locations, 1)) >= 2*loopCalls && sos < 0.5*float64(work) {
			return false
		}
		return sos >= WeakShare*float64(work)
	}
	switch {
	case found && share(best) >= WeakShare && (!d.HasLoop && !d.HasRankLoop || works(best)):
		if d.HasLoop && 2*best.Visits < d.Loop.Visits {
			d.Weak = WeakFewerThanLoop
		}
	case d.HasLoop:
		// No region of the program covers enough of the run to carry the
		// iterations (its compute inlined into main): the collective
		// loop does.
		d.Region, d.Between, d.Weak, found = d.Loop, true, WeakFallback, true
		d.Irregularity = walked[d.Loop.Name].irregularity
		d.Waiting = 1
	case d.HasRankLoop:
		// The same, the collective called by each rank's master thread:
		// the compute of an MPI+OpenMP code inlined into main, its
		// parallel regions a few percent each (LULESH).
		d.Region, d.Between, d.ByRank, d.Weak, found = loop, true, true, WeakRankFallback, true
		d.Irregularity = walked[loop.Name].irregularity
		d.Waiting = 1
	case found:
		d.Weak = WeakShareOfRun
	}
	if !found {
		d.record(totals, cl, RegionTotal{Inclusive: -1}, walked)
		if often > 0 {
			return d, &NoComputationError{Dominance: d}
		}
		return d, fmt.Errorf("analysis: no region is invoked at least %d times (2 × %d locations); name the region to segment by", d.MinVisits, d.Locations)
	}
	d.Share = share(d.Region)
	d.record(totals, cl, d.Region, walked)
	if !d.Between {
		d.RunnerUp, d.HasRunnerUp = runnerUp, hasRunnerUp
	}
	return d, nil
}

// chooseCandidate returns the candidate that carries the iterations. Each
// is weighed by its SOS-time, its aggregated inclusive time less the share
// of its traced time spent waiting in MPI calls and synchronization nested
// in it: that share grows with the load on the machine, what remains does
// not. The one with the largest SOS-time is chosen (Weber et al.'s rule,
// less the waiting) unless its period is irregular: then the first
// regular one with at least StrongShare of that SOS-time.
// The runner-up is the other candidate with the largest SOS-time.
func chooseCandidate(cands []RegionTotal, walked map[string]waitShare) (best, runnerUp RegionTotal, found, hasRunnerUp bool) {
	if len(cands) == 0 {
		return best, runnerUp, false, false
	}
	type cand struct {
		t       RegionTotal
		sos     float64
		regular bool
	}
	cs := make([]cand, len(cands))
	for i, t := range cands {
		w := walked[t.Name]
		cs[i] = cand{t, w.sos(t), w.irregularity <= MaxIrregularity}
	}
	// Stable: equal SOS-times keep the order of Totals.
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].sos > cs[j].sos })
	floor := StrongShare * cs[0].sos
	b := cs[0]
	for _, c := range cs[1:] {
		if c.sos < floor {
			break
		}
		if c.regular && !b.regular {
			b = c
			break
		}
	}
	for _, c := range cs {
		if c.t.Name != b.t.Name {
			return b.t, c.t, true, true
		}
	}
	return b.t, runnerUp, true, false
}

// record lists the regions with more inclusive time than the chosen one
// that were passed over, by why.
func (d *Dominance) record(totals []RegionTotal, cl classifier, chosen RegionTotal, walked map[string]waitShare) {
	for _, t := range totals {
		if t.Name == chosen.Name || chosen.Inclusive >= 0 && t.Inclusive < chosen.Inclusive {
			continue
		}
		switch k := cl.kind(t.Name); {
		case k == kindSync:
			d.Sync = append(d.Sync, t)
		case k == kindParadigm:
			d.Paradigm = append(d.Paradigm, t)
		case t.Visits < d.MinVisits:
			d.Ineligible = append(d.Ineligible, t)
		default:
			w := walked[t.Name]
			d.Minor = append(d.Minor, MinorRegion{t, w.share(), w.sos(t), w.irregularity <= MaxIrregularity})
		}
	}
}

// period accumulates the intervals between one region's consecutive
// outermost invocations on one location, as logarithms: their standard
// deviation does not depend on the unit, and a few iterations 20× as
// long as the others (the slowdowns the analysis is for) move it little,
// while a helper called in bursts, tiny gaps and then a long one, moves
// it much.
type period struct {
	n           int
	first, last int64 // ns: the first and the previous invocation's start
	sum, sumSq  float64
}

func (p *period) add(start int64) {
	if p.n > 0 {
		l := math.Log(float64(max(start-p.last, 1)))
		p.sum += l
		p.sumSq += l * l
	}
	if p.n == 0 {
		p.first = start
	}
	p.n++
	p.last = start
}

// irregularity returns the standard deviation of the logarithms of the
// intervals; 0 with fewer than two of them, which cannot be irregular.
func (p *period) irregularity() float64 {
	k := float64(p.n - 1)
	if k < 2 {
		return 0
	}
	mean := p.sum / k
	return math.Sqrt(max(p.sumSq/k-mean*mean, 0))
}

// waitShare is a region's traced inclusive time, its outermost calls'
// only, and the part of it spent waiting in MPI calls or synchronization
// regions nested in it, less the OpenMP tasks run inside them. A call
// inside a wait (a region the user named as synchronization, say) does not
// wait itself unless a wait is nested in it.
type waitShare struct {
	traced, waiting int64 // ns
	// irregularity is the median over the locations that invoke the
	// region of the standard deviation of the logarithms of the intervals
	// between its consecutive outermost invocations.
	irregularity float64
	// span is the time from the first invocation's start to the last's,
	// summed over the locations.
	span int64
	// before is the time the locations spent waiting in MPI calls and
	// synchronization (MPI_Init and MPI_Finalize aside) before the
	// region's first invocation, summed: on a loaded machine the ranks
	// leave MPI_Init up to a second apart and the first synchronizing
	// call waits that out, which is startup skew, not run time.
	before int64
	period period // of one location, while they are read
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

// sos returns the SOS-time of region t: its aggregated inclusive time
// less the share of its traced time spent waiting; exact when the trace
// holds all of its calls, so that a region and the one computation it
// holds besides its waits tie.
func (w waitShare) sos(t RegionTotal) float64 {
	if w.traced == t.Inclusive {
		return float64(t.Inclusive - w.waiting)
	}
	return float64(t.Inclusive) * (1 - w.share())
}

// regionWaits is what the locations' waits in one region sum to, before
// the median of their irregularities is taken: the locations may be read
// by different processes (the ranks, in-situ) and their sums merged.
type regionWaits struct {
	Traced, Waiting, Span, Before int64
	// Irregular holds one location's irregularity per location that
	// invokes the region, in no order.
	Irregular []float64
}

// waitSums are the regionWaits of a run's regions, by name.
type waitSums map[string]*regionWaits

// add adds the waits of one location, per region id (locationWaits), whose
// regions are named by names.
func (w waitSums) add(per []waitShare, names []string) {
	for id, s := range per {
		if id == 0 || s.period.n == 0 {
			continue
		}
		t := w[names[id]]
		if t == nil {
			t = &regionWaits{}
			w[names[id]] = t
		}
		t.Traced += s.traced
		t.Waiting += s.waiting
		t.Span += s.period.last - s.period.first
		t.Before += s.before
		t.Irregular = append(t.Irregular, s.period.irregularity())
	}
}

// merge adds the sums of other locations.
func (w waitSums) merge(o waitSums) {
	for name, s := range o {
		t := w[name]
		if t == nil {
			t = &regionWaits{}
			w[name] = t
		}
		t.Traced += s.Traced
		t.Waiting += s.Waiting
		t.Span += s.Span
		t.Before += s.Before
		t.Irregular = append(t.Irregular, s.Irregular...)
	}
}

// shares returns the waitShare of each region: the sums, and the median
// of the irregularities (which does not depend on their order).
func (w waitSums) shares() map[string]waitShare {
	out := make(map[string]waitShare, len(w))
	for name, s := range w {
		c := append([]float64(nil), s.Irregular...)
		sort.Float64s(c)
		out[name] = waitShare{traced: s.Traced, waiting: s.Waiting, span: s.Span, before: s.Before, irregularity: c[len(c)/2]}
	}
	return out
}

// waitSumsOf reads every event of files once and returns the waits of
// each region by name, the locations on procs workers (the sums are of
// integers and the irregularity a median, so they do not depend on the
// order).
//
// It also returns the time from each location's first event to its last,
// summed: the run as the events show it, also where the program's own
// code is not a region.
func waitSumsOf(files []*tracefile.File, cl classifier, procs int) (waitSums, int64, error) {
	return waitSumsFrom(files, cl, procs, fileEvents)
}

// eventSource is what locationWaits reads a location's events from: the
// file's iterator, or the events a rank decoded once (RankEvents).
type eventSource interface {
	Next(e *tracefile.Event) bool
	Err() error
	Close()
}

// waitSumsFrom is waitSumsOf, the events of file f's location index loc
// read from open(f, loc, ahead).
func waitSumsFrom(files []*tracefile.File, cl classifier, procs int, open func(f *tracefile.File, loc int, ahead bool) eventSource) (waitSums, int64, error) {
	out := waitSums{}
	type fileRegions struct {
		kinds          []regionKind
		waits, startup []bool
		names          []string
	}
	byFile := make([]fileRegions, len(files))
	type where struct{ file, loc int }
	var locs []where
	for i, f := range files {
		n := len(f.Regions) + 1
		fr := fileRegions{kinds: make([]regionKind, n), waits: make([]bool, n), startup: make([]bool, n), names: make([]string, n)}
		for _, r := range f.Regions {
			if int(r.ID) < n {
				fr.kinds[r.ID] = cl.kind(r.Name)
				fr.waits[r.ID] = cl.waits(r.Name, fr.kinds[r.ID])
				fr.startup[r.ID] = isStartup(r.Name)
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
		per, err := locationWaits(f, open(f, locs[n].loc, procs > len(locs)), fr.kinds, fr.waits, fr.startup)
		perLoc[n] = per
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	var traced int64
	for n, per := range perLoc {
		traced += per[0].span // the location's (see locationWaits)
		out.add(per, byFile[locs[n].file].names)
	}
	return out, traced, nil
}

// locationWaits returns the waitShare of each region id of file f (0 for
// the ids the file does not define) on the location whose events it reads
// from it, which it closes.
func locationWaits(f *tracefile.File, it eventSource, kinds []regionKind, waits, startup []bool) ([]waitShare, error) {
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
		// waited is the time spent waiting so far outside MPI_Init and
		// MPI_Finalize, which are open while startups > 0.
		waited   int64
		startups int
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
			if startups == 0 {
				waited += now - since
			}
		}
		since = now
	}
	var first, last int64 = -1, 0 // the location's first and last enter or leave
	defer it.Close()
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindEnter:
			id := slot(e.Region)
			now := f.Nanos(e.Time)
			if first < 0 {
				first = now
			}
			last = now
			account(now)
			fr := frame{region: id, outermost: active[id] == 0 && !e.Truncated, enter: now,
				marks: len(marks), mark: waits[id] || kinds[id] == kindTask}
			for len(nested) <= fr.marks {
				nested = append(nested, 0)
			}
			fr.waitedAt = nested[fr.marks]
			if fr.outermost {
				if per[id].period.n == 0 {
					per[id].before = waited
				}
				per[id].period.add(now)
			}
			if startup[id] {
				startups++
			}
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
			last = now
			account(now)
			fr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			active[fr.region]--
			if startup[fr.region] {
				startups--
			}
			if fr.mark && len(marks) > 0 {
				marks = marks[:len(marks)-1]
			}
			if fr.outermost {
				per[fr.region].traced += now - fr.enter
				per[fr.region].waiting += nested[fr.marks] - fr.waitedAt
			}
		}
	}
	// Slot 0 holds no region: it carries the location's traced span.
	per[0] = waitShare{span: max(last-first, 0)}
	return per, it.Err()
}
