package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/trace"
	"slices"
	"time"

	"github.com/hmbtrace/hmbtrace/bench/internal/cputime"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/measure"
)

// runProbe times one probe of each kind, interleaved over the rounds.
func runProbe(o *options, r *report) error {
	pairs := 5_000_000
	counterPairs := 100_000
	if o.quick {
		pairs, counterPairs = 500_000, 20_000
	}
	cpath, cerr := cProbes(o)
	if cerr != nil {
		r.skip("hmbtrace (C shim), libotf2 (C)", cerr.Error())
	}
	counterPath := ""
	var thrGoOverC []float64 // per round: the throttled Go probe's cost over the C probe's, both run in that round
	// The Go and the C probe proper, in alternated slices (probeslice.go).
	var sl *probeSlices
	if cpath != "" {
		spath, err := buildProbeSlices(o)
		if err == nil {
			sl, err = startProbeSlices(o, spath)
		}
		if err != nil {
			r.skip("hmbtrace (Go) and (C shim) in alternated slices", err.Error())
		}
	}
	slicePairs := 192
	if o.quick {
		slicePairs = 64
	}
	var allPairs []pair
	var roundRatios []float64 // per round: the median ratio of its pairs
	var otf2Ratios []float64  // per round: the C probe over libotf2's, the median within pairs of slices
	for round := 0; round < o.rounds; round++ {
		r.add("clock read ("+clock.Active().String()+")", "ns/event", clockRead(2*pairs))
		if sl != nil {
			ps, err := sl.runPairs(slicePairs)
			if err != nil {
				return err
			}
			st := summarize(ps)
			r.add("hmbtrace (Go)", "ns/event", st.goNs)
			r.add(cDirect, "ns/event", st.cNs)
			allPairs = append(allPairs, ps...)
			roundRatios = append(roundRatios, median(st.ratios))
		} else {
			goNs, err := goProbes(o, pairs, nil, nil, false)
			if err != nil {
				return err
			}
			r.add("hmbtrace (Go)", "ns/event", goNs)
		}
		// The same with the buffer in a mapping that outlives the process.
		if ns, err := goProbes(o, pairs, nil, nil, true); err == nil {
			r.add("hmbtrace (Go, HMB_SURVIVE=1)", "ns/event", ns)
		} else if round == 0 {
			r.skip("hmbtrace (Go, HMB_SURVIVE=1)", err.Error())
		}
		if ns, err := runtimeTraceRegions(pairs); err == nil {
			r.add("runtime/trace region", "ns/event", ns)
		} else if round == 0 {
			r.skip("runtime/trace region", err.Error())
		}
		for _, set := range [][]string{{"task-clock"}, {"task-clock", "page-faults", "minor-faults"}} {
			ns, err := goProbes(o, counterPairs, set, &counterPath, false)
			if err != nil {
				if round == 0 {
					r.skip("hmbtrace + counters", err.Error())
				}
				break
			}
			name := "hmbtrace + 1 counter"
			if len(set) == 3 {
				name = "hmbtrace + 3 counters"
			}
			r.add(name, "ns/event", ns)
		}
		goThr := goThrottled(o, pairs)
		r.add("hmbtrace throttled region (Go)", "ns/event", goThr)
		r.add("empty call (Go)", "ns/event", emptyCalls(2*pairs))
		if cpath != "" {
			if thr, err := runCThrottled(cpath, o.quick); err != nil {
				if round == 0 {
					r.skip("hmbtrace throttled region (C)", err.Error())
				}
			} else {
				r.add("hmbtrace throttled region (C)", "ns/event", thr.probe)
				r.add("hmbtrace throttled function (C hooks, beyond the calls)", "ns/event", thr.hooks)
				r.add("empty call (C)", "ns/event", thr.empty)
				r.add("empty call into a shared object (C)", "ns/event", thr.library)
				thrGoOverC = append(thrGoOverC, goThr/thr.probe)
			}
			if cp, err := runCPairs(cpath, o.quick); err != nil {
				if round == 0 {
					r.skip("hmbtrace (C shim) / libotf2 in alternated slices", err.Error())
				}
			} else {
				r.add(cDirect+", alternated with libotf2", "ns/event", cp.hmb)
				r.add(cOTF2+", alternated with hmbtrace", "ns/event", cp.otf2)
				otf2Ratios = append(otf2Ratios, cp.ratio)
				if round == 0 {
					r.note("C probe / libotf2 (first round): %.3f, the median of the ratio within a pair over %d pairs of slices of %d events alternated on one CPU (quartiles %.3f–%.3f), thread CPU time",
						cp.ratio, cp.pairs, cp.sliceEvents, cp.q1, cp.q3)
				}
			}
			res, err := runCProbes(cpath, o.quick)
			if err != nil {
				if round == 0 {
					r.skip("hmbtrace (C shim), libotf2 (C)", err.Error())
				}
			} else {
				subjects := []string{cSurvive, cStaged, cOTF2, cHooks}
				if sl == nil {
					subjects = append(subjects, cDirect)
				}
				for _, subject := range subjects {
					r.add(subject, "ns/event", res[subject])
				}
			}
		}
	}
	if sl != nil {
		if err := sl.close(); err != nil {
			return err
		}
		st := summarize(allPairs)
		r.note("hmbtrace (Go) and (C shim): %d pairs of slices of %d events, alternated on CPU %d, each side's thread CPU time; the slices ranged %.1f–%.1f ns (Go) and %.1f–%.1f (C) as the machine's speed changed",
			len(allPairs), 4*sliceIterations, sl.cpu, st.goSpread[0], st.goSpread[1], st.cSpread[0], st.cSpread[1])
		r.note("Go probe / C probe (direct): %.3f, the median of the ratio within a pair over %d pairs (quartiles %.3f–%.3f, min–max %.2f–%.2f); page faults per 1000 events: Go %.2f, C %.2f",
			median(st.ratios), len(st.ratios), quantile(st.ratios, 0.25), quantile(st.ratios, 0.75),
			st.ratios[0], st.ratios[len(st.ratios)-1], st.goFaults, st.cFaults)
		r.note("Go probe / C probe (direct), the median of each round: %.3f–%.3f over %d rounds",
			slices.Min(roundRatios), slices.Max(roundRatios), len(roundRatios))
	}
	if len(otf2Ratios) > 0 {
		r.note("C probe (hmb_enter/hmb_leave) / libotf2's OTF2_EvtWriter_Enter/Leave, same RDTSC clock: %.3f, the median over %d rounds of each round's median within pairs (%.3f–%.3f); only this ratio carries over to another machine",
			median(otf2Ratios), len(otf2Ratios), slices.Min(otf2Ratios), slices.Max(otf2Ratios))
	}
	if len(thrGoOverC) > 0 {
		r.note("throttled region, Go probe / C probe: %.2f, the median over %d rounds of the ratio within a round (%.2f–%.2f); neither makes a call (the C one is inline in hmbtrace.h)",
			median(thrGoOverC), len(thrGoOverC), slices.Min(thrGoOverC), slices.Max(thrGoOverC))
	}
	if counterPath != "" {
		r.note("counters are software events read with %s; this machine has no hardware PMU (or it is not exposed)", counterPath)
	}
	return nil
}

