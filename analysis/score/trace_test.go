package score_test

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// call is a region invocation of a hand-built trace: entered at Start, left
// at End, in units of the trace's time unit.
type call struct {
	Region     string
	Start, End uint64
	Calls      []call
}

// c builds a call.
func c(region string, start, end uint64, calls ...call) call {
	return call{Region: region, Start: start, End: end, Calls: calls}
}

// regionOf defines a region as the MPI wrappers and the OpenMP adapter
// would: names beginning with MPI_ are MPI calls, with "!$omp " OpenMP
// constructs.
func regionOf(m *measure.Measurement, name string) measure.Region {
	switch {
	case strings.HasPrefix(name, "MPI_"):
		return m.RegionParadigm(name, tracefile.ParadigmMPI)
	case strings.HasPrefix(name, "!$omp "):
		return m.RegionParadigm(name, tracefile.ParadigmOpenMP)
	}
	return m.Region(name)
}

// recordCalls writes a trace with one location per element of locs, whose
// calls happen at the given times times unit nanoseconds after the start
// (the monotonic clock with no timer shift makes ticks nanoseconds), and
// opens it. cfg's output, name and clock are set here, and its timer shift
// unless it has one.
func recordCalls(t testing.TB, cfg measure.Config, unit uint64, locs map[string][]call, order ...string) *tracefile.File {
	t.Helper()
	cfg.Output, cfg.Name, cfg.Clock = t.TempDir(), "t", "monotonic"
	if cfg.TimerShift == 0 {
		cfg.TimerShift = measure.NoTimerShift
	}
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := m.Now()
	var put func(l *measure.Location, k call)
	put = func(l *measure.Location, k call) {
		r := regionOf(m, k.Region)
		l.EnterAt(r, t0+k.Start*unit)
		for _, ch := range k.Calls {
			put(l, ch)
		}
		l.LeaveAt(r, t0+k.End*unit)
	}
	for _, name := range order {
		l := m.Location(name)
		for _, k := range locs[name] {
			put(l, k)
		}
	}
	return tracetest.Finish(t, m)
}

// hotHelper is a run whose compute calls a tiny helper a thousand times per
// iteration, once per microsecond: 30 ns each, its enter probe included,
// about what its probes cost. A rare tiny region (setup, twice) costs as
// much per visit but makes few visits. Everything else takes microseconds.
func hotHelper(t testing.TB, cfg measure.Config) *tracefile.File {
	locs := map[string][]call{}
	for _, name := range []string{"w0", "w1"} {
		var t0 uint64 = 10
		iters := []call{c("setup", 0, 5), c("setup", 5, 10)}
		for it := 0; it < 20; it++ {
			var helpers []call
			for h := uint64(0); h < 1000; h++ {
				helpers = append(helpers, c("helper", t0+1+1000*h, t0+1+1000*h+30))
			}
			compute := c("compute", t0+1, t0+1+1000*1000, helpers...)
			end := compute.End + 100000
			iters = append(iters, c("iteration", t0, end, compute, c("wait", compute.End, end)))
			t0 = end
		}
		locs[name] = []call{c("main", 0, t0+1, iters...)}
	}
	return recordCalls(t, cfg, 1, locs, "w0", "w1")
}

const unit = 1000 // ns per time step of the figures of Weber et al.

// figure2 is Weber et al.'s figure 2: three processes running main, an
// initialisation i, and three invocations of a that call b then c.
func figure2(t testing.TB) *tracefile.File {
	iterations := func(b1 uint64) []call {
		return []call{
			c("i", 0, 4),
			c("a", 4, 10, c("b", 4, 4+b1), c("c", 4+b1, 10)),
			c("a", 10, 13, c("b", 10, 12), c("c", 12, 13)),
			c("a", 13, 16, c("b", 13, 15), c("c", 15, 16)),
		}
	}
	return recordCalls(t, measure.Config{}, unit, map[string][]call{
		"process 0": {c("main", 0, 18, iterations(5)...)},
		"process 1": {c("main", 0, 18, iterations(3)...)},
		"process 2": {c("main", 0, 18, iterations(1)...)},
	}, "process 0", "process 1", "process 2")
}
