package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The openmp section: what the OpenMP adapter (libhmbtrace-omp) adds to an
// empty parallel region, a barrier and an empty task, for 2 threads, with
// GCC's libgomp (interposed) and clang's libomp (OMPT), each plain, traced,
// and traced with HMB_ENABLE=0, interleaved over the rounds. Per construct
// it prints the time, and for the traced runs the time added per event
// (traced minus plain of the same round, over the construct's events) and
// that as a multiple of a C probe's event (hmb_enter/hmb_leave of regions
// that record, never throttled: openmp_bench.c gives each 1024 iterations
// regions of their own), timed in the same traced process. With -openmp-baseline DIR, the traced binaries
// also run with the libraries of DIR (LD_LIBRARY_PATH, which the binaries'
// RUNPATH gives way to), interleaved with the rest: a before/after
// comparison in one run.
//
// GCC's binaries also run with both threads on one CPU (taskset), as
// mpirun runs a rank's threads when it binds the rank to a core: there a
// thread that waits at a region's end holds the CPU the other needs, which
// the adapter's join must not make worse than libgomp's own barrier
// (gomp.c, join_wait). Fewer constructs per run: each costs context
// switches there.
//
// With clang, the section also runs openmp_bench linked with a null OMPT
// tool (cshim/bench/openmp_nulltool.c: the adapter's callbacks, each
// returning at once) and prints its added time per event of the adapter's
// beside the adapter's: what libomp itself spends with a tool attached,
// which is part of the adapter's number and which no tool avoids.

// ompEvents is the number of events each construct records with 2 threads,
// as the traces of openmp_bench count them.
var ompEvents = map[string]map[string]int{
	// gcc: the region on the forking thread, and on each thread its
	// implicit task and the implicit barrier at its end; a task: its
	// creation region with TASK_CREATE in it, the switch to it, its
	// region, its completion and the switch back.
	"gcc": {"parallel region": 10, "barrier": 4, "task": 8},
	// clang: the same, but a worker's implicit barrier at the end, which
	// libomp does not report; a task's creation is a record without a region.
	"clang": {"parallel region": 8, "barrier": 4, "task": 6},
}

// ompConstructs are the constructs openmp_bench times, in its output's order.
var ompConstructs = []string{"parallel region", "barrier", "task"}

