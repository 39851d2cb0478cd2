package measure

import (
	"fmt"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Task records sit at the depth of the region they occur in, in the
// paradigm class, and read back in order between the enters and leaves
// around them, from Go probes and replayed ones (RecordAt) alike.
func TestTaskRecords(t *testing.T) {
	m := startTest(t, Config{NoThrottle: true})
	create := m.RegionParadigm("!$omp create task @t.c:3", tracefile.ParadigmOpenMP)
	task := m.RegionParadigm("!$omp task @t.c:3", tracefile.ParadigmOpenMP)
	wait := m.RegionParadigm("!$omp taskwait @t.c:5", tracefile.ParadigmOpenMP)
	work := m.Region("work")
	a, b := m.Location("thread 0"), m.Location("thread 1")
	a.Enter(create)
	a.TaskCreate(7)
	a.Leave(create)
	a.Enter(wait)
	b.TaskSwitch(7)
	b.Enter(task)
	b.Enter(work)
	b.Leave(work)
	b.Leave(task)
	b.RecordAt(encode.Record{Kind: encode.KindTaskComplete, Task: 7}, m.Now())
	b.TaskSwitch(0)
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
	a.SetTeam([]int{0})
	a.SetTeam([]int{1, 2})
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
