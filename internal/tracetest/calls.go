package tracetest

import (
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Call is a region invocation of a hand-built trace: entered at Start, left
// at End, in units of the trace's time unit.
type Call struct {
	Region     string
	Start, End uint64
	Calls      []Call
}

// C builds a Call.
func C(region string, start, end uint64, calls ...Call) Call {
	return Call{Region: region, Start: start, End: end, Calls: calls}
}

// RegionOf defines a region as the MPI wrappers and the OpenMP adapter
// would: names beginning with MPI_ are MPI calls, with "!$omp " OpenMP
// constructs.
func RegionOf(m *measure.Measurement, name string) measure.Region {
	switch {
	case strings.HasPrefix(name, "MPI_"):
		return m.RegionParadigm(name, tracefile.ParadigmMPI)
	case strings.HasPrefix(name, "!$omp "):
		return m.RegionParadigm(name, tracefile.ParadigmOpenMP)
	}
	return m.Region(name)
}

// RecordCalls writes a trace with one location per element of locs, whose
// calls happen at the given times times unit nanoseconds after the start
// (the monotonic clock with no timer shift makes ticks nanoseconds), and
// opens it. cfg's output, name and clock are set here, and its timer shift
// unless it has one; the HMB_* variables are ignored (Config.IgnoreEnv), so
// that a fixture is the same in any shell.
func RecordCalls(t testing.TB, cfg measure.Config, unit uint64, locs map[string][]Call, order ...string) *tracefile.File {
	t.Helper()
	cfg.Output, cfg.Name, cfg.Clock, cfg.IgnoreEnv = t.TempDir(), "t", "monotonic", true
	if cfg.TimerShift == 0 {
		cfg.TimerShift = measure.NoTimerShift
	}
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := m.Now()
	var put func(l *measure.Location, k Call)
	put = func(l *measure.Location, k Call) {
		r := RegionOf(m, k.Region)
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
	return Finish(t, m)
}

// HotHelper is a run whose compute calls a tiny helper a thousand times per
// iteration, once per microsecond: 30 ns each, its enter probe included,
// about what its probes cost. A rare tiny region (setup, twice) costs as
// much per visit but makes few visits. Everything else takes microseconds.
func HotHelper(t testing.TB, cfg measure.Config) *tracefile.File {
	locs := map[string][]Call{}
	for _, name := range []string{"w0", "w1"} {
		var t0 uint64 = 10
		iters := []Call{C("setup", 0, 5), C("setup", 5, 10)}
		for it := 0; it < 20; it++ {
			var helpers []Call
			for h := uint64(0); h < 1000; h++ {
				helpers = append(helpers, C("helper", t0+1+1000*h, t0+1+1000*h+30))
			}
			compute := C("compute", t0+1, t0+1+1000*1000, helpers...)
			end := compute.End + 100000
			iters = append(iters, C("iteration", t0, end, compute, C("wait", compute.End, end)))
			t0 = end
		}
		locs[name] = []Call{C("main", 0, t0+1, iters...)}
	}
	return RecordCalls(t, cfg, 1, locs, "w0", "w1")
}

// WeberUnit is the nanoseconds of one time step of the figures of Weber et
// al. in WeberFigure2.
const WeberUnit = 1000

// WeberFigure2 is Weber et al.'s figure 2: three processes running main,
// an initialisation i, and three invocations of a that call b then c.
func WeberFigure2(t testing.TB) *tracefile.File {
	iterations := func(b1 uint64) []Call {
		return []Call{
			C("i", 0, 4),
			C("a", 4, 10, C("b", 4, 4+b1), C("c", 4+b1, 10)),
			C("a", 10, 13, C("b", 10, 12), C("c", 12, 13)),
			C("a", 13, 16, C("b", 13, 15), C("c", 15, 16)),
		}
	}
	return RecordCalls(t, measure.Config{}, WeberUnit, map[string][]Call{
		"process 0": {C("main", 0, 18, iterations(5)...)},
		"process 1": {C("main", 0, 18, iterations(3)...)},
		"process 2": {C("main", 0, 18, iterations(1)...)},
	}, "process 0", "process 1", "process 2")
}