// cpuTimer locks the calling goroutine to its OS thread and returns a
// function that unlocks it and returns the thread's CPU time since, in ns.
// The probes are timed in CPU time, as the C benchmark times its variants:
// on a shared machine the wall time of a loop counts the time its thread
// waited for a CPU, which moved the Go/C ratio from 0.6 to 4 between two
// rounds of one run.
func cpuTimer() func() int64 {
	runtime.LockOSThread()
	start := threadCPU()
	return func() int64 {
		d := threadCPU() - start
		runtime.UnlockOSThread()
		return d
	}
}

// threadCPU returns the calling thread's CPU time in ns.
func threadCPU() int64 { return cputime.Thread() }

func clockRead(n int) float64 {
	var s uint64
	stop := cpuTimer()
	for i := 0; i < n; i++ {
		s += clock.Now()
	}
	el := stop()
	runtime.KeepAlive(s)
	return float64(el) / float64(n)
}

// goProbes times the call pattern of the C probe benchmark (two nested
// regions: enter outer, enter inner, leave inner, leave outer) for pairs/2
// iterations, into a fresh measurement whose buffer keeps every event, on a
// goroutine of its own (counters lock it to its thread); with survive, the
// buffer is in a mapping under /dev/shm (HMB_SURVIVE=1).
func goProbes(o *options, pairs int, metrics []string, path *string, survive bool) (float64, error) {
	m, err := measure.Start(measure.Config{IgnoreEnv: true, Output: o.work, Name: "probe", BufferSize: 128 << 20, Metrics: metrics, MetricsStrict: true, NoThrottle: true, Survive: survive})
	if err != nil {
		return 0, err
	}
	defer os.Remove(m.Path())
	type result struct {
		ns float64
	}
	done := make(chan result)
	go func() {
		loc := m.Location("bench")
		outer, inner := m.Region("outer"), m.Region("inner")
		n := pairs / 2
		stop := cpuTimer()
		nestedPairs(loc, outer, inner, n)
		done <- result{float64(stop()) / float64(4*n)}
	}()
	res := <-done
	if err := m.Close(); err != nil {
		return 0, err
	}
	if st := m.Stats(); st.Kept != st.Recorded {
		return 0, fmt.Errorf("the Go probe benchmark kept %d of %d events: its buffer is too small", st.Kept, st.Recorded)
	}
	if path != nil && len(metrics) > 0 {
		if f, err := openTrace(m.Path()); err == nil {
			*path = f.Header.MetricsPath
			f.Close()
		}
	}
	return res.ns, nil
}

