package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The autoinst section: examples/cxx-mpi, a C++ MPI code whose hot loops
// call small inline accessors, on two ranks, built five ways through its
// Makefile: plain (CXX=mpicxx); by hmbtrace-instrument --no-plugin with
// --no-exclude-system and HMB_THROTTLE=0 (everything instrumented, the
// standard library too, nothing switched off: what -finstrument-functions
// alone gives); by hmbtrace-instrument --no-plugin with its other defaults
// (-finstrument-functions, system headers excluded, throttling); by
// hmbtrace-instrument with its defaults (GCC: the plugin, which
// instruments after inlining); and by hmbtrace-instrument --filter with the
// filter `hmbtrace score -g` wrote from a first run of the defaults (run
// with it as HMB_FILTER_FILE too).
// Metrics: rank 0's time-step loop (what the instrumentation costs) and
// the whole mpirun (MPI's start and the trace's writing included).
//
// Then the same on 8 ranks oversubscribed on the machine's cores, as
// issue 36 ran LULESH (8 ranks on 2 cores): preemption lands inside the
// accessors' calls, which throttling must not be fooled by. A first run
// of the -finstrument-functions build (whose accessors are instrumented:
// the plugin's are inlined first) writes one file per rank, and the
// section notes the regions throttled on some ranks only (none is the
// goal); then plain and the three cheap builds alternate, each compared
// with the plain run just before it.
func runAutoinst(o *options, r *report) error {
	if why := missing(prereq{"mpicxx", "libopenmpi-dev"}, prereq{"mpirun", "openmpi-bin"}, prereq{"make", "make"}, prereq{"g++", "g++"}); why != "" {
		r.skip("cxx-mpi", why)
		return nil
	}
	if err := makeCshim(o, "cshim"); err != nil {
		return err
	}
	inst := filepath.Join(o.root, "build", "bin", "hmbtrace-instrument")
	hmbtrace, err := buildHmbtrace(o, "hmbtrace")
	if err != nil {
		return err
	}
	args := []string{"20000", "100"}
	if o.quick {
		args = []string{"5000", "20"}
	}
	dir := filepath.Join(o.work, "autoinst")
	build := func(name string, cxx ...string) (string, error) {
		out := filepath.Join(dir, name)
		if err := os.MkdirAll(out, 0o755); err != nil {
			return "", err
		}
		cmd := exec.Command("make", "-s", "-C", filepath.Join(o.root, "examples", "cxx-mpi"), "O="+out, "CXX="+strings.Join(cxx, " "))
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building cxx-mpi with CXX=%q: %v\n%s", strings.Join(cxx, " "), err, msg)
		}
		return filepath.Join(out, "cxx-mpi"), nil
	}
	plain, err := build("plain", "mpicxx")
	if err != nil {
		return err
	}
	full, err := build("full", inst, "--no-plugin", "--no-exclude-system", "mpicxx")
	if err != nil {
		return err
	}
	noPlugin, err := build("no-plugin", inst, "--no-plugin", "mpicxx")
	if err != nil {
		return err
	}
	defaults, err := build("defaults", inst, "mpicxx")
	if err != nil {
		return err
	}
	// The first run of the defaults writes the trace score -g reads.
	first := filepath.Join(dir, "first-run")
	if _, _, err := runProxy(defaults, 2, args, []string{"HMB_OUTPUT=" + first}); err != nil {
		return err
	}
	flt := filepath.Join(dir, "score.filter")
	if out, err := exec.Command(hmbtrace, "score", "-g", flt, first).CombinedOutput(); err != nil {
		return fmt.Errorf("hmbtrace score -g: %v\n%s", err, out)
	}
	scored, err := build("scored", inst, "--filter", flt, "mpicxx")
	if err != nil {
		return err
	}
	const (
		sPlain    = "plain mpicxx"
		sFull     = "everything instrumented, no throttling"
		sNoPlugin = "-finstrument-functions defaults (--no-plugin)"
		sDefaults = "hmbtrace-instrument defaults (GCC plugin)"
		sScored   = "after score -g"
	)
	subjects := []subject{
		{sPlain, plain, nil},
		{sFull, full, []string{"HMB_THROTTLE=0"}},
		{sNoPlugin, noPlugin, nil},
		{sDefaults, defaults, nil},
		{sScored, scored, []string{"HMB_FILTER_FILE=" + flt}},
	}
	// Every run starts with nothing of an earlier run's to write back: its
	// trace files are removed and the page cache synced, untimed, after it.
	// Otherwise the writeback of the unthrottled build's large traces fell
	// on the runs after it. The three cheap builds run three times per
	// round, interleaved, and each is compared with the plain run just
	// before it: the VM's speed changes between rounds (see probeslice.go).
	out := filepath.Join(dir, "out")
	run := func(s subject) (float64, error) {
		env := append([]string{"HMB_OUTPUT=" + out}, s.env...)
		loop, wall, err := runProxy(s.bin, 2, args, env)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", s.name, err)
		}
		r.add(s.name, "loop ms", loop*1e3)
		r.add(s.name, "wall ms", wall*1e3)
		if err := os.RemoveAll(out); err != nil {
			return 0, err
		}
		writeBack()
		return wall, nil
	}
	ratios := map[string][]float64{}
	for round := 0; round < o.rounds; round++ {
		for rep := 0; rep < 3; rep++ {
			plainWall, err := run(subjects[0])
			if err != nil {
				return err
			}
			for _, s := range subjects[3:] {
				w, err := run(s)
				if err != nil {
					return err
				}
				ratios[s.name] = append(ratios[s.name], w/plainWall)
			}
		}
		for _, s := range subjects[1:3] {
			if _, err := run(s); err != nil {
				return err
			}
		}
	}
	excluded, _ := os.ReadFile(flt)
	r.note("cxx-mpi %s (elements per rank, steps) on 2 ranks; loop: rank 0's time steps, wall: the whole mpirun; plain, defaults and after score -g run 3 times a round, the others once; each run's traces removed and the page cache synced after it, untimed", strings.Join(args, " "))
	r.note("score -g excluded: %s", strings.Join(filterNames(string(excluded)), ", "))
	for _, s := range subjects[3:] {
		q := ratios[s.name]
		r.note("%s / plain mpicxx, wall, each run against the plain run just before it: median %.3f (%.3f–%.3f) over %d pairs",
			s.name, median(q), slices.Min(q), slices.Max(q), len(q))
	}
	return autoinstOversubscribed(o, r, dir, args, []subject{subjects[0], subjects[2], subjects[3], subjects[4]})
}

