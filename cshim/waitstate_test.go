package cshim_test

// The wait-state analysis on planted MPI programs (testdata/mpi/waitstate.c)
// whose waits are known: each scenario runs 4 ranks under mpirun, and the
// analysis of their files must find the wait that the planted calls' enter
// and leave times in the files give by the pattern's definition (computed
// here, apart from the analysis's matching), and, when the scheduler kept
// to the plan, the planted wait: 5 ms (or its multiple) an iteration,
// within 5 %. The ranks' own timings around their calls are logged beside.

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/waitstate"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// timing is what one rank printed: per iteration, the planted call's
// enter and leave, and the ring's send enter.
type timing struct {
	enter, leave, send map[int]int64
}

func parseTiming(t *testing.T, rank int, out string) timing {
	t.Helper()
	tm := timing{map[int]int64{}, map[int]int64{}, map[int]int64{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var it int
		var a, b int64
		if n, _ := fmt.Sscanf(sc.Text(), "call %d %d %d", &it, &a, &b); n == 3 {
			tm.enter[it], tm.leave[it] = a, b
		} else if n, _ := fmt.Sscanf(sc.Text(), "send %d %d", &it, &a); n == 2 {
			tm.send[it] = a
		} else {
			t.Fatalf("rank %d printed %q", rank, sc.Text())
		}
	}
	return tm
}

// traceTiming reads, per rank, the enters and leaves of region call(rank)
// (one visit an iteration) and the enters of MPI_Send, on the run's axis.
func traceTiming(t *testing.T, files []*tracefile.File, call func(rank int) string) []timing {
	t.Helper()
	axis := tracefile.NewAxis(files)
	tms := make([]timing, len(files))
	for r, f := range files {
		tm := timing{map[int]int64{}, map[int]int64{}, map[int]int64{}}
		var e tracefile.Event
		var stack []uint32
		visits, sends := 0, 0
		it := f.Events(f.Locations[0].ID)
		for it.Next(&e) {
			ns := axis.Nanos(r, f, e.Time)
			switch e.Kind {
			case encode.KindEnter:
				stack = append(stack, e.Region)
				switch f.RegionName(e.Region) {
				case call(r):
					tm.enter[visits] = ns
				case "MPI_Send":
					tm.send[sends] = ns
					sends++
				}
			case encode.KindLeave:
				if len(stack) > 0 && f.RegionName(stack[len(stack)-1]) == call(r) {
					tm.leave[visits] = ns
					visits++
				}
				stack = stack[:len(stack)-1]
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		tms[r] = tm
	}
	return tms
}

// rankTime sums a pattern's time over the locations of rank r's file.
func rankTime(res *waitstate.Result, p waitstate.Pattern, r int) int64 {
	var ns int64
	by := res.ByLocation(p)
	for i, l := range res.Locations {
		if l.Rank == r {
			ns += by[i]
		}
	}
	return ns
}

func within(got, want int64, tol float64) bool {
	return math.Abs(float64(got-want)) <= tol*float64(want)
}

func TestMPIWaitStates(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "waitstate", "waitstate.c")
	const np, iters, ms = 4, 6, int64(1_000_000)
	pos := func(x int64) int64 { return max(x, 0) }
	// upToLast is the wait of N x N and barriers: each rank's time before
	// the last entered.
	upToLast := func(tm []timing, it int) int64 {
		var last, ns int64
		for r := range tm {
			last = max(last, tm[r].enter[it])
		}
		for r := range tm {
			ns += pos(min(last, tm[r].leave[it]) - tm[r].enter[it])
		}
		return ns
	}
	for _, c := range []struct {
		scenario string
		pattern  waitstate.Pattern
		region   string
		rank     int   // where the planted wait is; -1: summed over the ranks
		planted  int64 // ns per iteration
		late     int   // the rank that made the others wait
		// measured computes an iteration's wait from the ranks' own timings.
		measured func(tm []timing, it int) int64
		// elsewhere, if set, computes an iteration's waits of the same
		// pattern on the other ranks: a late rank kept off its core makes
		// its receiver wait too, which is a disturbed run, not an error.
		elsewhere func(tm []timing, it int) int64
	}{
		{"ring", waitstate.LateSender, "MPI_Recv", 3, 5 * ms, 2, func(tm []timing, it int) int64 {
			return pos(min(tm[2].send[it], tm[3].leave[it]) - tm[3].enter[it])
		}, func(tm []timing, it int) int64 {
			var ns int64
			for r := range tm {
				if r != 3 {
					from := (r + len(tm) - 1) % len(tm)
					ns += pos(min(tm[from].send[it], tm[r].leave[it]) - tm[r].enter[it])
				}
			}
			return ns
		}},
		{"ssend", waitstate.LateReceiver, "MPI_Ssend", 0, 5 * ms, 1, func(tm []timing, it int) int64 {
			if tm[0].leave[it] <= tm[1].enter[it] {
				return 0
			}
			return pos(tm[1].enter[it] - tm[0].enter[it])
		}, nil},
		{"allreduce", waitstate.WaitNxN, "MPI_Allreduce", -1, 12 * ms, 3, upToLast, nil},
		{"barrier", waitstate.WaitBarrier, "MPI_Barrier", -1, 12 * ms, 3, upToLast, nil},
		{"bcast", waitstate.LateBroadcast, "MPI_Bcast", -1, 15 * ms, 1, func(tm []timing, it int) int64 {
			var ns int64
			for r := range tm {
				if r != 1 {
					ns += pos(min(tm[1].enter[it], tm[r].leave[it]) - tm[r].enter[it])
				}
			}
			return ns
		}, nil},
		{"reduce", waitstate.EarlyReduce, "MPI_Reduce", 0, 5 * ms, 1, func(tm []timing, it int) int64 {
			first := int64(math.MaxInt64)
			for r := 1; r < len(tm); r++ {
				first = min(first, tm[r].enter[it])
			}
			return pos(min(first, tm[0].leave[it]) - tm[0].enter[it])
		}, nil},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			// A machine busier than its cores can keep a late rank off its
			// core past its planted time, which lengthens the wait for real:
			// the ranks' own timings tell. A run is tried again (three times
			// at most) until no iteration was disturbed so; the analysis
			// must match the ranks' timings in every run, and the planted
			// time in an undisturbed one.
			var (
				res      *waitstate.Result
				out      string
				want     int64
				disturbs []string
			)
			call := func(rank int) string {
				if c.scenario == "ssend" && rank == 1 {
					return "MPI_Recv"
				}
				return c.region
			}
			for attempt := 1; attempt <= 3; attempt++ {
				out = t.TempDir()
				stdout, _ := mpirun(t, np, out, nil, prog, c.scenario, fmt.Sprint(iters))
				own := make([]timing, np)
				for r := range own {
					own[r] = parseTiming(t, r, stdout[r])
				}
				files := rankFiles(t, out, "waitstate", np)
				tm := traceTiming(t, files, call)
				var measured int64
				want, disturbs = 0, nil
				for it := range iters {
					w := c.measured(tm, it)
					want += w
					measured += c.measured(own, it)
					if !within(w, c.planted, 0.05) {
						disturbs = append(disturbs, fmt.Sprintf("iteration %d: %.3f ms", it, float64(w)/1e6))
					}
					if c.elsewhere != nil {
						if o := c.elsewhere(tm, it); o > c.planted/20 {
							disturbs = append(disturbs, fmt.Sprintf("iteration %d: %.3f ms on other ranks", it, float64(o)/1e6))
						}
					}
				}
				var err error
				res, err = waitstate.Analyze(files, waitstate.Options{Procs: 2, Worst: 1000})
				if err != nil {
					t.Fatal(err)
				}
				if !res.Synced {
					t.Error("the rank files are not on one clock")
				}
				got := planted(res, c.pattern, c.region, c.rank)
				t.Logf("attempt %d: %v in %s: %.3f ms; by definition from the calls' times %.3f ms; the ranks measured %.3f ms; planted %.3f ms",
					attempt, c.pattern, c.region, float64(got)/1e6, float64(want)/1e6, float64(measured)/1e6, float64(c.planted*iters)/1e6)
				if d := got - want; d < -int64(iters) || d > int64(iters) {
					t.Errorf("%v in %s: %d ns, by definition from the calls' times %d ns", c.pattern, c.region, got, want)
				}
				if len(disturbs) == 0 {
					break
				}
				t.Logf("the scheduler disturbed the plan: %s", strings.Join(disturbs, ", "))
			}
			// Every wait is charged to what its late party did meanwhile:
			// never more than the waits.
			var charged int64
			for _, v := range res.Delays {
				if v.Pattern == c.pattern {
					charged += v.Time
				}
			}
			if charged > res.Totals[c.pattern]+iters {
				t.Errorf("%v: %d ns of delay costs for %d ns of waits", c.pattern, charged, res.Totals[c.pattern])
			}
			if c.scenario == "ring" {
				checkWaitstateCommand(t, out)
			}
			if len(disturbs) > 0 {
				// A late rank off its core makes others late in turn: the
				// planted answer holds only for an undisturbed run.
				t.Logf("every run was disturbed: the planted time and its delay were not checked")
				return
			}
			got := planted(res, c.pattern, c.region, c.rank)
			if !within(got, c.planted*iters, 0.05) {
				t.Errorf("%v in %s: %.3f ms, planted %.3f ms (± 5 %%)", c.pattern, c.region, float64(got)/1e6, float64(c.planted*iters)/1e6)
			}
			if c.rank >= 0 {
				if other := res.Totals[c.pattern] - rankTime(res, c.pattern, c.rank); other > res.Totals[c.pattern]/20 {
					t.Errorf("%v: %.3f ms elsewhere than on rank %d", c.pattern, float64(other)/1e6, c.rank)
				}
			}
			// The delay: the planted late rank was computing while the
			// others waited.
			var cost int64
			for _, v := range res.Delays {
				if v.Pattern == c.pattern && v.Region == "compute" && res.Locations[v.Loc].Rank == c.late {
					cost += v.Time
				}
			}
			if !within(cost, res.Totals[c.pattern], 0.05) {
				t.Errorf("%v: %.3f ms charged to rank %d's compute, want about the wait, %.3f ms (delays %+v)",
					c.pattern, float64(cost)/1e6, c.late, float64(res.Totals[c.pattern])/1e6, res.Delays)
			}
			if w := res.Worst; len(w) == 0 || w[0].Pattern != c.pattern || w[0].Delay == nil || w[0].Delay.Region != "compute" ||
				res.Locations[w[0].Delay.Loc].Rank != c.late {
				t.Errorf("worst waits %+v: want %v first, delayed by rank %d's compute", w, c.pattern, c.late)
			}
		})
	}
}

