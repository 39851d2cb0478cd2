package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/hmbtrace/hmbtrace/measure"
)

// After a long run's reductions most events go into closed levels, and
// such a probe must cost no more than one that keeps its event (issue 23).
// The long run's before and after are each timed once, tens of seconds
// apart, on a machine whose speed changes by up to 1.7x for milliseconds
// to seconds (probeslice.go): they compare the moments more than the
// probes. So the two probes are also compared as the Go and the C probe
// are: the same call shape (two nested regions at depths 2 and 3, under
// one at depth 1 that stays open), one into a measurement that keeps
// every event, one into a measurement whose depth 2 is closed, in
// alternated slices of the same length on one thread pinned to one CPU,
// each timed in the thread's CPU time.

// closedSliceResult is what runClosedSlices measured: the pairs of each
// round, in summarize's terms its Go side the closed probe and its C side
// the kept one, and the CPU they ran on.
type closedSliceResult struct {
	rounds [][]pair
	cpu    int
}

// closedSide is one of the two probes: a measurement, its location, and
// the regions at depths 1 (main), 2 and 3.
type closedSide struct {
	m                  *measure.Measurement
	loc                *measure.Location
	main, outer, inner measure.Region
}

// newClosedSide starts a measurement of size bytes and enters main; with
// closed, one untimed iteration makes depths 2 and 3, then depth 2 and
// the deeper ones are closed.
func newClosedSide(o *options, name string, size int, closed bool) (*closedSide, error) {
	m, err := measure.Start(measure.Config{IgnoreEnv: true, Output: o.work, Name: name, BufferSize: size, NoThrottle: true})
	if err != nil {
		return nil, err
	}
	s := &closedSide{m: m, loc: m.Location("bench"), main: m.Region("main"), outer: m.Region("outer"), inner: m.Region("inner")}
	s.loc.Enter(s.main)
	nestedPairs(s.loc, s.outer, s.inner, 1)
	if closed {
		if err := m.CloseDepth(2); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// slice runs warmIterations untimed, then n iterations timed.
func (s *closedSide) slice(n int) sliceResult { return timedSlice(s.loc, s.outer, s.inner, n) }

// close leaves main, closes the measurement and removes its trace.
func (s *closedSide) close() (measure.Stats, error) {
	s.loc.Leave(s.main)
	err := s.m.Close()
	os.Remove(s.m.Path())
	return s.m.Stats(), err
}

// runClosedSlices runs rounds of k pairs of slices of sliceIterations
// iterations, the order within a pair alternating, and checks that the
// kept side kept every event and the closed side every event of depths 2
// and 3 was dropped.
func runClosedSlices(o *options, rounds, k int) (*closedSliceResult, error) {
	type answer struct {
		res *closedSliceResult
		err error
	}
	done := make(chan answer)
	// On a goroutine of its own, locked to its thread, which it leaves
	// locked: the runtime then ends the pinned thread instead of reusing it.
	go func() {
		res, err := closedSlicesOnThread(o, rounds, k)
		done <- answer{res, err}
	}()
	a := <-done
	return a.res, a.err
}

func closedSlicesOnThread(o *options, rounds, k int) (*closedSliceResult, error) {
	runtime.LockOSThread()
	cpu, err := currentCPU()
	if err != nil {
		return nil, err
	}
	if err := pinThread(cpu); err != nil {
		return nil, fmt.Errorf("pinning the probes' thread: %v", err)
	}
	// The kept side's buffer holds every event it records (about 2 bytes
	// each; 4 with room to spare), so that no reduction happens in it.
	events := 4 * (rounds*k*(sliceIterations+warmIterations) + 2*warmIterations)
	kept, err := newClosedSide(o, "kept", max(16<<20, 4*events), false)
	if err != nil {
		return nil, err
	}
	closed, err := newClosedSide(o, "closed", 4<<20, true)
	if err != nil {
		kept.close()
		return nil, err
	}
	// One slice of each, untimed: the first bins of the kept side.
	kept.slice(warmIterations)
	closed.slice(warmIterations)
	res := &closedSliceResult{cpu: cpu}
	for range rounds {
		ps := make([]pair, 0, k)
		for i := range k {
			var p pair
			if i%2 == 0 {
				p.cSlice = kept.slice(sliceIterations)
				p.goSlice = closed.slice(sliceIterations)
			} else {
				p.goSlice = closed.slice(sliceIterations)
				p.cSlice = kept.slice(sliceIterations)
			}
			ps = append(ps, p)
		}
		res.rounds = append(res.rounds, ps)
	}
	kst, kerr := kept.close()
	cst, cerr := closed.close()
	if err := errors.Join(kerr, cerr); err != nil {
		return nil, err
	}
	if kst.Kept != kst.Recorded {
		return nil, fmt.Errorf("the kept probe's measurement kept %d of %d events: its buffer is too small", kst.Kept, kst.Recorded)
	}
	// main's enter and leave are kept; every other event is dropped, the
	// first iteration's when depth 2 was closed, the others at the probe.
	if cst.Kept != 2 || cst.Dropped() != cst.Recorded-2 {
		return nil, fmt.Errorf("the closed probe's measurement kept %d and dropped %d of %d events, want 2 and the rest", cst.Kept, cst.Dropped(), cst.Recorded)
	}
	return res, nil
}

// closedProbeReport adds the comparison to the long-run section: the
// median of each side's slices and of the ratio within a pair, per round,
// as rows, and over all pairs, as notes.
func closedProbeReport(r *report, res *closedSliceResult) {
	const s = "hmbtrace"
	var all []pair
	var roundRatios []float64
	for _, ps := range res.rounds {
		st := summarize(ps)
		r.add(s, "probe ns/event, event kept (slices)", st.cNs)
		r.add(s, "probe ns/event, event into a closed level (slices)", st.goNs)
		r.add(s, "closed-level probe / kept probe (slices)", median(st.ratios))
		roundRatios = append(roundRatios, median(st.ratios))
		all = append(all, ps...)
	}
	st := summarize(all)
	r.note("closed-level and kept probe: %d pairs of slices of %d events (two nested regions at depths 2 and 3), alternated on CPU %d, thread CPU time; the slices ranged %.1f–%.1f ns (closed) and %.1f–%.1f (kept) as the machine's speed changed",
		len(all), 4*sliceIterations, res.cpu, st.goSpread[0], st.goSpread[1], st.cSpread[0], st.cSpread[1])
	r.note("closed-level probe / kept probe: %.3f, the median of the ratio within a pair over %d pairs (quartiles %.3f–%.3f, min–max %.2f–%.2f), the rounds' medians %.3f–%.3f over %d rounds; page faults per 1000 events: closed %.2f, kept %.2f",
		median(st.ratios), len(st.ratios), quantile(st.ratios, 0.25), quantile(st.ratios, 0.75), st.ratios[0], st.ratios[len(st.ratios)-1],
		slices.Min(roundRatios), slices.Max(roundRatios), len(roundRatios), st.goFaults, st.cFaults)
}