// subject is a build the section runs: its name, program and
// environment.
type subject struct {
	name, bin string
	env       []string
}

// autoinstOversubscribed runs the 8-rank part of the section: subjects[0]
// is the plain build, the others are compared with it; subjects[1] makes
// the first run, whose throttled regions are compared over the ranks.
func autoinstOversubscribed(o *options, r *report, dir string, args []string, subjects []subject) error {
	const np = 8
	first := filepath.Join(dir, "first-run-8")
	if _, _, err := runProxy(subjects[1].bin, np, args, []string{"HMB_OUTPUT=" + first, "HMB_OUTPUT_LAYOUT=rank-files"}); err != nil {
		return err
	}
	split, ranks, err := throttledOnSomeRanks(first)
	if err != nil {
		return err
	}
	if len(split) == 0 {
		r.note("%d ranks oversubscribed, %s: every region throttled on one rank was throttled on all %d", np, subjects[1].name, ranks)
	} else {
		r.note("%d ranks oversubscribed, %s: throttled on some of the %d ranks only: %s", np, subjects[1].name, ranks, strings.Join(split, "; "))
	}
	if o.quick {
		return nil // the pairs at 8 ranks take as long as the rest of the section: make test's run stops at the check
	}
	out := filepath.Join(dir, "out-8")
	run := func(s subject) (float64, error) {
		loop, wall, err := runProxy(s.bin, np, args, append([]string{"HMB_OUTPUT=" + out}, s.env...))
		if err != nil {
			return 0, fmt.Errorf("%s on %d ranks: %v", s.name, np, err)
		}
		r.add(s.name+", 8 ranks", "loop ms", loop*1e3)
		r.add(s.name+", 8 ranks", "wall ms", wall*1e3)
		if err := os.RemoveAll(out); err != nil {
			return 0, err
		}
		writeBack()
		return wall, nil
	}
	ratios := map[string][]float64{}
	for round := 0; round < o.rounds; round++ {
		plainWall, err := run(subjects[0])
		if err != nil {
			return err
		}
		for _, s := range subjects[1:] {
			w, err := run(s)
			if err != nil {
				return err
			}
			ratios[s.name] = append(ratios[s.name], w/plainWall)
		}
	}
	for _, s := range subjects[1:] {
		q := ratios[s.name]
		r.note("%d ranks oversubscribed: %s / plain mpicxx, wall, each run against the plain run just before it: median %.3f (%.3f–%.3f) over %d pairs",
			np, s.name, median(q), slices.Min(q), slices.Max(q), len(q))
	}
	return nil
}