func runOpenMP(o *options, r *report) error {
	if why := missing(prereq{"make", "make"}); why != "" {
		r.skip("OpenMP", why)
		return nil
	}
	if err := makeCshim(o, "bench-omp-binary"); err != nil {
		return fmt.Errorf("building the OpenMP benchmark: %w", err)
	}
	bin := filepath.Join(o.root, "build", "bench", "openmp_bench")
	n := 20_000
	if o.quick {
		n = 5_000
	}
	type subject struct {
		name, cc, path string
		env            []string
		traced         bool
		plain          bool // the uninstrumented build: what the others are compared with
		baseline       bool // traced with -openmp-baseline's libraries
		null           bool // the null OMPT tool: its cost is put over the C probe of the traced run
		cpu            int  // the one CPU both threads run on, or -1
	}
	// group is what a subject's plain run is: the same compiler and CPUs.
	group := func(s subject) string {
		if s.cpu >= 0 {
			return s.cc + " one core"
		}
		return s.cc
	}
	oneCPU := firstCPU()
	var subjects []subject
	if o.ompBaseline != "" {
		if _, err := os.Stat(filepath.Join(o.ompBaseline, "libhmbtrace-omp.so")); err != nil {
			return fmt.Errorf("-openmp-baseline: %v", err)
		}
	}
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := os.Stat(bin + "_" + cc); err != nil {
			r.skip(cc, "not built (clang: Debian packages clang, libomp-dev)")
			continue
		}
		out := "HMB_OUTPUT=" + filepath.Join(o.work, "openmp")
		cpus := []int{-1}
		if cc == "gcc" && oneCPU >= 0 {
			cpus = append(cpus, oneCPU)
		}
		for _, cpu := range cpus {
			suffix := ""
			if cpu >= 0 {
				suffix = ", one core"
			}
			subjects = append(subjects, subject{name: cc + " plain" + suffix, cc: cc, path: bin + "_" + cc + "_plain", plain: true, cpu: cpu})
			if _, err := os.Stat(bin + "_" + cc + "_null"); err == nil && cpu < 0 {
				subjects = append(subjects, subject{name: cc + " null OMPT tool", cc: cc, path: bin + "_" + cc + "_null",
					null: true, cpu: cpu})
			}
			if o.ompBaseline != "" {
				subjects = append(subjects, subject{name: cc + " baseline" + suffix, cc: cc, path: bin + "_" + cc,
					env: []string{out, "LD_LIBRARY_PATH=" + o.ompBaseline}, traced: true, baseline: true, cpu: cpu})
			}
			subjects = append(subjects,
				subject{name: cc + " libhmbtrace-omp" + suffix, cc: cc, path: bin + "_" + cc, env: []string{out}, traced: true, cpu: cpu},
				subject{name: cc + " libhmbtrace-omp, HMB_ENABLE=0" + suffix, cc: cc, path: bin + "_" + cc,
					env: []string{"HMB_ENABLE=0"}, cpu: cpu})
		}
	}
	// Per traced subject and construct, each round's added ns per event and
	// its multiple of the C probe's: printed as notes, since either may
	// come out negative on a loaded machine, where a table row wants a ratio.
	added := map[string]map[string][]float64{}
	times := map[string]map[string][]float64{}
	probes := map[string][]float64{}
	for round := 0; round < o.rounds; round++ {
		results := make([]ompResult, len(subjects))
		for i, s := range subjects {
			m := n
			if s.cpu >= 0 {
				m = n / 10
			}
			res, err := ompBench(s.path, m, s.env, s.cpu)
			if err != nil {
				return err
			}
			for _, c := range ompConstructs {
				r.add(s.name, "ns/"+c, res.ns[c])
			}
			results[i] = res
		}
		// The plain run and the traced run (its C probe) of each compiler in this round.
		plain, probe := map[string]ompResult{}, map[string]float64{}
		for i, s := range subjects {
			if s.plain {
				plain[group(s)] = results[i]
			} else if s.traced && !s.baseline {
				probe[group(s)] = results[i].probe
			}
		}
		for i, s := range subjects {
			base, ok := plain[group(s)]
			p := results[i].probe
			if s.null {
				p = probe[group(s)]
			}
			if !ok || !(s.traced || s.null) || p <= 0 {
				continue
			}
			if added[s.name] == nil {
				added[s.name], times[s.name] = map[string][]float64{}, map[string][]float64{}
			}
			probes[s.name] = append(probes[s.name], p)
			for _, c := range ompConstructs {
				a := (results[i].ns[c] - base.ns[c]) / float64(ompEvents[s.cc][c])
				added[s.name][c] = append(added[s.name][c], a)
				times[s.name][c] = append(times[s.name][c], a/p)
			}
		}
	}
	r.note("2 threads, %d empty parallel regions, barriers and tasks per run (%d on one core), the best of 5 rounds in each", n, n/10)
	for _, s := range subjects {
		if len(probes[s.name]) == 0 {
			continue
		}
		var parts []string
		for _, c := range ompConstructs {
			parts = append(parts, fmt.Sprintf("%s %+.1f ns/event (%d events) = %.2fx", c, median(added[s.name][c]),
				ompEvents[s.cc][c], median(times[s.name][c])))
		}
		if s.null {
			r.note("%s (libomp's own cost with a tool attached, part of the adapter's below), added per event of the "+
				"adapter's (null tool - plain of the same round, medians over the rounds), and that over the "+
				"C probe's %.1f ns/event of the traced run of the same round: %s",
				s.name, median(probes[s.name]), strings.Join(parts, ", "))
			continue
		}
		r.note("%s, added per event (traced - plain of the same round, medians over the rounds), and that over the "+
			"C probe's %.1f ns/event (hmb_enter/hmb_leave recording, unthrottled, in the same traced process): %s",
			s.name, median(probes[s.name]), strings.Join(parts, ", "))
	}
	return runOpenMPTeams(o, r)
}

// ompTeams are the team sizes whose first parallel region the section times.
var ompTeams = []int{1024, 2048}

