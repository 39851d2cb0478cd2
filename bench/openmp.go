package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The openmp section: what the OpenMP adapter (libhmbtrace-omp) adds to an
// empty parallel region and to a barrier, for 2 threads, with GCC's
// libgomp (interposed) and clang's libomp (OMPT), each plain, traced, and
// traced with HMB_ENABLE=0, interleaved over the rounds. A parallel
// region's events: the region and, on each thread, its implicit task and
// implicit barrier (10); a barrier's: its enter and leave on each thread.
func runOpenMP(o *options, r *report) error {
	if _, err := exec.LookPath("make"); err != nil {
		r.skip("OpenMP", "no make (Debian package make)")
		return nil
	}
	cmd := exec.Command("make", "-s", "-C", "cshim", "bench-omp-binary")
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the OpenMP benchmark: %v\n%s", err, out)
	}
	bin := filepath.Join(o.root, "build", "bench", "openmp_bench")
	n := 20_000
	if o.quick {
		n = 5_000
	}
	type subject struct {
		name, path string
		env        []string
	}
	var subjects []subject
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := os.Stat(bin + "_" + cc); err != nil {
			r.skip(cc, "not built (clang: Debian packages clang, libomp-dev)")
			continue
		}
		subjects = append(subjects,
			subject{cc + " plain", bin + "_" + cc + "_plain", nil},
			subject{cc + " libhmbtrace-omp", bin + "_" + cc, []string{"HMB_OUTPUT=" + filepath.Join(o.work, "openmp")}},
			subject{cc + " libhmbtrace-omp, HMB_ENABLE=0", bin + "_" + cc, []string{"HMB_ENABLE=0"}})
	}
	for round := 0; round < o.rounds; round++ {
		for _, s := range subjects {
			par, bar, err := ompBench(s.path, n, s.env)
			if err != nil {
				return err
			}
			r.add(s.name, "ns/parallel region", par)
			r.add(s.name, "ns/barrier", bar)
		}
	}
	r.note("2 threads, %d empty parallel regions and %d barriers per run, the best of 5 rounds in each; with gcc a traced parallel region also ends in an explicit barrier (the implicit one, made visible)", n, n)
	return nil
}

// ompBench runs the OpenMP benchmark with 2 threads and returns its ns per
// parallel region and per barrier.
func ompBench(path string, n int, env []string) (par, bar float64, err error) {
	cmd := exec.Command(path, strconv.Itoa(n))
	cmd.Env = append(os.Environ(), append([]string{"OMP_NUM_THREADS=2"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", path, err, out)
	}
	// "parallel region 588 ns, barrier 265 ns (best of 5 rounds of 20000)"
	f := strings.Fields(string(out))
	if len(f) < 6 || f[0] != "parallel" || f[3] != "ns," || f[4] != "barrier" {
		return 0, 0, fmt.Errorf("%s: no result in %q", path, out)
	}
	if par, err = strconv.ParseFloat(f[2], 64); err == nil {
		bar, err = strconv.ParseFloat(f[5], 64)
	}
	return par, bar, err
}
