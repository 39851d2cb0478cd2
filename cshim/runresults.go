package cshim

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/analysis/trend"
	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The run-wide results of an MPI run, reduced over MPI at its collective
// end (cshim/mpi: run_reduce) in passes. In each pass every rank makes its
// part (of the statistics as they stand, or of its own events, still in
// memory), the ranks merge the parts two by two up a binomial tree, and
// rank 0 hands the run's to its measurement, whose archive holds it
// (tracefile's results sections), and may send something down the tree for
// the next pass. A thread still recording at MPI_Finalize is read as it is
// then. The passes, in order:
//
//   - PassProfile: summary.RunProfile (ResultRunProfile), from the
//     statistics, the buffer's story from the trace in memory: about 60
//     bytes per region, whatever the ranks.
//   - PassComm: comm.Part per rank (ResultComm, in JSON), the exact
//     matrix: up the tree in comm's wire form, about 20 bytes per
//     location and 8 per peer a location sent to.
//   - PassChoice: variation.Choice, merged: about 100 bytes per region
//     and 8 per location and region it invoked (variation's wire form);
//     the root chooses the time-dominant region and sends down the tree
//     what cutting reads of its variation.Cut, in its wire form.
//   - PassSegments: variation.Segments, gathered in rank order (about
//     15 bytes per segment and 40 per location, variation's wire form);
//     the root scores them (ResultVariation).
//   - PassPhases: trend.InSitu, the ranks' phase series gathered (about
//     20 bytes per sample, per region and metric, per location;
//     ResultDynamics).
//   - PassReplay and PassWaitStates (replay.go): the wait-state replay's
//     rounds between the ranks, then their waitstate.InSitu gathered
//     (ResultWaitStates).
//
// Measured at 64 ranks of cshim/testdata/mpi/halo.c (10 iterations, 256
// KiB buffers, oversubscribed on 2 cores at a load of 170 to 300): rank
// 0's passes took 0.33 to 0.58 s in all, the first (which absorbs the
// ranks' arrival) 0.16 to 0.32 s; the results were 0.5 KB of profile,
// 12.7 KB of matrix and 77 to 153 KB of variation (1,216 segments).
//
// The passes that read the rank's events (the matrix only where the
// buffer shed messages, the choice, the segments and the replay) read its
// trace, written into memory and read back once (a copy of the bins in
// use). The choice and
// the segments read its enters and leaves decoded once
// (variation.RankEvents, up to rankEventsLimit): merging the level streams
// costs more per event than either pass's own work on it.
const (
	PassProfile = 1 + iota
	PassComm
	PassChoice
	PassSegments
	PassPhases
)

// passDef is what the ranks do in one pass: make a rank's part (given what
// came down the tree, if anything), merge two parts (the second of ranks
// after the first's: merge reads and writes them, merge.merge on them as
// read), and, at the root, take the run's and return what goes down the
// tree next.
type passDef struct {
	name  string
	make  func(rt *Runtime, rank int, in []byte) ([]byte, error)
	merge *partCodec
	set   func(rt *Runtime, p *runPart) ([]byte, error)
}

var passDefs = map[int]passDef{
	PassProfile:  {"run profile", makeProfile, profileCodec, setProfile},
	PassComm:     {"communication matrix", makeComm, commCodec, setComm},
	PassChoice:   {"time-dominant region", makeChoice, choiceCodec, setChoice},
	PassSegments: {"variation", makeSegments, segmentsCodec, setSegments},
	PassPhases:   {"phase series", makePhases, phasesCodec, setPhases},
}

// passState is what the passes keep between their calls on this rank.
var passState struct {
	mu       sync.Mutex
	trace    *tracefile.File // the rank's trace, events too, read once
	traceOK  bool
	traceErr error
	// events are the trace's enters and leaves, decoded once for
	// PassChoice and PassSegments (nil: too many, each pass reads the
	// trace), released after PassSegments.
	events    *variation.RankEvents
	eventsOK  bool
	eventsErr error
	cut       *variation.Cut // the root's, between PassChoice and PassSegments
	results   map[byte][]byte
	began     map[int]time.Time // the root's pass starts
	costs     []tracefile.PassCost
}

func passOf(pass int) (passDef, error) {
	d, ok := passDefs[pass]
	if !ok {
		return d, fmt.Errorf("hmbtrace: the collective end: no pass %d", pass)
	}
	return d, nil
}

