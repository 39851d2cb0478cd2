package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/trace"
	"time"

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
	for round := 0; round < o.rounds; round++ {
		r.add("clock read ("+clock.Active().String()+")", "ns/event", clockRead(2*pairs))
		ns, err := goProbes(o, pairs, nil, nil, false)
		if err != nil {
			return err
		}
		r.add("hmbtrace (Go)", "ns/event", ns)
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
		if cpath != "" {
			res, err := runCProbes(cpath, o.quick)
			if err != nil {
				if round == 0 {
					r.skip("hmbtrace (C shim), libotf2 (C)", err.Error())
				}
			} else {
				for _, subject := range []string{cDirect, cSurvive, cStaged, cOTF2, cHooks} {
					r.add(subject, "ns/event", res[subject])
				}
			}
		}
	}
	if counterPath != "" {
		r.note("counters are software events read with %s; this machine has no hardware PMU (or it is not exposed)", counterPath)
	}
	return nil
}

func clockRead(n int) float64 {
	var s uint64
	start := time.Now()
	for i := 0; i < n; i++ {
		s += clock.Now()
	}
	el := time.Since(start)
	runtime.KeepAlive(s)
	return float64(el.Nanoseconds()) / float64(n)
}

// goProbes times enter/leave pairs into a fresh measurement whose buffer
// keeps them all, on a goroutine of its own (counters lock it to its
// thread); with survive, the buffer is in a mapping under /dev/shm
// (HMB_SURVIVE=1).
func goProbes(o *options, pairs int, metrics []string, path *string, survive bool) (float64, error) {
	m, err := measure.Start(measure.Config{Output: o.work, Name: "probe", BufferSize: 128 << 20, Metrics: metrics, MetricsStrict: true, NoThrottle: true, Survive: survive})
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
		r := m.Region("bench")
		start := time.Now()
		for i := 0; i < pairs; i++ {
			loc.Enter(r)
			loc.Leave(r)
		}
		done <- result{float64(time.Since(start).Nanoseconds()) / float64(2*pairs)}
	}()
	res := <-done
	if err := m.Close(); err != nil {
		return 0, err
	}
	if path != nil && len(metrics) > 0 {
		if f, err := openTrace(m.Path()); err == nil {
			*path = f.Header.MetricsPath
			f.Close()
		}
	}
	return res.ns, nil
}

// runtimeTraceRegions times runtime/trace regions with tracing on, into
// io.Discard: what a Go developer uses today.
func runtimeTraceRegions(pairs int) (float64, error) {
	if err := trace.Start(io.Discard); err != nil {
		return 0, err
	}
	defer trace.Stop()
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < pairs; i++ {
		trace.StartRegion(ctx, "bench").End()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(2*pairs), nil
}
