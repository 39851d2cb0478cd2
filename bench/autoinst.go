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
func runAutoinst(o *options, r *report) error {
	for _, need := range []struct{ what, pkg string }{{"mpicxx", "libopenmpi-dev"}, {"mpirun", "openmpi-bin"}, {"make", "make"}, {"g++", "g++"}} {
		if _, err := exec.LookPath(need.what); err != nil {
			r.skip("cxx-mpi", fmt.Sprintf("no %s (Debian package %s)", need.what, need.pkg))
			return nil
		}
	}
	cmd := exec.Command("make", "-s", "-C", "cshim", "cshim")
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make cshim: %v\n%s", err, out)
	}
	inst := filepath.Join(o.root, "build", "bin", "hmbtrace-instrument")
	hmbtrace := filepath.Join(o.work, "hmbtrace")
	cmd = exec.Command("go", "build", "-o", hmbtrace, "./cmd/hmbtrace")
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/hmbtrace: %v\n%s", err, out)
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
	if _, _, err := runProxy(defaults, args, []string{"HMB_OUTPUT=" + first}); err != nil {
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
	type subject struct {
		name, bin string
		env       []string
	}
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
		loop, wall, err := runProxy(s.bin, args, env)
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
	return nil
}

// runProxy runs cxx-mpi on two ranks and returns the loop time rank 0
// printed and the wall time of the whole mpirun, in seconds.
func runProxy(bin string, args, env []string) (loop, wall float64, err error) {
	argv := []string{"--allow-run-as-root", "-np", "2"}
	if runtime.NumCPU() < 2 {
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