// planted sums a pattern's time in region, on rank (-1: every rank).
func planted(res *waitstate.Result, p waitstate.Pattern, region string, rank int) int64 {
	var ns int64
	for _, v := range res.Pattern(p) {
		if v.Region == region && (rank < 0 || res.Locations[v.Loc].Rank == rank) {
			ns += v.Time
		}
	}
	return ns
}

// checkWaitstateCommand runs hmbtrace waitstate on the ring's directory:
// the same text for any -procs, the Late Sender line and the worst wait.
func checkWaitstateCommand(t *testing.T, dir string) {
	t.Helper()
	one, err := run(root, nil, built.hmbtrace, "waitstate", "-procs", "1", dir)
	if err != nil {
		t.Fatalf("hmbtrace waitstate: %v\n%s", err, one)
	}
	three, err := run(root, nil, built.hmbtrace, "waitstate", "-procs", "3", dir)
	if err != nil {
		t.Fatalf("hmbtrace waitstate -procs 3: %v\n%s", err, three)
	}
	if string(one) != string(three) {
		t.Errorf("-procs 1 and 3 print otherwise:\n%s\nvs\n%s", one, three)
	}
	for _, want := range []string{"Late Sender", "MPI_Recv", "rank 3", "compute"} {
		if !strings.Contains(string(one), want) {
			t.Errorf("hmbtrace waitstate prints no %q:\n%s", want, one)
		}
	}
	js, err := run(root, nil, built.hmbtrace, "waitstate", "-json", dir)
	if err != nil || !strings.Contains(string(js), `"metric": "mpi_latesender"`) {
		t.Errorf("hmbtrace waitstate -json: %v\n%s", err, js)
	}
}