// PassMake returns this rank's part of pass, in binary form.
func (rt *Runtime) PassMake(pass, rank int, in []byte) ([]byte, error) {
	d, err := passOf(pass)
	if err != nil {
		return nil, err
	}
	if rank == 0 {
		passState.mu.Lock()
		if passState.began == nil {
			passState.began = map[int]time.Time{}
		}
		passState.began[pass] = time.Now()
		passState.mu.Unlock()
	}
	b, err := d.make(rt, rank, in)
	if err != nil {
		return nil, fmt.Errorf("hmbtrace: the collective end: rank %d's %s: %w", rank, d.name, err)
	}
	return b, nil
}

// mergeCodec returns pass's codec, and an error for a pass whose parts
// are not merged.
func mergeCodec(pass int) (passDef, error) {
	d, err := passOf(pass)
	if err == nil && d.merge == nil {
		err = fmt.Errorf("hmbtrace: the collective end: the %s's parts are exchanged, not merged", d.name)
	}
	return d, err
}

// PassMerge merges b, the part of pass of the ranks after this rank's
// running merge, in binary form, into that merge: the one this rank holds
// when isHeld, else a, its own part. The result is held (partmerge.go)
// until PassHeld or, at the root, PassSet takes it.
func PassMerge(pass int, a []byte, isHeld bool, b []byte) error {
	d, err := mergeCodec(pass)
	if err != nil {
		return err
	}
	if err := d.merge.mergeInto(pass, a, isHeld, b); err != nil {
		return fmt.Errorf("hmbtrace: the collective end: merging the %s: %w", d.name, err)
	}
	return nil
}

// PassHeld returns this rank's running merge of pass in binary form, to
// send up the tree, and lets it go.
func PassHeld(pass int) ([]byte, error) {
	d, err := mergeCodec(pass)
	if err != nil {
		return nil, err
	}
	b, err := d.merge.takeHeld(pass)
	if err != nil {
		return nil, fmt.Errorf("hmbtrace: the collective end: sending the %s: %w", d.name, err)
	}
	return b, nil
}

// PassSet gives the measurement the run's result of pass (rank 0, at the
// root of the tree): the running merge it holds when isHeld, else b; and
// returns what goes down the tree for the next pass.
func (rt *Runtime) PassSet(pass int, b []byte, isHeld bool) ([]byte, error) {
	d, err := passOf(pass)
	if err != nil {
		return nil, err
	}
	part := &runPart{codec: d.merge, pass: pass, b: b, isHeld: isHeld}
	next, err := d.set(rt, part)
	passState.mu.Lock()
	if t, ok := passState.began[pass]; ok {
		passState.costs = append(passState.costs, tracefile.PassCost{Pass: d.name, Seconds: time.Since(t).Seconds(), Bytes: part.size()})
	}
	passState.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("hmbtrace: the collective end: the run's %s: %w", d.name, err)
	}
	return next, nil
}

// PassEnd releases what the passes kept (the trace read back from memory)
// and, at the root, adds the passes' costs to the results.
func (rt *Runtime) PassEnd() {
	passState.mu.Lock()
	costs := passState.costs
	passState.trace, passState.traceOK, passState.traceErr, passState.cut = nil, false, nil, nil
	passState.events, passState.eventsOK, passState.eventsErr = nil, false, nil
	passState.costs, passState.began = nil, nil
	passState.mu.Unlock()
	forgetHeld()
	if len(costs) > 0 {
		if b, err := json.Marshal(costs); err == nil {
			rt.setResult(tracefile.ResultCosts, b)
		}
	}
}

// setResult keeps one results section for the archive, in place of any
// of its kind before, the sections in the order of their kinds.
func (rt *Runtime) setResult(kind byte, payload []byte) {
	passState.mu.Lock()
	if passState.results == nil {
		passState.results = map[byte][]byte{}
	}
	passState.results[kind] = payload
	kinds := make([]int, 0, len(passState.results))
	for k := range passState.results {
		kinds = append(kinds, int(k))
	}
	sort.Ints(kinds)
	var all []byte
	for _, k := range kinds {
		all = tracefile.AppendResult(all, byte(k), passState.results[byte(k)])
	}
	passState.mu.Unlock()
	if m := rt.Measurement(); m != nil {
		mi.SetRunResults(m, all)
	}
}

