package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

var (
	laneTestTask = measure.NewRegion("lane test task")
	laneTestWork = measure.NewRegion("lane test work")
)

// TestLaneTasks records goroutines that each run one task through
// measure.StartRegion, two at a time in rounds, on a few lanes, and
// exports the trace: every holder of a lane after its first is a task on
// that lane, which OTF2 must show as created, switched to and completed
// there, on the file's lane team, with nothing left out, whatever the
// number of workers.
func TestLaneTasks(t *testing.T) {
	r := newRecorder(t, t.TempDir(), 0, measure.Config{})
	ctx := measure.NewContext(context.Background(), r.m)
	const rounds, perRound = 4, 2
	// The goroutines stay alive until the end, so that the runtime does
	// not give a later goroutine the descriptor of an ended one (which
	// would continue its task rather than start one, lane.go).
	release := make(chan struct{})
	var alive sync.WaitGroup
	for range rounds {
		var inside, done sync.WaitGroup
		inside.Add(perRound)
		done.Add(perRound)
		alive.Add(perRound)
		for range perRound {
			go func() {
				defer alive.Done()
				sp := measure.StartRegion(ctx, laneTestTask)
				measure.StartRegion(ctx, laneTestWork).End()
				// Both goroutines of the round hold a lane at once.
				inside.Done()
				inside.Wait()
				sp.End()
				done.Done()
				<-release
			}()
		}
		done.Wait()
	}
	f := tracetest.Finish(t, r.m)
	close(release)
	alive.Wait()

	// What the trace holds: per location, its task records.
	type rec struct {
		kind encode.Kind
		ts   int64
		task uint64
	}
	tasks := map[int][]rec{}
	lanes, switches := 0, 0
	for k, l := range f.Locations {
		evs := readAll(t, f, l.ID)
		if len(evs) > 0 {
			lanes++
		}
		for _, e := range evs {
			switch e.Kind {
			case encode.KindTaskSwitch, encode.KindTaskComplete:
				if e.Task&laneTaskBit == 0 {
					t.Fatalf("location %d: task %#x without the lane bit", k, e.Task)
				}
				tasks[k] = append(tasks[k], rec{e.Kind, f.Nanos(e.Time), e.Task &^ laneTaskBit})
				if e.Kind == encode.KindTaskSwitch {
					switches++
				}
			}
		}
	}
	// Each goroutine held a lane; the first holder of each lane is its
	// implicit task.
	if lanes == 0 || lanes > rounds*perRound/2 || switches != rounds*perRound-lanes {
		t.Fatalf("%d lanes and %d task switches for %d goroutines: want at most %d lanes and a task per holder after each lane's first",
			lanes, switches, rounds*perRound, rounds*perRound/2)
	}

	// What the archive must show, per location reference (= index here).
	want := map[uint64][]string{}
	wantEvents := uint64(0)
	for k, rs := range tasks {
		evs := readAll(t, f, f.Locations[k].ID)
		last := f.Nanos(evs[len(evs)-1].Time)
		const team = `"Rank 0 lanes"`
		w := []string{fmt.Sprintf("THREAD_TEAM_BEGIN %d %s", rs[0].ts, team)}
		open := uint64(0)
		for _, r := range rs {
			name := fmt.Sprintf("%s %d %d", team, k, r.task)
			if r.kind == encode.KindTaskSwitch {
				w = append(w, fmt.Sprintf("THREAD_TASK_CREATE %d %s", r.ts, name), fmt.Sprintf("THREAD_TASK_SWITCH %d %s", r.ts, name))
				open = r.task
				wantEvents += 2
				continue
			}
			w = append(w, fmt.Sprintf("THREAD_TASK_COMPLETE %d %s", r.ts, name))
			open = 0
			wantEvents++
		}
		if open != 0 {
			// The task that held the lane at Close: completed at the end.
			w = append(w, fmt.Sprintf("THREAD_TASK_COMPLETE %d %s %d %d", last, team, k, open))
			wantEvents++
		}
		want[uint64(k)] = append(w, fmt.Sprintf("THREAD_TEAM_END %d %s", last, team))
	}

	files := []*tracefile.File{f}
	var archives []map[string][]byte
	for _, procs := range []int{1, 4} {
		dir := filepath.Join(t.TempDir(), "archive")
		st, err := ExportProcs(dir, files, otf2.Options{TraceID: 42}, procs)
		if err != nil {
			t.Fatal(err)
		}
		anchor := filepath.Join(dir, "traces.otf2")
		checkArchive(t, anchor, files)
		_, threads := checkArchiveThreads(t, anchor, files)
		if !reflect.DeepEqual(threads, want) {
			t.Errorf("%d workers: thread events\n got %q\nwant %q", procs, threads, want)
		}
		if st.TaskEventsLeftOut != 0 || st.LaneTeams != 1 || st.LaneTaskEvents != wantEvents || st.TaskEvents != 0 {
			t.Errorf("%d workers: stats %+v: want no task event left out, 1 lane team, %d lane task events", procs, st, wantEvents)
		}
		defs := definitions(t, anchor)
		if !strings.Contains(defs, `Name: "Rank 0 lanes"`) || !strings.Contains(defs, "Type: COMM_GROUP, Paradigm: USER") {
			t.Errorf("definitions lack the lane team:\n%s", defs)
		}
		checkTasksPython(t, anchor, switches)
		archives = append(archives, archiveFiles(t, dir))
	}
	if !reflect.DeepEqual(archives[0], archives[1]) {
		t.Error("the archives of 1 and 4 workers differ")
	}
}