// goThrottled times the same pattern on two regions throttled at their
// first leave: what a switched-off region's probe costs, the flag tested
// before the clock.
func goThrottled(o *options, pairs int) float64 {
	m, err := measure.Start(measure.Config{IgnoreEnv: true, Output: o.work, Name: "throttled", BufferSize: 1 << 20, ThrottleCalls: 1, ThrottleTime: time.Hour})
	if err != nil {
		return math.NaN()
	}
	defer func() {
		m.Close()
		os.Remove(m.Path())
	}()
	loc := m.Location("bench")
	outer, inner := m.Region("throttled outer"), m.Region("throttled inner")
	loc.Enter(outer)
	loc.Enter(inner)
	loc.Leave(inner) // throttles inner
	loc.Leave(outer) // and outer
	n := pairs / 2
	stop := cpuTimer()
	nestedPairs(loc, outer, inner, n)
	return float64(stop()) / float64(4*n)
}

// emptyCall is a call in place of a probe: the floor under any probe that
// is not inlined, Go's or C's.
//
//go:noinline
func emptyCall(r measure.Region) {}

func emptyCalls(n int) float64 {
	stop := cpuTimer()
	for i := 0; i < n; i++ {
		emptyCall(measure.Region(i & 1))
	}
	return float64(stop()) / float64(n)
}

// runtimeTraceRegions times runtime/trace regions with tracing on, into
// io.Discard: what a Go developer uses today.
func runtimeTraceRegions(pairs int) (float64, error) {
	if err := trace.Start(io.Discard); err != nil {
		return 0, err
	}
	defer trace.Stop()
	ctx := context.Background()
	stop := cpuTimer()
	for i := 0; i < pairs; i++ {
		trace.StartRegion(ctx, "bench").End()
	}
	return float64(stop()) / float64(2*pairs), nil
}

// nestedPairs probes n nested pairs of regions on loc, 4n events: the work
// every Go probe measurement of this section times.
func nestedPairs(loc *measure.Location, outer, inner measure.Region, n int) {
	for i := 0; i < n; i++ {
		loc.Enter(outer)
		loc.Enter(inner)
		loc.Leave(inner)
		loc.Leave(outer)
	}
}
