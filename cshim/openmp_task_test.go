package cshim_test

// The explicit tasks of testdata/openmp/taskfib.c and taskfib.f90, built
// with gcc, gfortran and clang: a recursive Fibonacci of tasks with
// taskwait, tasks created in a single construct and run by the team, and
// tasks in a taskgroup. Every task must be created once, run and complete
// once, its regions nested in it on the thread that runs it; every command
// must read the trace; the OTF2 export must give each task one
// ThreadTaskCreate and one ThreadTaskComplete and well nested per-task
// region stacks; and a buffer far too small must shed levels without
// breaking any of that.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// taskfibTasks is what taskfib creates with fib(12), 200 tasks in a single
// construct and 20 in a taskgroup: fib(n) creates 2*(fib(n+1)-1) tasks.
const taskfibTasks = 2*(233-1) + 200 + 20

func TestOpenMPTasks(t *testing.T) {
	build := library(t)
	for _, c := range []struct{ compiler, source string }{
		{"gcc", "taskfib.c"}, {"gfortran", "taskfib.f90"}, {"clang", "taskfib.c"},
	} {
		t.Run(c.compiler, func(t *testing.T) {
			switch c.compiler {
			case "clang":
				tracetest.RequireTool(t, "clang", "clang and libomp-dev")
			case "gfortran":
				tracetest.RequireTool(t, "gfortran", "gfortran")
			}
			p := buildOpenMP(t, build, c.compiler, filepath.Join(root, "cshim", "testdata", "openmp", c.source))
			env := []string{"OMP_NUM_THREADS=3", "OMP_WAIT_POLICY=passive", "KMP_BLOCKTIME=0"}
			out, _ := p.run(t, env)
			want := fmt.Sprintf("fib 144 many 200 group 20 tasks %d", taskfibTasks)
			if !strings.Contains(out, want) {
				t.Fatalf("output %q, want %q", out, want)
			}
			file := filepath.Join(p.out, strings.TrimSuffix(filepath.Base(p.path), filepath.Ext(p.path))+".0.hmb")
			tasks := checkTasks(t, file, taskfibTasks)
			// Every task is tied: its four records (creation, switch,
			// completion, switch back) take the direct path but where
			// Go must make a level, a bin or a location first.
			if c.source == "taskfib.c" {
				if d := directTaskRecords(t, out); d < 4*taskfibTasks*9/10 {
					t.Errorf("%d task records took the direct path, want at least 9/10 of %d", d, 4*taskfibTasks)
				}
				// Staged, the tied records are replayed in Go, and read the same.
				staged := program{path: p.path, out: filepath.Join(t.TempDir(), "staged")}
				out, _ := staged.run(t, append(env, "HMB_C_PROBE=staged"))
				if d := directTaskRecords(t, out); d != 0 {
					t.Errorf("HMB_C_PROBE=staged: %d task records took the direct path, want none", d)
				}
				checkTasks(t, filepath.Join(staged.out, filepath.Base(file)), taskfibTasks)
			}
			if tasks.elsewhere == 0 {
				t.Errorf("no task ran on a thread other than its creator's")
			}
			if msg, err := run(root, nil, built.hmbtrace, "summary", file); err != nil {
				t.Fatalf("hmbtrace summary: %v\n%s", err, msg)
			}
			checkPlaces(t, file)
			res := exportTasks(t, p.out)
			if res.Created != taskfibTasks || res.Completed != taskfibTasks || res.NBad != 0 || res.Elsewhere == 0 {
				t.Errorf("python3-otf2: %d tasks created, %d completed (want %d each), %d created and completed once each "+
					"but not %v, %d completed elsewhere", res.Created, res.Completed, taskfibTasks, res.NBad, res.BadTasks, res.Elsewhere)
			}

			// A buffer of 32 bins of 512 bytes holds a third of the events:
			// the depth policy closes the deepest levels of every thread.
			small := program{path: p.path, out: filepath.Join(t.TempDir(), "small")}
			small.run(t, append(env, "HMB_BUFFER_SIZE=16K", "HMB_BIN_SIZE=512"))
			file = filepath.Join(small.out, filepath.Base(file))
			sum, err := run(root, nil, built.hmbtrace, "summary", file)
			if err != nil {
				t.Fatalf("hmbtrace summary: %v\n%s", err, sum)
			}
			if !regexp.MustCompile(`(?m)^\s+reductions\s+[1-9]`).Match(sum) {
				t.Fatalf("the small buffer made no reduction:\n%s", sum)
			}
			shed := checkTasks(t, file, -1)
			res = exportTasks(t, small.out)
			if res.Created != shed.created || res.Created >= taskfibTasks {
				t.Errorf("small buffer: python3-otf2 read %d creations, the trace has %d (of %d)", res.Created, shed.created, taskfibTasks)
			}
		})
	}
}

