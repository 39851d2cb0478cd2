package measure

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Task records sit at the depth of the region they occur in, in the
// paradigm class, and read back in order between the enters and leaves
// around them, from Go probes and replayed ones (recordAt) alike.
func TestTaskRecords(t *testing.T) {
	m := startTest(t, Config{NoThrottle: true})
	create := m.RegionParadigm("!$omp create task @t.c:3", tracefile.ParadigmOpenMP)
	task := m.RegionParadigm("!$omp task @t.c:3", tracefile.ParadigmOpenMP)
	wait := m.RegionParadigm("!$omp taskwait @t.c:5", tracefile.ParadigmOpenMP)
	work := m.Region("work")
	a, b := m.Location("thread 0"), m.Location("thread 1")
	a.Enter(create)
	a.taskRecord(encode.KindTaskCreate, 7, 0, true)
	a.Leave(create)
	a.Enter(wait)
	b.taskSwitch(7, 0, true)
	b.Enter(task)
	b.Enter(work)
	b.Leave(work)
	b.Leave(task)
	b.recordAt(encode.Record{Kind: encode.KindTaskComplete, Task: 7}, m.Now())
	b.taskSwitch(0, 0, true)
	a.Leave(wait)
	m.Close()
	f := openTrace(t, m)
	type ev struct {
		kind   encode.Kind
		region string
		depth  int
		task   uint64
	}
	got := map[string][]ev{}
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			got[l.Name] = append(got[l.Name], ev{e.Kind, f.RegionName(e.Region), e.Depth, e.Task})
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]ev{
		"thread 0": {
			{encode.KindEnter, "!$omp create task @t.c:3", 1, 0},
			{encode.KindTaskCreate, "!$omp create task @t.c:3", 1, 7},
			{encode.KindLeave, "!$omp create task @t.c:3", 1, 0},
			{encode.KindEnter, "!$omp taskwait @t.c:5", 1, 0},
			{encode.KindLeave, "!$omp taskwait @t.c:5", 1, 0},
		},
		"thread 1": {
			{encode.KindTaskSwitch, "region#0", 0, 7},
			{encode.KindEnter, "!$omp task @t.c:3", 1, 0},
			{encode.KindEnter, "work", 2, 0},
			{encode.KindLeave, "work", 2, 0},
			{encode.KindLeave, "!$omp task @t.c:3", 1, 0},
			{encode.KindTaskComplete, "region#0", 0, 7},
			{encode.KindTaskSwitch, "region#0", 0, 0},
		},
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Fatalf("%s: %d events %+v, want %+v", name, len(g), g, w)
		}
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("%s event %d: %+v, want %+v", name, i, g[i], w[i])
			}
		}
	}
}

// A location's OpenMP place goes into its definition; the last one given
// is kept, and a location without one has none.
func TestTeamPlace(t *testing.T) {
	m := startTest(t, Config{})
	a, b := m.Location("thread 1:2"), m.Location("other")
	a.setTeam([]int{0})
	a.setTeam([]int{1, 2})
	r := m.Region("r")
	a.Enter(r)
	a.Leave(r)
	b.Enter(r)
	b.Leave(r)
	m.Close()
	f := openTrace(t, m)
	for _, l := range f.Locations {
		want := map[string]string{"thread 1:2": "[1 2]", "other": "[]"}[l.Name]
		if got := fmt.Sprint(l.Team); got != want {
			t.Errorf("%s: team %s, want %s", l.Name, got, want)
		}
	}
}