// TestLaneTaskNumberTooLarge exports lane task records whose number OTF2's
// 32-bit generation cannot hold: left out and counted, the rest written.
func TestLaneTaskNumberTooLarge(t *testing.T) {
	b := tracetest.NewBuilder("lanes", "node", 0, time.Unix(100, 0), "work")
	l := b.Location("lane 1")
	l.Enter(10, 1)
	l.Leave(20)
	task := func(k encode.Kind, ts, id uint64) {
		l.Put(0, tracefile.ClassParadigm, encode.Record{Kind: k, Time: ts, Task: laneTaskBit | id})
	}
	task(encode.KindTaskSwitch, 30, 1<<32)
	task(encode.KindTaskComplete, 40, 1<<32)
	task(encode.KindTaskSwitch, 50, 7)
	task(encode.KindTaskComplete, 60, 7)
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	anchor, st := export(t, files, otf2.Options{})
	_, threads := checkArchiveThreads(t, anchor, files)
	want := map[uint64][]string{0: {`THREAD_TEAM_BEGIN 50 "Rank 0 lanes"`, `THREAD_TASK_CREATE 50 "Rank 0 lanes" 0 7`,
		`THREAD_TASK_SWITCH 50 "Rank 0 lanes" 0 7`, `THREAD_TASK_COMPLETE 60 "Rank 0 lanes" 0 7`, `THREAD_TEAM_END 60 "Rank 0 lanes"`}}
	if !reflect.DeepEqual(threads, want) {
		t.Errorf("thread events\n got %q\nwant %q", threads, want)
	}
	if st.TaskEventsLeftOut != 2 || st.LaneTaskEvents != 3 {
		t.Errorf("stats %+v: want 2 task events left out, 3 written", st)
	}
}

// checkTasksPython reads the archive's tasks with python3-otf2 as a
// task-aware tool would (testdata/check_tasks.py): each task created,
// switched to and completed once, its regions nested on its own stack.
func checkTasksPython(t *testing.T, anchor string, tasks int) {
	t.Helper()
	out := otf2Python(t, filepath.Join("testdata", "check_tasks.py"), anchor)
	var res struct {
		Created, Completed, Switches, Nbad, Elsewhere int
		Errors                                        []string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Created != tasks || res.Completed != tasks || res.Switches != tasks || res.Nbad != 0 || res.Elsewhere != 0 || len(res.Errors) != 0 {
		t.Errorf("python3-otf2 reads the tasks as %s, want %d created, switched to and completed, on their lane", out, tasks)
	}
}

// TestLaneTeamWithMessages exports lane tasks and messages between
// locations in one file: the communicator of locations and the lane team
// share the user paradigm's one COMM_LOCATIONS group.
func TestLaneTeamWithMessages(t *testing.T) {
	b := tracetest.NewBuilder("lanes", "node", 2, time.Unix(100, 0), "work")
	l1, l2 := b.Location("lane 1"), b.Location("lane 2")
	l1.Enter(10, 1)
	l1.Message(20, encode.KindSend, 2, false, 0, 8)
	l1.Leave(30)
	l2.Enter(10, 1)
	l2.Message(25, encode.KindRecv, 1, false, 0, 8)
	l2.Leave(30)
	l2.Put(0, tracefile.ClassParadigm, encode.Record{Kind: encode.KindTaskSwitch, Time: 40, Task: laneTaskBit | 3})
	l2.Enter(50, 1)
	l2.Leave(60)
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	anchor, st := export(t, files, otf2.Options{})
	checkArchive(t, anchor, files)
	_, threads := checkArchiveThreads(t, anchor, files)
	want := map[uint64][]string{1: {`THREAD_TEAM_BEGIN 40 "Rank 2 lanes"`, `THREAD_TASK_CREATE 40 "Rank 2 lanes" 1 3`,
		`THREAD_TASK_SWITCH 40 "Rank 2 lanes" 1 3`, `THREAD_TASK_COMPLETE 60 "Rank 2 lanes" 1 3`, `THREAD_TEAM_END 60 "Rank 2 lanes"`}}
	if !reflect.DeepEqual(threads, want) {
		t.Errorf("thread events\n got %q\nwant %q", threads, want)
	}
	if st.LaneTasksCompletedAtEnd != 1 || st.LaneTaskEvents != 3 || st.TaskEventsLeftOut != 0 {
		t.Errorf("stats %+v: want 3 lane task events, 1 task completed at the end", st)
	}
	defs := definitions(t, anchor)
	if n := strings.Count(defs, "Type: COMM_LOCATIONS, Paradigm: USER"); n != 1 {
		t.Errorf("%d user COMM_LOCATIONS groups, want 1:\n%s", n, defs)
	}
	for _, c := range []string{`Name: "` + CommName + `"`, `Name: "Rank 2 lanes"`} {
		if !strings.Contains(defs, c) {
			t.Errorf("definitions lack %s:\n%s", c, defs)
		}
	}
}
