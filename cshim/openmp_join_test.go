package cshim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestOpenMPJoin: with GCC, the end of a parallel region meets no extra
// barrier (gomp.c, struct body), yet every thread has its implicit task and
// the implicit barrier at its end in each region, and their waits show the
// imbalance: the threads that arrive first wait longer. A region whose
// last thread creates tasks only after thread 0 reached its end still
// runs them all, well nested. With OMP_CANCELLATION=true (no GOMP_barrier
// may be added) and with sleeping waits (passive) too, and with 3 threads.
func TestOpenMPJoin(t *testing.T) {
	build := library(t)
	p := buildOpenMP(t, build, "gcc", filepath.Join(root, "cshim", "testdata", "openmp", "join.c"))
	// The sleep is long beside a scheduler's time slice (a few ms), so a
	// thread preempted on a loaded machine cannot undo the imbalance.
	const rounds, sleepUS, tasks = 3, 20000, 10
	for _, c := range []struct {
		name    string
		threads int
		env     []string
	}{
		{"default", 2, nil},
		{"passive", 2, []string{"OMP_WAIT_POLICY=passive"}},
		{"spin", 3, []string{"GOMP_SPINCOUNT=infinite"}},
		{"cancellation", 2, []string{"OMP_CANCELLATION=true"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(p.out)
			env := append([]string{fmt.Sprintf("OMP_NUM_THREADS=%d", c.threads)}, c.env...)
			out, _ := p.run(t, env, fmt.Sprint(rounds), fmt.Sprint(sleepUS), fmt.Sprint(tasks))
			if want := fmt.Sprintf("ran %d", rounds*tasks); !strings.Contains(out, want) {
				t.Fatalf("output %q, want %q", out, want)
			}
			evs := dump(t, filepath.Join(p.out, "join.0.hmb"))
			checkTrace(t, evs, nil, nil)
			// Per location and function: implicit tasks, implicit barriers,
			// and the barriers' summed waits.
			type key struct{ loc, fn, kind string }
			count := map[key]int{}
			wait := map[key]int64{}
			type open struct {
				region string
				ns     int64
			}
			stacks := map[string][]open{}
			completed := 0
			for _, e := range evs {
				st := stacks[e.loc]
				switch e.kind {
				case "ENTER":
					st = append(st, open{e.region, e.ns})
				case "LEAVE":
					top := st[len(st)-1]
					st = st[:len(st)-1]
					for _, fn := range []string{"zero_slow", "last_slow", "late_tasks"} {
						for _, kind := range []string{"!$omp implicit task ", "!$omp implicit barrier "} {
							if strings.HasPrefix(top.region, kind+fn+"._omp_fn") {
								k := key{e.loc, fn, kind}
								count[k]++
								wait[k] += e.ns - top.ns
							}
						}
					}
				case "TASK_COMPLETE":
					completed++
				}
				stacks[e.loc] = st
			}
			last := fmt.Sprintf("thread %d", c.threads-1)
			for i := 0; i < c.threads; i++ {
				loc := fmt.Sprintf("thread %d", i)
				for _, fn := range []string{"zero_slow", "last_slow", "late_tasks"} {
					for _, kind := range []string{"!$omp implicit task ", "!$omp implicit barrier "} {
						if n := count[key{loc, fn, kind}]; n != rounds {
							t.Errorf("%s: %d %s%s, want %d", loc, n, kind, fn, rounds)
						}
					}
				}
			}
			b := "!$omp implicit barrier "
			if w0, wl := wait[key{"thread 0", "zero_slow", b}], wait[key{last, "zero_slow", b}]; wl <= w0 {
				t.Errorf("zero_slow (thread 0 sleeps): %s waited %d ns at the end, thread 0 %d ns; want %s longer", last, wl, w0, last)
			}
			if w0, wl := wait[key{"thread 0", "last_slow", b}], wait[key{last, "last_slow", b}]; w0 <= wl {
				t.Errorf("last_slow (%s sleeps): thread 0 waited %d ns at the end, %s %d ns; want thread 0 longer", last, w0, last, wl)
			}
			if enters := count[key{last, "late_tasks", b}]; enters != rounds {
				t.Errorf("late_tasks: %d implicit barriers on %s, want %d", enters, last, rounds)
			}
			if completed != rounds*tasks {
				t.Errorf("%d tasks completed in the trace, want %d", completed, rounds*tasks)
			}
		})
	}
}

