package cshim_test

// These tests pin down what the OpenMP adapter's cost rests on with clang
// and libomp: which OMPT callbacks fire per parallel region, the events the
// adapter records for them (the unit of `go run ./bench -sections openmp`),
// and that the per-thread caches of its region path keep the regions right.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// ompCallbacks runs a program built with the null tool's counting variant
// and returns its counts: "<callback> <kind or endpoint>" -> calls.
func ompCallbacks(t *testing.T, path string, args ...string) map[string]int {
	t.Helper()
	p := program{path: path, out: filepath.Join(t.TempDir(), "hmb-out")}
	_, stderr := p.run(t, []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive", "KMP_BLOCKTIME=0"}, args...)
	counts := map[string]int{}
	for _, line := range strings.Split(stderr, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "ompt" {
			continue
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("null tool line %q: %v", line, err)
		}
		counts[f[1]+" "+f[2]] = n
	}
	if len(counts) == 0 {
		t.Fatalf("%s: the null tool counted no callback (did libomp find ompt_start_tool?); stderr:\n%s", filepath.Base(path), stderr)
	}
	return counts
}

// TestOMPTCallbacksPerRegion: with 2 threads, an empty parallel region
// costs libomp 10 callbacks of those the adapter registers (parallel begin
// and end; implicit task begin and end, and the implicit barrier's begin
// and end, on each thread), and the adapter records 8 events for them, as
// bench/openmp.go counts (the worker's barrier is not recorded: libomp
// tells its end only at the next region).
func TestOMPTCallbacksPerRegion(t *testing.T) {
	tracetest.RequireTool(t, "clang", "clang and libomp-dev")
	build := library(t)
	dir := t.TempDir()
	bench := filepath.Join(root, "cshim", "bench")
	src := filepath.Join(bench, "openmp_constructs.c")
	counter := filepath.Join(dir, "constructs_count")
	args := []string{"-O2", "-fopenmp", "-DHMB_NULLTOOL_COUNT", "-o", counter, src, filepath.Join(bench, "openmp_nulltool.c")}
	if msg, err := run(dir, nil, "clang", args...); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	const few, many = 10, 40
	a, b := ompCallbacks(t, counter, "0", fmt.Sprint(few)), ompCallbacks(t, counter, "0", fmt.Sprint(many))
	per := map[string]int{}
	for k, n := range b {
		if d := n - a[k]; d != 0 {
			if d%(many-few) != 0 {
				t.Errorf("callback %s: %d more calls for %d more regions: not a whole number per region", k, d, many-few)
			}
			per[k] = d / (many - few)
		}
	}
	barrier := per["sync_region 2"] + per["sync_region 9"] // barrier_implicit, or _parallel (OpenMP 5.1)
	delete(per, "sync_region 2")
	delete(per, "sync_region 9")
	want := map[string]int{"parallel_begin 0": 1, "parallel_end 0": 1, "implicit_task 1": 2, "implicit_task 2": 2}
	if fmt.Sprint(per) != fmt.Sprint(want) || barrier != 4 {
		t.Errorf("callbacks per region %v and %d implicit barrier ones, want %v and 4", per, barrier, want)
	}

	// The adapter's events for them, counted in its traces.
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-omp")
	if err != nil {
		t.Fatalf("pkg-config --cflags --libs hmbtrace-omp: %v\n%s", err, pc)
	}
	traced := filepath.Join(dir, "constructs")
	args = append([]string{"-O2", "-fopenmp", "-o", traced, src}, strings.Fields(string(pc))...)
	if msg, err := run(dir, nil, "clang", args...); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	events := func(n int) (map[string]int, int) {
		p := program{path: traced, out: filepath.Join(t.TempDir(), "hmb-out")}
		p.run(t, []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive", "KMP_BLOCKTIME=0"}, "0", fmt.Sprint(n))
		evs := dump(t, filepath.Join(p.out, "constructs.0.hmb"))
		checkTrace(t, evs, nil, nil)
		per := map[string]int{}
		for _, e := range evs {
			for _, kind := range []string{"parallel", "implicit task", "implicit barrier"} {
				if (e.kind == "ENTER" || e.kind == "LEAVE") && strings.HasPrefix(e.region, "!$omp "+kind+" ") {
					per[e.loc+" "+kind]++
				}
			}
		}
		return per, len(evs)
	}
	ea, na := events(few)
	eb, nb := events(many)
	if got := (nb - na) / (many - few); got*(many-few) != nb-na || got != 8 {
		t.Errorf("%d more events for %d more regions, want 8 per region (bench/openmp.go's ompEvents)", nb-na, many-few)
	}
	// thread 0: parallel, implicit task, implicit barrier; thread 1: its implicit task.
	for _, k := range []string{"thread 0 parallel", "thread 0 implicit task", "thread 0 implicit barrier", "thread 1 implicit task"} {
		if d := eb[k] - ea[k]; d != 2*(many-few) {
			t.Errorf("%s: %d more enters and leaves for %d more regions, want 2 per region", k, d, many-few)
		}
	}
}

// TestOpenMPClangRegionSites: two parallel constructs in turn take turns
// in the forking thread's slot of the adapter, which keeps a construct's
// regions, its implicit barrier's among them: each region of thread 0 is
// named after its own construct, and its implicit barrier's wait is the
// imbalance of that construct (2 ms on thread 1 in one, none in the
// other). Compared, not timed: a sleep is never shorter on a loaded machine.
func TestOpenMPClangRegionSites(t *testing.T) {
	tracetest.RequireTool(t, "clang", "clang and libomp-dev")
	build := library(t)
	src := filepath.Join(root, "cshim", "testdata", "openmp", "regions.c")
	p := buildOpenMP(t, build, "clang", src)
	lines := map[string]int{}
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(text), "\n") {
		for _, c := range []string{"A", "B"} {
			if strings.Contains(l, "/* REGION "+c+" */") {
				lines[c] = i + 1
			}
		}
	}
	const n = 10
	stdout, _ := p.run(t, []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive", "KMP_BLOCKTIME=0"}, fmt.Sprint(n))
	if want := fmt.Sprintf("counted %d", 4*n); !strings.Contains(stdout, want) {
		t.Fatalf("output %q, want %q", stdout, want)
	}
	evs := dump(t, filepath.Join(p.out, "regions.0.hmb"))
	checkTrace(t, evs, nil, nil)
	enters := map[string]int{}
	wait := map[string]int64{}
	var stack []event
	for _, e := range evs {
		if e.loc != "thread 0" {
			continue
		}
		switch e.kind {
		case "ENTER":
			enters[e.region]++
			stack = append(stack, e)
		case "LEAVE":
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.region != e.region {
				t.Fatalf("thread 0 leaves %q in %q", e.region, top.region)
			}
			wait[e.region] += e.ns - top.ns
		}
	}
	for _, c := range []string{"A", "B"} {
		at := fmt.Sprintf("@regions.c:%d", lines[c])
		for _, kind := range []string{"!$omp parallel", "!$omp implicit task", "!$omp implicit barrier"} {
			if got := enters[kind+" "+at]; got != n {
				t.Errorf("thread 0: %d regions %q, want %d (all: %v)", got, kind+" "+at, n, enters)
			}
		}
	}
	a := wait[fmt.Sprintf("!$omp implicit barrier @regions.c:%d", lines["A"])]
	b := wait[fmt.Sprintf("!$omp implicit barrier @regions.c:%d", lines["B"])]
	// Thread 0 may reach its barrier after thread 1 began to sleep: half the sleeps, summed.
	if a < n*1_000_000 || a <= b {
		t.Errorf("thread 0's implicit barriers: %d ns in the region where thread 1 works 2 ms more, %d ns in the other; want at least %d and more than the other",
			a, b, n*1_000_000)
	}
}
