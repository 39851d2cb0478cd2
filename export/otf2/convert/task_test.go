package convert

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// shedTaskTrace is the shape of a small buffer's OpenMP task trace that a
// loaded machine gave (cshim's TestOpenMPTasks, 12K buffer): thread 1's
// implicit task lost its enter and leave (dropped for want of a bin while
// the other threads, asleep, held the bins), so no team is known for it,
// but its deeper levels kept the implicit barrier and a task it ran
// there, created by thread 0 in its team; thread 2 kept the completion of
// a task whose switch it lost, in the barrier of its implicit task.
func shedTaskTrace(t *testing.T) *tracefile.File {
	b := tracetest.NewBuilder("shed", "node", 0, time.Unix(100, 0),
		"!$omp parallel main._omp_fn.0 @a.c:10", // 1
		"!$omp implicit task main._omp_fn.0",    // 2
		"!$omp implicit barrier @a.c:10",        // 3
		"!$omp create task @a.c:12",             // 4
		"!$omp task @a.c:12",                    // 5
		"work",                                  // 6
	)
	for i := range b.Trace.Regions[:5] {
		b.Trace.Regions[i].Paradigm = tracefile.ParadigmOpenMP
	}
	par := func(l *tracetest.Location, d int, r encode.Record) { l.Put(d, tracefile.ClassParadigm, r) }
	enter := func(l *tracetest.Location, d int, ts uint64, region uint32) {
		par(l, d, encode.Record{Kind: encode.KindEnter, Time: ts, Region: region})
	}
	leave := func(l *tracetest.Location, d int, ts uint64) {
		par(l, d, encode.Record{Kind: encode.KindLeave, Time: ts})
	}
	task := func(l *tracetest.Location, d int, ts uint64, k encode.Kind, id uint64) {
		par(l, d, encode.Record{Kind: k, Time: ts, Task: id})
	}
	t0, t1, t2 := b.Location("thread 0"), b.Location("thread 1"), b.Location("thread 2")
	enter(t0, 1, 10, 1)
	enter(t0, 2, 11, 2)
	for n, id := range []uint64{1, 2} {
		ts := 12 + 3*uint64(n)
		enter(t0, 3, ts, 4)
		task(t0, 3, ts+1, encode.KindTaskCreate, id)
		leave(t0, 3, ts+2)
	}
	enter(t0, 3, 20, 3)
	leave(t0, 3, 60)
	leave(t0, 2, 61)
	leave(t0, 1, 62)

	// Thread 1: the implicit task shed, the barrier and task 1 kept.
	enter(t1, 2, 21, 3)
	task(t1, 2, 22, encode.KindTaskSwitch, 1)
	enter(t1, 3, 23, 5)
	t1.Put(4, tracefile.ClassRegion, encode.Record{Kind: encode.KindEnter, Time: 24, Region: 6})
	t1.Put(4, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: 25})
	leave(t1, 3, 26)
	task(t1, 2, 27, encode.KindTaskComplete, 1)
	task(t1, 2, 28, encode.KindTaskSwitch, 0)
	leave(t1, 2, 40)

	// Thread 2: in its team; task 2's switch shed, its completion kept.
	enter(t2, 1, 12, 2)
	enter(t2, 2, 21, 3)
	enter(t2, 3, 31, 5)
	leave(t2, 3, 33)
	task(t2, 2, 34, encode.KindTaskComplete, 2)
	task(t2, 2, 35, encode.KindTaskSwitch, 0)
	leave(t2, 2, 55)
	leave(t2, 1, 56)
	return b.Write(t, t.TempDir())
}