// TestOpenMPSharedCore: with GCC, a team whose threads share one core (as
// under mpirun, which binds a rank to a core) makes no more sleeps per
// parallel region traced than untraced. The threads that reach a region's
// end before thread 0 wait for it in the adapter's join (gomp.c,
// join_wait); a sleep there costs a wake-up and a second sleep in
// libgomp's barrier that the untraced program does not make. Counted as
// the process's voluntary context switches, not timed: the untraced
// program sleeps about twice per region (a thread at the barrier, one at
// the next fork), the adapter's join slept once more before it yielded.
// The trace still has each thread's implicit task and barrier per region.
func TestOpenMPSharedCore(t *testing.T) {
	tracetest.RequireTool(t, "taskset", "util-linux")
	build := library(t)
	p := buildOpenMP(t, build, "gcc", filepath.Join(root, "cshim", "testdata", "openmp", "sharedcore.c"))
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatalf("sched_getaffinity: %v", err)
	}
	cpu := -1
	for c := 0; c < 1024 && cpu < 0; c++ {
		if set.IsSet(c) {
			cpu = c
		}
	}
	if cpu < 0 {
		t.Fatal("sched_getaffinity: no CPU in the test's mask")
	}
	// Thread 0 computes 200 us per region, longer than the worker's
	// spinning before it sleeps, shorter than a time slice.
	const regions, workUS = 400, 200
	taskset := program{path: "taskset", out: p.out}
	switches := func(env ...string) (voluntary float64, stdout string) {
		os.RemoveAll(p.out)
		env = append(env, "OMP_NUM_THREADS=2")
		out, _ := taskset.run(t, env, "-c", fmt.Sprint(cpu), p.path, fmt.Sprint(regions), fmt.Sprint(workUS))
		var parts int
		var involuntary float64
		if _, err := fmt.Sscanf(out, "parts %d voluntary %g involuntary %g", &parts, &voluntary, &involuntary); err != nil || parts != 2*regions {
			t.Fatalf("output %q (%v), want parts %d and the switches", out, err, 2*regions)
		}
		return voluntary, out
	}
	// The least excess of three tries: another process on the core can
	// add sleeps to either run, none can take the adapter's away.
	excess := 1e9
	var traced, untraced string
	for try := 0; try < 3 && excess >= 0.5; try++ {
		var vt, vu float64
		vu, untraced = switches("HMB_ENABLE=0")
		vt, traced = switches()
		if vt-vu < excess {
			excess = vt - vu
		}
		evs := dump(t, filepath.Join(p.out, "sharedcore.0.hmb"))
		checkTrace(t, evs, nil, nil)
		count := map[string]int{}
		for _, e := range evs {
			if e.kind == "ENTER" && (strings.HasPrefix(e.region, "!$omp implicit task main._omp_fn") ||
				strings.HasPrefix(e.region, "!$omp implicit barrier main._omp_fn")) {
				count[e.loc+" "+strings.Fields(e.region)[2]]++
			}
		}
		for _, loc := range []string{"thread 0", "thread 1"} {
			for _, kind := range []string{"task", "barrier"} {
				if n := count[loc+" "+kind]; n != regions {
					t.Fatalf("%s: %d implicit %ss, want %d (all: %v)", loc, n, kind, regions, count)
				}
			}
		}
	}
	t.Logf("one core, 2 threads: %.2f more voluntary context switches per region traced than untraced", excess)
	if excess >= 0.5 {
		t.Errorf("one core, 2 threads: %.2f more voluntary context switches per region traced than untraced, want < 0.5\ntraced:   %suntraced: %s", excess, traced, untraced)
	}
}