// directTaskRecords reads taskfib.c's count of the task records its
// threads wrote on the direct path.
func directTaskRecords(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`direct task records ([0-9]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output %q: no direct task records", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// taskCounts is what checkTasks found.
type taskCounts struct {
	created   int
	elsewhere int // tasks completed on another location than their creator's
}

// checkTasks dumps a trace and checks its tasks: ids created once, each
// switch and completion of a created task (when want is not negative,
// want tasks and every one completes exactly once), a completion while
// the task runs (unless the buffer dropped records for want of a bin, as
// a thread that finds the pool empty while the others sleep on their
// bins does: then a task's switch may be lost where its completion was
// kept), a task's "!$omp task"
// region entered only while the location runs it and once per part (from
// its first switch or a resumption after a suspension to its suspension or
// completion), every region entered while a task runs nested in that
// task's region, and a suspension or completion only once the task's
// region was left there.
func checkTasks(t *testing.T, file string, want int) taskCounts {
	t.Helper()
	complete := want >= 0
	out, err := run(root, nil, built.hmbtrace, "dump", file)
	if err != nil {
		t.Fatalf("hmbtrace dump: %v\n%s", err, out)
	}
	sum, err := run(root, nil, built.hmbtrace, "summary", file)
	if err != nil {
		t.Fatalf("hmbtrace summary: %v\n%s", err, sum)
	}
	noBin := regexp.MustCompile(`(?m)^\s+events removed .*no-bin [1-9]`).Match(sum)
	type open struct {
		region  string
		task    uint64 // the task whose region this is, for a task region; else the task it was entered in
		isTask  bool
		removed bool // a region the buffer shed, under one it kept
	}
	// pad opens the shed regions between st and depth.
	pad := func(st []open, depth int) []open {
		for len(st) < depth {
			st = append(st, open{removed: true})
		}
		return st
	}
	creator := map[uint64]string{}
	completedOn := map[uint64]string{}
	type part struct {
		loc  string
		task uint64
	}
	regionOf := map[part]int{} // a task's region entered on a location since its last suspension there
	stacks := map[string][]open{}
	current := map[string]uint64{}
	var evs []event
	fail := func(line, format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s", line, fmt.Sprintf(format, args...))
	}
	// The dump lists location after location: the creations first.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		if f := strings.Split(line, "\t"); len(f) >= 6 && f[2] == "TASK_CREATE" {
			id, err := strconv.ParseUint(strings.TrimPrefix(f[5], "task="), 10, 64)
			if _, twice := creator[id]; err != nil || twice || id == 0 {
				fail(line, "task created twice, or a bad id (%v)", err)
			}
			creator[id] = f[0]
		}
	}
	for _, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			fail(line, "want at least 5 fields")
		}
		loc, kind, region := f[0], f[2], f[3]
		depth, err := strconv.Atoi(f[4])
		if err != nil {
			fail(line, "depth: %v", err)
		}
		evs = append(evs, event{loc: loc, kind: kind, region: region, depth: depth})
		st := stacks[loc]
		cur := current[loc]
		switch kind {
		case "ENTER":
			st = pad(st, depth-1)
			o := open{region: region, task: cur}
			// Where a switch may be lost, the running task is not known.
			if strings.HasPrefix(region, "!$omp task @") {
				if cur == 0 && !noBin {
					fail(line, "a task region entered in the implicit task")
				}
				if regionOf[part{loc, cur}]++; regionOf[part{loc, cur}] > 1 && !noBin {
					fail(line, "task %d's region entered again", cur)
				}
				o.isTask = true
			} else if cur != 0 && !noBin {
				// The innermost task region open must be the running task's
				// (or one the buffer shed).
				ok := false
				for n := len(st) - 1; n >= 0; n-- {
					if st[n].isTask || st[n].removed {
						ok = st[n].removed || st[n].task == cur
						break
					}
				}
				if !ok {
					fail(line, "entered while task %d runs, outside its region: %v", cur, st)
				}
			}
			stacks[loc] = append(st, o)
		case "LEAVE":
			if len(st) > 0 {
				st = st[:len(st)-1]
			}
			for len(st) > 0 && st[len(st)-1].removed {
				st = st[:len(st)-1]
			}
			stacks[loc] = st
		case "TASK_CREATE", "TASK_SWITCH", "TASK_COMPLETE", "TASK_SUSPEND":
			if len(f) < 6 || !strings.HasPrefix(f[5], "task=") {
				fail(line, "no task id")
			}
			id, err := strconv.ParseUint(strings.TrimPrefix(f[5], "task="), 10, 64)
			if err != nil {
				fail(line, "task id: %v", err)
			}
			if depth < len(st) {
				fail(line, "at depth %d with %d regions open", depth, len(st))
			}
			st = pad(st, depth)
			stacks[loc] = st
			_, known := creator[id]
			switch kind {
			case "TASK_SWITCH":
				if id != 0 && !known && complete {
					fail(line, "switch to task %d, never created", id)
				}
				current[loc] = id
			case "TASK_COMPLETE":
				if _, twice := completedOn[id]; twice || (cur != id && !noBin) || (!known && complete) {
					fail(line, "task %d completes twice, while another runs (%d) or was never created", id, cur)
				}
				for _, o := range st {
					if o.isTask && o.task == id {
						fail(line, "task %d completes with its region open", id)
					}
				}
				completedOn[id] = loc
			case "TASK_SUSPEND":
				if cur != id {
					fail(line, "task %d suspended while task %d runs", id, cur)
				}
				for _, o := range st {
					if o.isTask && o.task == id {
						fail(line, "task %d suspended with its region open", id)
					}
				}
				regionOf[part{loc, id}] = 0 // entered again where it resumes
			}
		}
	}
	checkTrace(t, evs, nil, nil)
	var c taskCounts
	c.created = len(creator)
	for id, loc := range creator {
		on, done := completedOn[id]
		if !done && complete {
			t.Errorf("task %d created on %s never completes", id, loc)
		}
		if done && on != loc {
			c.elsewhere++
		}
	}
	if complete && len(creator) != want {
		t.Errorf("%d tasks created, want %d", len(creator), want)
	}
	return c
}

// pythonTasks is what export/otf2/convert/testdata/check_tasks.py prints.
type pythonTasks struct {
	Created, Completed, Switches, NBad, Elsewhere int
	BadTasks                                      []string `json:"bad_tasks"`
	Errors                                        []string
}

// exportTasks exports the trace in dir as OTF2, reads it with otf2-print
// -Werror and with python3-otf2 as a task-aware tool would, and returns what
// the latter found; per-task region stacks that do not nest fail the test.
func exportTasks(t *testing.T, dir string) pythonTasks {
	t.Helper()
	tracetest.RequireTool(t, "otf2-print", "otf2-tools")
	archive := filepath.Join(t.TempDir(), "otf2")
	if msg, err := run(root, nil, built.hmbtrace, "export", "-format", "otf2", "-o", archive, dir); err != nil {
		t.Fatalf("hmbtrace export: %v\n%s", err, msg)
	}
	anchor := filepath.Join(archive, "traces.otf2")
	otf2Print(t, "-Werror", anchor)
	const python = "/usr/bin/python3" // python3-otf2 is built for Debian's python only
	if err := exec.Command(python, "-c", "import otf2").Run(); err != nil {
		tracetest.SkipOrFail(t, fmt.Sprintf("%s cannot import otf2 (%v): install the Debian package python3-otf2", python, err))
	}
	out, err := exec.Command(python, filepath.Join(root, "export", "otf2", "convert", "testdata", "check_tasks.py"), anchor).CombinedOutput()
	if err != nil {
		t.Fatalf("python3-otf2: %v\n%s", err, out)
	}
	var res pythonTasks
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Errors) != 0 {
		t.Errorf("python3-otf2: per-task region stacks do not nest: %v", res.Errors)
	}
	return res
}

// TestOpenMPUntiedTasks runs untied tasks that enter a region, create a
// child, yield and wait with the region open. libomp (clang) runs each in
// parts and may resume a part on another thread: the thread that suspends
// one leaves its regions (TASK_SUSPEND) and the one that resumes it enters
// them again, so no thread's stack breaks and no usage error is counted;
// gcc's libgomp runs them as tied tasks. The last round stages the probes
// (HMB_C_PROBE=staged): a suspension is replayed at once there too.
func TestOpenMPUntiedTasks(t *testing.T) {
	build := library(t)
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			if cc == "clang" {
				tracetest.RequireTool(t, "clang", "clang and libomp-dev")
			}
			p := buildOpenMP(t, build, cc, filepath.Join(root, "cshim", "testdata", "openmp", "untied.c"))
			suspended := 0
			for round := 0; round < 3; round++ {
				p.out = filepath.Join(t.TempDir(), "out")
				env := []string{"OMP_NUM_THREADS=3", "OMP_WAIT_POLICY=passive", "KMP_BLOCKTIME=0"}
				if round == 2 {
					env = append(env, "HMB_C_PROBE=staged")
				}
				out, _ := p.run(t, env)
				if !strings.HasPrefix(out, "tasks 80 moved ") {
					t.Fatalf("output %q, want tasks 80", out)
				}
				file := filepath.Join(p.out, "untied.0.hmb")
				checkTasks(t, file, 80)
				sum, err := run(root, nil, built.hmbtrace, "summary", file)
				if err != nil {
					t.Fatalf("hmbtrace summary: %v\n%s", err, sum)
				}
				if !regexp.MustCompile(`(?m)^\s+usage errors\s+none$`).Match(sum) {
					t.Errorf("usage errors (%s):\n%s", strings.TrimSpace(out), sum)
				}
				dump, err := run(root, nil, built.hmbtrace, "dump", file)
				if err != nil {
					t.Fatal(err)
				}
				suspended += strings.Count(string(dump), "\tTASK_SUSPEND\t")
				res := exportTasks(t, p.out)
				if res.Created != 80 || res.Completed != 80 || res.NBad != 0 {
					t.Errorf("python3-otf2: %d tasks created, %d completed, want 80 each once: %v", res.Created, res.Completed, res.BadTasks)
				}
			}
			if cc == "clang" && suspended == 0 {
				t.Errorf("libomp suspended no untied task")
			}
		})
	}
}