// ResultsOnly reports whether the collective end writes only the run's
// results (HMB_OUTPUT_EVENTS=none): rank 0 one archive of them, no rank a
// trace.
func (rt *Runtime) ResultsOnly() bool {
	m := rt.Measurement()
	return m != nil && m.Enabled() && mi.ResultsOnly(m)
}

// ResultsWritten makes this rank's Close write nothing: rank 0 wrote the
// run's results.
func (rt *Runtime) ResultsWritten(world int) {
	if m := rt.Measurement(); m != nil {
		mi.ResultsWritten(m, world)
	}
}

// rankTrace returns this rank's trace with its events, read from memory
// once for the passes.
func (rt *Runtime) rankTrace() (*tracefile.File, error) {
	passState.mu.Lock()
	defer passState.mu.Unlock()
	if !passState.traceOK {
		m := rt.Measurement()
		if m == nil || !m.Enabled() {
			passState.traceErr = errors.New("the measurement does not record")
		} else {
			// Its header holds the rate the file will have, fixed now
			// (measure's freezeRate): every pass, the variation cut as
			// the replay, converts ticks as the post-mortem tools will.
			passState.trace, passState.traceErr = mi.MemoryTrace(m)
		}
		passState.traceOK = true
	}
	return passState.trace, passState.traceErr
}

// rankEventsLimit bounds the memory of the events decoded once for the
// choice and the segments: 64 MiB, about 2.8 million enters and leaves
// per rank (LULESH's ranks at -s 20 -i 200 record 150,000 to 350,000).
// A rank with more has each pass read its trace.
const rankEventsLimit = 64 << 20

// rankEvents returns this rank's trace and its enters and leaves, decoded
// once for the passes that read them; no events (and no error) when they
// take more than rankEventsLimit, or were released.
func (rt *Runtime) rankEvents() (*tracefile.File, *variation.RankEvents, error) {
	f, err := rt.rankTrace()
	if err != nil {
		return nil, nil, err
	}
	passState.mu.Lock()
	defer passState.mu.Unlock()
	if !passState.eventsOK {
		passState.events, passState.eventsErr = variation.ReadRankEvents(f, rankEventsLimit)
		passState.eventsOK = true
	}
	return f, passState.events, passState.eventsErr
}

// releaseRankEvents lets the decoded events go once the last pass that
// reads them is done.
func releaseRankEvents() {
	passState.mu.Lock()
	passState.events, passState.eventsErr = nil, nil
	passState.mu.Unlock()
}

func makeProfile(rt *Runtime, rank int, _ []byte) ([]byte, error) {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return nil, errors.New("the measurement does not record")
	}
	// The trace in memory first: reading it fixes the run's clock rate
	// (measure's freezeRate), the file's, which the snapshot's times then
	// have too. Taken before, they had Start's rate, 10^-4 off.
	f, err := rt.rankTrace()
	if err != nil {
		return nil, err
	}
	t := mi.Snapshot(m)
	if t.Header.EndTicks == 0 {
		// Still running: the rank's time so far, up to the collective end.
		t.Header.EndTicks = m.Now()
	}
	p := summary.Local(t, rank)
	// The statistics count a level's records only once its bin is sealed:
	// the records in the current bins, all of a short run's, would be
	// neither kept nor removed. The buffer's story comes from the trace in
	// memory (its current bins count as written, as finalize writes them),
	// which the passes after this one read anyway.
	p.Buffer = summary.LocalFile(f).Buffer
	if rt.ResultsOnly() {
		// The archive will hold no bin: the story says the kept events
		// were not written (HMB_OUTPUT_EVENTS=none).
		p.Buffer.Bins, p.Buffer.Bytes = 0, 0
	}
	return p.MarshalBinary()
}

func setProfile(rt *Runtime, p *runPart) ([]byte, error) {
	b, err := p.bytes()
	if err != nil {
		return nil, err
	}
	rt.setResult(tracefile.ResultRunProfile, b)
	if m := rt.Measurement(); m != nil {
		if v, err := p.value(); err == nil {
			setRunTotals(m, v.(*summary.RunProfile))
		}
	}
	return nil, nil
}

func makeComm(rt *Runtime, _ int, _ []byte) ([]byte, error) {
	f, err := rt.rankTrace()
	if err != nil {
		return nil, err
	}
	p, err := comm.Local(f)
	if err != nil {
		return nil, err
	}
	return commCodec.encode([]comm.Part{p})
}