// An OpenMP loop with one slow thread (testdata/openmp/waitstate.c): the
// wait at the explicit barrier is what the barrier visits' times give by
// the definition, and, undisturbed, the planted 2 x 5 ms a round, charged
// to thread 2's compute.
func TestOpenMPWaitStates(t *testing.T) {
	build := library(t)
	p := buildOpenMP(t, build, "gcc", filepath.Join(root, "cshim", "testdata", "openmp", "waitstate.c"))
	const rounds, planted = 4, int64(10_000_000)
	var (
		res      *waitstate.Result
		disturbs []string
	)
	for attempt := 1; attempt <= 3; attempt++ {
		os.RemoveAll(p.out)
		p.run(t, []string{"OMP_NUM_THREADS=3", "OMP_WAIT_POLICY=passive"})
		paths, err := filepath.Glob(filepath.Join(p.out, "*.hmb"))
		if err != nil || len(paths) != 1 {
			t.Fatalf("%s holds %v, want one trace file", p.out, paths)
		}
		f := tracetest.Open(t, paths[0])
		// The definition: per round, each thread's time in the barrier
		// before the last thread entered it.
		type visit struct{ enter, leave int64 }
		byThread := map[int][]visit{}
		for _, l := range f.Locations {
			if len(l.Team) != 1 {
				continue
			}
			var e tracefile.Event
			var open []int64
			var names []string
			it := f.Events(l.ID)
			for it.Next(&e) {
				switch e.Kind {
				case encode.KindEnter:
					open, names = append(open, f.Nanos(e.Time)), append(names, f.RegionName(e.Region))
				case encode.KindLeave:
					n := len(open) - 1
					if strings.HasPrefix(names[n], "!$omp barrier") {
						byThread[l.Team[0]] = append(byThread[l.Team[0]], visit{open[n], f.Nanos(e.Time)})
					}
					open, names = open[:n], names[:n]
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if len(byThread) != 3 {
			t.Fatalf("barrier visits of threads %v, want 3 threads", byThread)
		}
		var want int64
		disturbs = nil
		for round := range rounds {
			var last, w int64
			for th := range 3 {
				last = max(last, byThread[th][round].enter)
			}
			for th := range 3 {
				v := byThread[th][round]
				w += max(min(last, v.leave)-v.enter, 0)
			}
			want += w
			if !within(w, planted, 0.05) {
				disturbs = append(disturbs, fmt.Sprintf("round %d: %.3f ms", round, float64(w)/1e6))
			}
		}
		res, err = waitstate.Analyze([]*tracefile.File{f}, waitstate.Options{Procs: 2})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Totals[waitstate.OMPBarrier]
		t.Logf("attempt %d: %v %.3f ms; by definition from the visits' times %.3f ms; planted %.3f ms",
			attempt, waitstate.OMPBarrier, float64(got)/1e6, float64(want)/1e6, float64(planted*rounds)/1e6)
		if d := got - want; d < -rounds || d > rounds {
			t.Errorf("%v: %d ns, by definition %d ns", waitstate.OMPBarrier, got, want)
		}
		if len(disturbs) == 0 {
			break
		}
		t.Logf("the scheduler disturbed the plan: %s", strings.Join(disturbs, ", "))
	}
	if len(disturbs) > 0 {
		t.Logf("every run was disturbed: the planted time and its delay were not checked")
		return
	}
	if got := res.Totals[waitstate.OMPBarrier]; !within(got, planted*rounds, 0.05) {
		t.Errorf("%v: %.3f ms, planted %.3f ms (± 5 %%)", waitstate.OMPBarrier, float64(got)/1e6, float64(planted*rounds)/1e6)
	}
	if w := res.Worst; len(w) == 0 || w[0].Pattern != waitstate.OMPBarrier || w[0].Delay == nil || w[0].Delay.Region != "compute" {
		t.Errorf("worst waits %+v: want %v first, delayed by compute", w, waitstate.OMPBarrier)
	}
}

// TestMPICriticalPath runs the critpath scenario: iterations of compute
// and MPI_Allreduce without pacing, rank 2's compute three times the
// others' (6 ms against 2 ms). In every run, the critical path holds, of
// each iteration, the compute of the rank that entered the allreduce last
// (its release ends the others' waits), as the trace's times say. When
// that rank was rank 2 every time (the scheduler kept to the plan; up to
// three runs are tried), the path runs through rank 2's compute alone,
// the compute's critical-path imbalance is at least 2 ms an iteration
// (6 on the path against a mean of 3), and the delay costs of the
// allreduce's waits go to rank 2's compute.
func TestMPICriticalPath(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "waitstate", "waitstate.c")
	const np, iters, ms = 4, 8, int64(1_000_000)
	for attempt := 1; attempt <= 3; attempt++ {
		out := t.TempDir()
		mpirun(t, np, out, nil, prog, "critpath", fmt.Sprint(iters))
		files := rankFiles(t, out, "waitstate", np)
		res, err := waitstate.Analyze(files, waitstate.Options{Procs: 2})
		if err != nil {
			t.Fatal(err)
		}
		cp := res.CriticalPath
		if cp == nil {
			t.Fatal("no critical path")
		}
		onPath := make([]int64, np)
		for _, v := range cp.Values {
			if v.Region == "compute" {
				onPath[res.Locations[v.Loc].Rank] += v.Time
			}
		}
		// By definition from the trace's times: each iteration's last to
		// enter the allreduce, and its compute.
		compute := traceTiming(t, files, func(int) string { return "compute" })
		allreduce := traceTiming(t, files, func(int) string { return "MPI_Allreduce" })
		want := make([]int64, np)
		planned := true
		for it := range iters {
			last := 0
			for r := range np {
				if allreduce[r].enter[it] > allreduce[last].enter[it] {
					last = r
				}
			}
			want[last] += compute[last].leave[it] - compute[last].enter[it]
			planned = planned && last == 2
		}
		t.Logf("attempt %d: critical path %.3f ms, %d hops; compute on it by rank %v ns, by the last to enter each allreduce %v ns",
			attempt, float64(cp.Length)/1e6, cp.Hops, onPath, want)
		for r := range np {
			if d := onPath[r] - want[r]; d < -int64(iters) || d > int64(iters) {
				t.Errorf("rank %d: %d ns of compute on the path, the last entrants' compute says %d", r, onPath[r], want[r])
			}
		}
		var all int64
		for _, v := range compute {
			for it := range iters {
				all += v.leave[it] - v.enter[it]
			}
		}
		if !planned {
			t.Logf("rank 2 was not the last to enter every allreduce (a busy machine): the planted shape was not checked")
			continue
		}
		for _, g := range cp.Regions {
			if g.Region == "compute" && g.Imbalance < 2*ms*iters {
				t.Errorf("compute: %d ns on the path, mean %d, imbalance %d; want at least %d", g.Path, g.Mean, g.Imbalance, 2*ms*iters)
			}
		}
		// The waits the computation caused are rank 2's. Not all waits: a
		// rank late into MPI_Init on a busy machine (9 of 93 ms once) is a
		// cause too, outside the planted shape.
		var cost, computeCost int64
		for _, c := range res.DelayCosts {
			if c.Pattern == waitstate.WaitNxN && c.Region == "compute" {
				computeCost += c.Time
				if res.Locations[c.Loc].Rank == 2 {
					cost += c.Time
				}
			}
		}
		if waits := res.Totals[waitstate.WaitNxN]; cost < computeCost*9/10 || computeCost < waits/2 {
			t.Errorf("rank 2's compute carries %.3f ms of the %.3f ms of Wait at N x N that computation caused (%.3f ms in all; costs %+v)",
				float64(cost)/1e6, float64(computeCost)/1e6, float64(waits)/1e6, res.DelayCosts)
		}
		return
	}
}