// throttledOnSomeRanks reads the rank files in dir and returns the regions
// throttled on some ranks but not on others that visited them as often
// (at least the early step's visits), each with its count of ranks, and
// the number of ranks.
func throttledOnSomeRanks(dir string) ([]string, int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.hmb"))
	if err != nil || len(paths) == 0 {
		return nil, 0, fmt.Errorf("no rank files in %s (%v)", dir, err)
	}
	on, visited := map[string]int{}, map[string]int{}
	for _, path := range paths {
		f, err := tracefile.Open(path)
		if err != nil {
			return nil, 0, err
		}
		throttled, seen := map[string]bool{}, map[string]bool{}
		for _, l := range f.Locations {
			for _, e := range l.Profile {
				name := f.RegionName(e.Region)
				if e.Throttled {
					throttled[name] = true
				}
				if f.ThrottleRule != nil && e.Visits+e.VisitsAfter >= f.ThrottleRule.Early {
					seen[name] = true
				}
			}
		}
		f.Close()
		for name := range throttled {
			on[name]++
		}
		for name := range seen {
			visited[name]++
		}
	}
	var split []string
	for name, n := range on {
		if n < visited[name] {
			split = append(split, fmt.Sprintf("%s on %d of %d", name, n, visited[name]))
		}
	}
	slices.Sort(split)
	return split, len(paths), nil
}

// runProxy runs cxx-mpi on np ranks and returns the loop time rank 0
// printed and the wall time of the whole mpirun, in seconds.
func runProxy(bin string, np int, args, env []string) (loop, wall float64, err error) {
	argv := []string{"--allow-run-as-root", "-np", strconv.Itoa(np)}
	if runtime.NumCPU() < np {
		argv = append(argv, "--oversubscribe")
	}
	for _, kv := range env {
		argv = append(argv, "-x", kv[:strings.IndexByte(kv, '=')])
	}
	argv = append(append(argv, bin), args...)
	cmd := exec.Command("mpirun", argv...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(start).Seconds()
	if err != nil {
		return 0, 0, fmt.Errorf("mpirun %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "cxx-mpi:" && f[1] == "loop" {
			loop, err = strconv.ParseFloat(f[2], 64)
			return loop, wall, err
		}
	}
	return 0, 0, fmt.Errorf("mpirun %s: no loop time in\n%s", strings.Join(argv, " "), out)
}

// filterNames lists the names a generated filter file excludes, one per
// line between its markers.
func filterNames(text string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "SCOREP_REGION_NAMES_BEGIN":
			in = true
		case line == "SCOREP_REGION_NAMES_END":
			in = false
		case in && line != "" && line != "EXCLUDE" && !strings.HasPrefix(line, "#"):
			names = append(names, strings.ReplaceAll(line, `\ `, " "))
		}
	}
	return names
}
