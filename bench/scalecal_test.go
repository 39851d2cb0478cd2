package main

import (
	"math"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
)

// calOutput is what rank 0 of scalecal prints, as a test's input.
const calOutput = "scalecal: ranks 16, rounds 4, trips 3, bytes 1024, group 1024, reps 5, oversubscribed 1\n" +
	"scalecal: wait mpi: trips 0.000600 s, slowest rank's trips 0.000700 s, slots 0.000050 s, CPU sum 0.000900 s, CPU max 0.000100 s\n" +
	"scalecal: wait idle: trips 0.001200 s, slowest rank's trips 0.001300 s, slots 0.000080 s, CPU sum 0.002000 s, CPU max 0.000200 s\n"

// TestParseScalecal reads the calibration's lines and refuses output that
// lacks the header or a wait.
func TestParseScalecal(t *testing.T) {
	c, err := parseScalecal("some other line\n" + calOutput)
	if err != nil {
		t.Fatal(err)
	}
	if c.ranks != 16 || c.rounds != 4 || c.trips != 3 || c.bytes != 1024 || c.group != 1024 || c.reps != 5 || !c.oversubscribed {
		t.Errorf("header: %+v", c)
	}
	if w := c.waits[calWaitIdle]; w != (calWait{trips: 0.0012, slowest: 0.0013, slots: 0.00008, cpuSum: 0.002, cpuMax: 0.0002}) {
		t.Errorf("idle wait: %+v", w)
	}
	if got := c.perRound(calWaitMPI); math.Abs(got-0.0006/12) > 1e-15 {
		t.Errorf("a round with MPI's wait: %v, want %v", got, 0.0006/12)
	}
	lines := strings.SplitAfter(calOutput, "\n")
	for _, tc := range []struct{ out, want string }{
		{strings.Join(lines[1:], ""), "no calibration header"},
		{lines[0] + lines[1], `did not report its "idle" wait`},
		{lines[0] + "scalecal: wait mpi: trips x s\n", "the calibration's line"},
	} {
		if _, err := parseScalecal(tc.out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseScalecal(%q): %v, want an error with %q", tc.out, err, tc.want)
		}
	}
}

// haloRunOf returns a run of p ranks whose every rank took the given
// steps' seconds.
func haloRunOf(p, rounds, trips int, wall float64, steps map[string]float64) *haloRun {
	h := newHaloRun(p)
	h.rounds, h.trips, h.wall = rounds, trips, wall
	for s, v := range steps {
		for r := range p {
			h.steps[s][r] = v
		}
	}
	return h
}