// A task suspended with regions open leaves them on the location it stops
// on, and the location that resumes it enters them again after its switch:
// both streams stay well nested.
func TestTaskSuspend(t *testing.T) {
	m := startTest(t, Config{NoThrottle: true})
	task := m.RegionParadigm("!$omp task @t.c:3", tracefile.ParadigmOpenMP)
	barrier := m.RegionParadigm("!$omp barrier @t.c:9", tracefile.ParadigmOpenMP)
	work := m.Region("work")
	a, b := m.Location("thread 0"), m.Location("thread 1")
	a.Enter(barrier)
	a.taskSwitch(7, 0, true)
	a.Enter(task)
	a.Enter(work)
	a.taskSuspend(7, 0, true)
	a.taskSwitch(0, 0, true)
	a.Leave(barrier)
	b.Enter(barrier)
	b.recordAt(encode.Record{Kind: encode.KindTaskSwitch, Task: 7}, m.Now())
	b.Leave(work)
	b.Leave(task)
	b.taskComplete(7, 0, true)
	b.taskSwitch(0, 0, true)
	b.taskSuspend(8, 0, true) // not running here: nothing to leave
	b.Leave(barrier)
	m.Close()
	f := openTrace(t, m)
	got := map[string][]string{}
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			s := fmt.Sprintf("%v %d", e.Kind, e.Depth)
			if e.Kind == encode.KindEnter || e.Kind == encode.KindLeave {
				s += " " + f.RegionName(e.Region)
			} else {
				s += fmt.Sprintf(" task=%d", e.Task)
			}
			got[l.Name] = append(got[l.Name], s)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if l.Usage.Total() != 0 {
			t.Errorf("%s: usage errors %+v", l.Name, l.Usage)
		}
	}
	want := map[string][]string{
		"thread 0": {"ENTER 1 !$omp barrier @t.c:9", "TASK_SWITCH 1 task=7", "ENTER 2 !$omp task @t.c:3", "ENTER 3 work",
			"LEAVE 3 work", "LEAVE 2 !$omp task @t.c:3", "TASK_SUSPEND 1 task=7", "TASK_SWITCH 1 task=0", "LEAVE 1 !$omp barrier @t.c:9"},
		"thread 1": {"ENTER 1 !$omp barrier @t.c:9", "TASK_SWITCH 1 task=7", "ENTER 2 !$omp task @t.c:3", "ENTER 3 work",
			"LEAVE 3 work", "LEAVE 2 !$omp task @t.c:3", "TASK_COMPLETE 1 task=7", "TASK_SWITCH 1 task=0",
			"TASK_SUSPEND 1 task=8", "LEAVE 1 !$omp barrier @t.c:9"},
	}
	for name, w := range want {
		if fmt.Sprint(got[name]) != fmt.Sprint(w) {
			t.Errorf("%s:\n got %q\nwant %q", name, got[name], w)
		}
	}
}

// A tied task's records (TiedTaskAt: the C direct path's replay) are the
// same records at the same depths, and leave no bookkeeping behind: a
// suspension finds nothing to leave, and a kind that is not a tied task's
// is a usage error.
func TestTiedTask(t *testing.T) {
	m := startTest(t, Config{NoThrottle: true})
	task := m.RegionParadigm("!$omp task @t.c:3", tracefile.ParadigmOpenMP)
	barrier := m.RegionParadigm("!$omp barrier @t.c:9", tracefile.ParadigmOpenMP)
	a := m.Location("thread 0")
	a.Enter(barrier)
	a.tiedTaskAt(encode.KindTaskCreate, 5, m.Now())
	a.tiedTaskAt(encode.KindTaskSwitch, 5, m.Now())
	a.Enter(task)
	if len(a.taskBase) != 0 {
		t.Errorf("a tied task's switch kept its base: %v", a.taskBase)
	}
	a.Leave(task)
	a.tiedTaskAt(encode.KindTaskComplete, 5, m.Now())
	a.tiedTaskAt(encode.KindTaskSwitch, 0, m.Now())
	a.tiedTaskAt(encode.KindTaskSuspend, 5, m.Now())
	a.Leave(barrier)
	m.Close()
	f := openTrace(t, m)
	var got []string
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		s := fmt.Sprintf("%v %d", e.Kind, e.Depth)
		if e.Kind == encode.KindEnter || e.Kind == encode.KindLeave {
			s += " " + f.RegionName(e.Region)
		} else {
			s += fmt.Sprintf(" task=%d", e.Task)
		}
		got = append(got, s)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"ENTER 1 !$omp barrier @t.c:9", "TASK_CREATE 1 task=5", "TASK_SWITCH 1 task=5", "ENTER 2 !$omp task @t.c:3",
		"LEAVE 2 !$omp task @t.c:3", "TASK_COMPLETE 1 task=5", "TASK_SWITCH 1 task=0", "LEAVE 1 !$omp barrier @t.c:9"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
	if u := f.Locations[0].Usage; u.UnknownRegion != 1 || u.Total() != 1 {
		t.Errorf("usage errors %+v, want the suspension of a tied task's record as the one unknown", u)
	}
}