// TestShedTaskTraceExports exports shedTaskTrace: every task's region
// stack must nest in OTF2 as Knüpfer et al.'s per-task stacks read it
// (taskStacks, and python3-otf2 where installed), and what cannot be
// written so is left out and counted: thread 1's switch to task 1, its
// completion and the switch back, as the implicit task they would return
// to has no name, and thread 2's completion of a task it never switched
// to.
func TestShedTaskTraceExports(t *testing.T) {
	files := []*tracefile.File{shedTaskTrace(t)}
	for _, procs := range []int{1, 3} {
		dir := filepath.Join(t.TempDir(), "archive")
		st, err := ExportProcs(dir, files, otf2.Options{}, procs)
		if err != nil {
			t.Fatal(err)
		}
		anchor := filepath.Join(dir, "traces.otf2")
		checkArchiveNoPython(t, anchor, files)
		evs, err := otf2print.Events(anchor)
		if err != nil {
			t.Fatal(err)
		}
		if errs := taskStacks(evs); len(errs) != 0 {
			t.Errorf("procs %d: per-task region stacks do not nest: %q", procs, errs)
		}
		if st.TaskEvents != 3 || st.TaskEventsLeftOut != 4 {
			t.Errorf("procs %d: %d task events written, %d left out; want 3 (the creations, thread 2's switch back) and 4",
				procs, st.TaskEvents, st.TaskEventsLeftOut)
		}
		if errs := pythonTaskErrors(t, anchor); len(errs) != 0 {
			t.Errorf("procs %d: python3-otf2: per-task region stacks do not nest: %q", procs, errs)
		}
	}
}

// taskStacks reads an archive's events as a task-aware OTF2 tool does:
// each task (thread team, creating thread, generation; the implicit task
// of a team's member by generation 0) has its own region stack, a
// location's enters and leaves go to the stack of the task it runs, and
// a task completes where it runs with its stack empty. It returns what
// breaks that.
func taskStacks(evs []otf2print.Event) []string {
	var errs []string
	type key struct{ team, creator, gen string }
	stacks := map[key][]string{}
	cur := map[uint64]key{}
	outer := map[uint64][]key{}
	initial := func(loc uint64) key { return key{gen: fmt.Sprint("initial ", loc)} }
	implicit := func(loc uint64, team string) key { return key{team: team, gen: fmt.Sprint("implicit ", loc)} }
	for _, e := range evs {
		if _, ok := cur[e.Location]; !ok {
			cur[e.Location] = initial(e.Location)
		}
		team, _ := e.Field("Thread Team")
		switch e.Name {
		case "THREAD_TEAM_BEGIN":
			outer[e.Location] = append(outer[e.Location], cur[e.Location])
			cur[e.Location] = implicit(e.Location, team)
		case "THREAD_TEAM_END":
			k := implicit(e.Location, team)
			if len(stacks[k]) != 0 {
				errs = append(errs, fmt.Sprintf("location %d: implicit task ends with %q open", e.Location, stacks[k]))
			}
			o := outer[e.Location]
			cur[e.Location] = initial(e.Location)
			if len(o) > 0 {
				cur[e.Location], outer[e.Location] = o[len(o)-1], o[:len(o)-1]
			}
		case "THREAD_TASK_SWITCH", "THREAD_TASK_COMPLETE":
			creator, _ := e.Field("Creating Thread")
			gen, _ := e.Field("Generation Number")
			k := key{team, creator, gen}
			if gen == "0" {
				k = implicit(e.Location, team)
			}
			if e.Name == "THREAD_TASK_SWITCH" {
				cur[e.Location] = k
				break
			}
			if cur[e.Location] != k || len(stacks[k]) != 0 {
				errs = append(errs, fmt.Sprintf("location %d at %d: task %v completes while %v runs, or with %q open",
					e.Location, e.Time, k, cur[e.Location], stacks[k]))
			}
		case "ENTER", "LEAVE":
			name, _, err := e.Region()
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			k := cur[e.Location]
			if e.Name == "ENTER" {
				stacks[k] = append(stacks[k], name)
				break
			}
			if st := stacks[k]; len(st) == 0 || st[len(st)-1] != name {
				errs = append(errs, fmt.Sprintf("location %d at %d: leave %q in task %v whose stack is %q", e.Location, e.Time, name, k, st))
			} else {
				stacks[k] = st[:len(st)-1]
			}
		}
	}
	return errs
}

// pythonTaskErrors reads an archive with testdata/check_tasks.py and
// returns the per-task stack errors it found; it skips (or fails, where
// the tools are required) when python3-otf2 is missing.
func pythonTaskErrors(t *testing.T, anchor string) []string {
	t.Helper()
	out := otf2Python(t, filepath.Join("testdata", "check_tasks.py"), anchor)
	var res struct{ Errors []string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res.Errors
}