func setComm(rt *Runtime, p *runPart) ([]byte, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	all, err := comm.MarshalParts(v.([]comm.Part))
	if err != nil {
		return nil, err
	}
	rt.setResult(tracefile.ResultComm, all)
	return nil, nil
}

func makeChoice(rt *Runtime, _ int, _ []byte) ([]byte, error) {
	f, ev, err := rt.rankEvents()
	if err != nil {
		return nil, err
	}
	var c *variation.Choice
	if ev != nil {
		c, err = ev.Choice()
	} else {
		c, err = variation.LocalChoice(f)
	}
	if err != nil {
		return nil, err
	}
	return choiceCodec.encode(c)
}

// setChoice chooses the time-dominant region and returns the Cut for the
// ranks; without one, the results say why and no segments are cut.
func setChoice(rt *Runtime, p *runPart) ([]byte, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	cut, err := v.(*variation.Choice).Cut()
	if err != nil {
		return nil, setVariation(rt, &variation.InSitu{Error: err.Error()})
	}
	passState.mu.Lock()
	passState.cut = cut
	passState.mu.Unlock()
	// The ranks get what cutting reads; the root keeps the whole Cut.
	return variation.EncodeWire(cut)
}

func setVariation(rt *Runtime, v *variation.InSitu) error {
	b, err := variation.Encode(v)
	if err != nil {
		return err
	}
	rt.setResult(tracefile.ResultVariation, b)
	return nil
}

func makeSegments(rt *Runtime, _ int, in []byte) ([]byte, error) {
	var cut variation.Cut
	if err := variation.DecodeWire(in, &cut); err != nil {
		return nil, err
	}
	f, ev, err := rt.rankEvents()
	if err != nil {
		return nil, err
	}
	defer releaseRankEvents()
	var s *variation.Segments
	if ev != nil {
		s, err = cut.Segments(ev)
	} else {
		s, err = cut.Local(f)
	}
	if err != nil {
		return nil, err
	}
	return segmentsCodec.encode(s)
}

func setSegments(rt *Runtime, p *runPart) ([]byte, error) {
	s, err := p.value()
	if err != nil {
		return nil, err
	}
	passState.mu.Lock()
	cut := passState.cut
	passState.mu.Unlock()
	if cut == nil {
		return nil, errors.New("segments without the cut they were cut by")
	}
	v, err := cut.Finish(s.(*variation.Segments))
	if err != nil {
		return nil, setVariation(rt, &variation.InSitu{Error: err.Error()})
	}
	return nil, setVariation(rt, &variation.InSitu{Variation: v})
}

func makePhases(rt *Runtime, _ int, _ []byte) ([]byte, error) {
	f, err := rt.rankTrace()
	if err != nil {
		return nil, err
	}
	src, series := trend.RankPhaseSeries(f)
	return trend.EncodeInSitu(&trend.InSitu{Source: src, Series: series})
}

// setPhases keeps the run's phase series, when it has any.
func setPhases(rt *Runtime, p *runPart) ([]byte, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if len(v.(*trend.InSitu).Series) > 0 {
		b, err := p.bytes()
		if err != nil {
			return nil, err
		}
		rt.setResult(tracefile.ResultDynamics, b)
	}
	return nil, nil
}

// setRunTotals gives m the run's counts from its profile, for the one
// line rank 0 says at exit for the whole run.
func setRunTotals(m *measure.Measurement, p *summary.RunProfile) {
	b := &p.Buffer
	u := b.Usage
	usage := u.UnknownRegion + u.LeaveNothingOpen + u.LeaveNotOpen + u.LeftImplicitly + u.OpenAtClose + u.AfterClose + u.MessageNoPeer
	worst := 0.0
	if w := b.Worst; w.Recorded > 0 && w.Kept < w.Recorded {
		worst = float64(w.Recorded-w.Kept) / float64(w.Recorded)
	}
	mi.SetRunTotals(m, p.Ranks.Len(), b.Recorded, b.Removed.Total(), usage, b.Worst.Rank, worst)
}

// LastUsage returns the measurement's last usage error in words and the
// CLOCK_MONOTONIC time it was noted at, for hmb_last_error; "" if none.
func (rt *Runtime) LastUsage() (string, uint64) {
	m := rt.Measurement()
	if m == nil || !m.Enabled() {
		return "", 0
	}
	return mi.LastUsage(m)
}