// runOpenMPTeams times the first parallel region of large teams (GCC,
// openmp_team.c), plain and traced, alternated: each of its threads
// registers at its first event, which once took seconds when each called
// into Go, and 2.9x plain's time through goproxy.c's proxies; a thread
// now registers in C alone (cshim/lib/runtime.c, hmb_locate).
func runOpenMPTeams(o *options, r *report) error {
	dir := filepath.Join(o.root, "build", "bench")
	plain, traced := filepath.Join(dir, "openmp_team_plain"), filepath.Join(dir, "openmp_team")
	if _, err := os.Stat(traced); err != nil {
		r.skip("gcc teams", err.Error())
		return nil
	}
	pairs := max(o.rounds, 5)
	if o.quick {
		pairs = 3
	}
	out := "HMB_OUTPUT=" + filepath.Join(o.work, "openmp-team")
	for _, n := range ompTeams {
		var ps, ts, ratios []float64
		for i := 0; i < pairs; i++ {
			// Alternated within the pair too: the machine's speed changes.
			first, second := plain, traced
			if i%2 == 1 {
				first, second = traced, plain
			}
			a, err := ompTeam(first, n, out)
			if err != nil {
				return err
			}
			b, err := ompTeam(second, n, out)
			if err != nil {
				return err
			}
			if first == traced {
				a, b = b, a
			}
			ps, ts, ratios = append(ps, a), append(ts, b), append(ratios, b/a)
		}
		// Rows of the section's subjects, so that the ratio column sets
		// the traced team against the plain one.
		metric := fmt.Sprintf("ms, first region of a team of %d", n)
		for i := range ps {
			r.add("gcc plain", metric, ps[i]*1e3)
			r.add("gcc libhmbtrace-omp", metric, ts[i]*1e3)
		}
		slices.Sort(ratios)
		r.note("team of %d threads (GCC), first parallel region: plain %.1f ms, traced %.1f ms (medians of %d alternated pairs), "+
			"traced/plain %.2f, the median of the ratio within a pair (%.2f–%.2f; issue 36's target: at most 2)",
			n, median(ps)*1e3, median(ts)*1e3, pairs, median(ratios), ratios[0], ratios[len(ratios)-1])
	}
	return nil
}

// ompTeam runs openmp_team with n threads and returns its first region's wall time, s.
func ompTeam(path string, n int, env string) (float64, error) {
	cmd := exec.Command(path, strconv.Itoa(n))
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s %d: %v\n%s", path, n, err, out)
	}
	// The result is the line that starts with "first"; the measurement may
	// say things of its own around it (an earlier run's files moved aside).
	for _, l := range strings.Split(string(out), "\n") {
		var first, second float64
		if _, err := fmt.Sscanf(l, "first %g second %g", &first, &second); err == nil {
			return first, nil
		}
	}
	return 0, fmt.Errorf("%s %d: no result in %q", path, n, out)
}

// ompResult is one run of openmp_bench: ns per construct, and the C
// probe's ns per event (-1 in a plain build).
type ompResult struct {
	ns    map[string]float64
	probe float64
}

// ompBench runs the OpenMP benchmark with 2 threads, on CPU cpu alone
// unless it is negative.
func ompBench(path string, n int, env []string, cpu int) (ompResult, error) {
	cmd := exec.Command(path, strconv.Itoa(n))
	if cpu >= 0 {
		cmd = exec.Command("taskset", "-c", strconv.Itoa(cpu), path, strconv.Itoa(n))
	}
	cmd.Env = append(os.Environ(), append([]string{"OMP_NUM_THREADS=2"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return ompResult{}, fmt.Errorf("%s: %v\n%s", path, err, out)
	}
	return parseOMPBench(string(out))
}

// parseOMPBench reads openmp_bench's line: "parallel region 588 ns,
// barrier 265 ns, task 120 ns, probe 11.2 ns/event (best of 5 rounds of 20000)".
func parseOMPBench(out string) (ompResult, error) {
	res := ompResult{ns: map[string]float64{}}
	// The result is the line that starts with the first construct; the
	// measurement may say things of its own around it (an earlier run's
	// files moved aside, the exit line).
	line := strings.TrimSpace(out)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, ompConstructs[0]+" ") {
			line = l
			break
		}
	}
	line, _, _ = strings.Cut(line, " (")
	fields := strings.Split(line, ", ")
	if len(fields) != len(ompConstructs)+1 {
		return res, fmt.Errorf("openmp_bench: no result in %q", out)
	}
	for i, c := range ompConstructs {
		v, ok := strings.CutPrefix(fields[i], c+" ")
		v, ok2 := strings.CutSuffix(v, " ns")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || !ok2 || err != nil {
			return res, fmt.Errorf("openmp_bench: %q: want %q <ns> ns", fields[i], c)
		}
		res.ns[c] = x
	}
	v, ok := strings.CutPrefix(fields[len(ompConstructs)], "probe ")
	v, ok2 := strings.CutSuffix(v, " ns/event")
	x, err := strconv.ParseFloat(v, 64)
	if !ok || !ok2 || err != nil {
		return res, fmt.Errorf("openmp_bench: %q: want probe <ns> ns/event", fields[len(ompConstructs)])
	}
	res.probe = x
	return res, nil
}
