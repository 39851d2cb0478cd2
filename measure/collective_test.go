package measure

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/buffer"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func TestCollectiveRoundTrip(t *testing.T) {
	m := startTest(t, Config{})
	solve, allreduce, bcast := m.Region("solve"), m.Region("MPI_Allreduce"), m.Region("MPI_Bcast")
	loc := m.Location("rank 0")
	loc.Enter(solve)
	loc.EnterCollective(allreduce, -1, 8)
	loc.Leave(allreduce)
	loc.EnterCollective(bcast, 0, 4096)
	loc.Leave(bcast)
	loc.Leave(solve)
	m.Close()
	f := openTrace(t, m)
	var got []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		s := fmt.Sprintf("%v %s %d %v", e.Kind, f.RegionName(e.Region), e.Depth, e.Class)
		if e.Kind == encode.KindCollective {
			s += fmt.Sprintf(" root=%d bytes=%d", e.Root, e.Bytes)
		}
		got = append(got, s)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	want := []string{
		"ENTER solve 1 enter/leave",
		"ENTER MPI_Allreduce 2 collective", "COLLECTIVE MPI_Allreduce 2 collective root=-1 bytes=8", "LEAVE MPI_Allreduce 2 collective",
		"ENTER MPI_Bcast 2 collective", "COLLECTIVE MPI_Bcast 2 collective root=0 bytes=4096", "LEAVE MPI_Bcast 2 collective",
		"LEAVE solve 1 enter/leave",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkCounts(t, f.Location(0))
}

// With the class policy, collectives and messages go before enter/leave.
func TestClassPolicyShedsCollectivesAndMessagesFirst(t *testing.T) {
	m := startTest(t, Config{Reduction: ReduceClass, ClassOrder: []buffer.Class{buffer.ClassCollective, buffer.ClassMessage}, BufferSize: 64 * 512, BinSize: 512})
	iter, allreduce, work := m.Region("iteration"), m.Region("MPI_Allreduce"), m.Region("work")
	a, b := m.Location("a"), m.Location("b")
	for i := 0; i < 5000; i++ {
		for _, l := range []*Location{a, b} {
			l.Enter(iter)
			l.Enter(work)
			l.Leave(work)
			l.Send(a, 1, 8)
			l.EnterCollective(allreduce, -1, 8)
			l.Leave(allreduce)
			l.Leave(iter)
		}
	}
	m.Close()
	f := openTrace(t, m)
	var order []string
	for _, r := range f.Reductions {
		order = append(order, r.Reason.String()+" "+r.Class.String())
	}
	if len(order) < 2 || order[0] != "class collective" || order[1] != "class message" {
		t.Fatalf("reductions %v: want collectives, then messages, closed first", order)
	}
	for i := range f.Locations {
		l := &f.Locations[i]
		checkCounts(t, l)
		evs, _ := readBack(t, f, l.ID)
		if uint64(len(evs)) != l.Kept() {
			t.Errorf("%s: read %d, kept %d", l.Name, len(evs), l.Kept())
		}
		for _, e := range evs {
			if e.kind == encode.KindCollective || e.kind == encode.KindSend {
				t.Fatalf("%s: %v survived the closing of its class", l.Name, e)
			}
		}
	}
}