// TestScaleCost checks the cost rule: the end against the rank files' end
// plus the end's rounds at the calibration's price, in and out of bound,
// and a calibration whose rounds differ from the end's named as such.
func TestScaleCost(t *testing.T) {
	cal, err := parseScalecal(calOutput)
	if err != nil {
		t.Fatal(err)
	}
	files := haloRunOf(16, 4, 0, 1, map[string]float64{stepSync: 0.001, stepExit: 0.009})
	// 12 rounds of 50 µs: the bound is 0.010 + 0.0006 s.
	in := haloRunOf(16, 4, 3, 2, map[string]float64{stepSync: 0.001, stepResults: 0.0003, stepSlots: 0.0001, stepExit: 0.009,
		stepReplay: 0.1, stepCPU: 0.002, stepReplayCPU: 0.004})
	in.steps[stepCPU][5] = 0.01
	c := costOf(in, files, cal)
	if !c.holds() || c.rounds != 12 || c.calRounds != 12 {
		t.Errorf("end %v, bound %v, rounds %d and %d: want it to hold, 12 rounds each", c.end, c.bound(), c.rounds, c.calRounds)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(c.resultsSum, 15*0.002+0.01) || c.resultsMax != 0.01 || !near(c.replaySum, 16*0.004) || c.replayMax != 0.004 {
		t.Errorf("CPU: results %v / %v, replay %v / %v", c.resultsSum, c.resultsMax, c.replaySum, c.replayMax)
	}
	s := c.String()
	for _, want := range []string{"12 rounds × 0.050 ms a round (plain MPI at 16 ranks, this run; 0.100 ms waiting as the end does) = 0.0006 s",
		"rank files + rounds × round: yes", "+ the results' CPU over the cores: yes", "5.0 % of mpirun's 2.00 s", "0.0100 s the most of one rank"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	out := haloRunOf(16, 4, 2, 2, map[string]float64{stepSync: 0.001, stepResults: 0.0013, stepExit: 0.009})
	c = costOf(out, files, cal)
	if c.holds() {
		t.Errorf("end %v within the bound %v: want it out (8 rounds of 50 µs after 0.010 s)", c.end, c.bound())
	}
	// The results' CPU: 16 × 0.0002 s over 2 cores (numCores is the machine's).
	for r := range 16 {
		out.steps[stepCPU][r] = 0.0002
	}
	c = costOf(out, files, cal)
	c.cores = 2
	if c.holds() || !c.holdsWithWork() {
		t.Errorf("end %v, bound %v, work's floor %v: want it out of the bound, within it with the work", c.end, c.bound(), c.workFloor())
	}
	s = c.String()
	for _, want := range []string{"no, 0.001 s over: 18 rounds' worth", "+ the results' CPU over the cores: yes", "the calibration ran 12 rounds, not the end's 8"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}

// TestScaleModel plants measurements that follow the model and checks its
// fit and its prediction for 10^5 ranks.
func TestScaleModel(t *testing.T) {
	perCore := &scaleCal{ranks: 2, rounds: 1, trips: 3, group: 1024, waits: map[string]calWait{calWaitMPI: {trips: 3 * 20e-6}}}
	var costs []scaleCost
	var cals []*scaleCal
	for _, p := range []int{16, 64, 256} {
		// The most CPU of one rank: 2 ms + 1 ms per round; slots 0.1 ms + 1 µs a rank.
		costs = append(costs, scaleCost{ranks: p, rounds: 3 * rounds(p), resultsMax: 2e-3 + 1e-3*float64(rounds(p))})
		cals = append(cals, &scaleCal{ranks: p, rounds: rounds(p), trips: 3, group: 1024,
			waits: map[string]calWait{calWaitMPI: {slots: 1e-4 + 1e-6*float64(p)}}})
	}
	all := strings.Join(scaleModel(perCore, costs, cals, 0.01, 4000, nil), "\n")
	for _, want := range []string{
		"costs 20.0 µs (plain MPI)",
		"fit 2.00 ms + 1.00 ms × ⌈log₂ p⌉",
		"a fit 6.333 ms + 0.01488 ms × p gives 1.5 s at 100000 ranks",
		"fit 0.100 ms + 0.0010 ms × ranks in the group",
		"51 rounds (3 trips × 17) × 20.0 µs = 1.0 ms",
		"0.20 ms at 2 µs",
		"the root's work 19 ms, slots 1.1 ms for groups of 1024",
		"writes its 4 KB (0.010 s here) into one of 98 files: 0.03 s in all",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the model's notes lack %q:\n%s", want, all)
		}
	}
	if got := scaleModel(perCore, nil, nil, 0, 0, nil); !strings.Contains(strings.Join(got, "\n"), "nothing to fit") {
		t.Errorf("no runs: %q", got)
	}

	// The root's merges measured apart, 50 µs a rank: the root's work at
	// 10^5 ranks is the largest run's (2 + 8 ms) plus their 5 s.
	all = strings.Join(scaleModel(perCore, costs, cals, 0.01, 4000, map[int]float64{1000: 0.05, 10000: 0.5}), "\n")
	for _, want := range []string{
		"1000 ranks 50.0 ms, 10000 ranks 500.0 ms",
		"fit 0.00 ms + 50.00 µs × p gives 5000 ms at 100000 ranks",
		"the root's work 5010 ms",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("with the merges, the model's notes lack %q:\n%s", want, all)
		}
	}
}

// TestParseRootMerges reads the benchmark's lines, summing the passes by
// rank count, and refuses output with fewer than two rank counts.
func TestParseRootMerges(t *testing.T) {
	out := `goos: linux
BenchmarkRootMergeScale/p=1000/run_profile-2         	       1	    344236 ns/op	      1046 B-result	         0.1449 CPU-ms/root	         0.3440 ms/root	  144208 B/op	     563 allocs/op
BenchmarkRootMergeScale/p=1000/variation-2           	       1	 220742455 ns/op	    444626 B-result	        21.08 CPU-ms/root	       220.7 ms/root	20401768 B/op	    2362 allocs/op
BenchmarkRootMergeScale/p=10000/wait_states-2        	       1	3833763859 ns/op	   2023537 B-result	        293.7 CPU-ms/root	      3834 ms/root	100729864 B/op	   22293 allocs/op
PASS`
	got, err := parseRootMerges(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || math.Abs(got[1000]-0.0212249) > 1e-9 || math.Abs(got[10000]-0.2937) > 1e-9 {
		t.Errorf("parsed %v", got)
	}
	if _, err := parseRootMerges(strings.Join(strings.Split(out, "\n")[:3], "\n")); err == nil {
		t.Error("one rank count parsed without an error")
	}
}

// TestScalecalMatchesTheEnd runs the collective end (halo.c traced, with
// HMB_COLLECTIVE_TIMING) and the calibration on the same ranks and checks
// that the calibration's tree has the end's rounds and trips, so that the
// price it measures stays that of the end's messages when the end
// changes. 6 ranks: not a power of two, so a tree of another shape or
// arity would show.
func TestScalecalMatchesTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the library and runs MPI")
	}
	tracetest.RequireTool(t, "mpicc", "libopenmpi-dev")
	tracetest.RequireTool(t, "mpirun", "openmpi-bin")
	tracetest.RequireTool(t, "make", "make")
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := &options{quick: true, rounds: 1, work: t.TempDir(), root: root}
	if err := makeCshim(o, "cshim"); err != nil {
		t.Fatal(err)
	}
	halo, err := buildHalo(o)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildScalecal(o)
	if err != nil {
		t.Fatal(err)
	}
	const p = 6
	end, err := runHalo(o, halo, p, 5, scaleArchive, true)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := runScalecal(bin, p, 1, measure.DefaultAggregate)
	if err != nil {
		t.Fatal(err)
	}
	if end.rounds != 3 || end.trips < 1 {
		t.Errorf("the collective end of %d ranks says %d rounds, %d trips: want ⌈log₂ %d⌉ = 3 rounds a trip", p, end.rounds, end.trips, p)
	}
	if cal.rounds != end.rounds || cal.trips != end.trips {
		t.Errorf("the calibration sends %d trips of %d rounds, the collective end %d of %d: "+
			"bench/scalecal/scalecal.c must send the end's messages (cshim/mpi/hmbtrace_mpi.c, run_reduce)",
			cal.trips, cal.rounds, end.trips, end.rounds)
	}
	for _, w := range []string{calWaitMPI, calWaitIdle} {
		if x := cal.waits[w]; !(x.trips > 0 && x.slowest >= x.trips && x.slots >= 0 && x.cpuSum >= x.cpuMax && x.cpuMax > 0) {
			t.Errorf("the calibration's %s wait: %+v", w, x)
		}
	}
}
