package waitstate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// regions of the synthetic runs, ids 1, 2, ... in this order.
var regions = []string{"MPI_Send", "MPI_Recv", "MPI_Ssend", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
	"MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Iallreduce", "MPI_Wait", "work", "work2",
	"!$omp implicit task", "!$omp implicit barrier", "!$omp barrier @x.c:5"}

func id(name string) uint32 {
	for i, r := range regions {
		if r == name {
			return uint32(i + 1)
		}
	}
	panic("no region " + name)
}

// rank is one rank of a synthetic run: one location, world communicator 1.
type rank struct {
	b *tracetest.Builder
	l *tracetest.Location
}

func newRank(r, n int) *rank {
	b := tracetest.NewBuilder("ws", "node", r, time.Unix(1700000000, 0), regions...)
	var world []int32
	for i := range n {
		world = append(world, int32(i))
	}
	b.Comm("MPI_COMM_WORLD", 0, world, nil)
	return &rank{b: b, l: b.Location("main")}
}

// call records a call of region name from enter to leave; inside runs
// at its enter, after the enter record.
func (k *rank) call(name string, enter, leave uint64, inside func()) {
	k.l.Enter(enter, id(name))
	if inside != nil {
		inside()
	}
	k.l.Leave(leave)
}

func (k *rank) send(name string, enter, leave uint64, to int32, tag uint32) {
	k.call(name, enter, leave, func() { k.l.MessageComm(enter, encode.KindSend, to, tag, 8, 1) })
}

func (k *rank) recv(enter, leave uint64, from int32, tag uint32) {
	k.call("MPI_Recv", enter, leave, func() { k.l.MessageComm(leave, encode.KindRecv, from, tag, 8, 1) })
}

func (k *rank) coll(name string, enter, leave uint64, root int64, sent, received uint64) {
	k.call(name, enter, leave, func() { k.l.Collective(enter, root, sent, received, 1) })
}

func write(t *testing.T, ranks ...*rank) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	var files []*tracefile.File
	for _, k := range ranks {
		files = append(files, k.b.Write(t, dir))
	}
	return files
}

// p2pRun is three ranks whose waits are known by construction: the
// comments give each pattern's instances.
func p2pRun(t *testing.T) []*tracefile.File {
	r0, r1, r2 := newRank(0, 3), newRank(1, 3), newRank(2, 3)

	// Late Sender: rank 1 receives twice from rank 0, waiting 100-50 and,
	// after rank 0 computed in work from 110 to 300, 300-130.
	r0.send("MPI_Send", 100, 110, 1, 0)
	r0.call("work", 110, 300, nil)
	r0.send("MPI_Send", 300, 310, 1, 0)
	r1.recv(50, 120, 0, 0)
	r1.recv(130, 320, 0, 0)

	// Wrong order: rank 2 sends tag 1 at 400, tag 2 at 600; rank 1
	// receives tag 2 first, waiting 600-350, then tag 1.
	r2.send("MPI_Send", 400, 405, 1, 1)
	r2.call("work2", 405, 600, nil)
	r2.send("MPI_Send", 600, 605, 1, 2)
	r1.recv(350, 610, 2, 2)
	r1.recv(620, 625, 2, 1)

	// Late Receiver: rank 0's Ssend from 700 returns at 900; rank 2,
	// computing in work from 610 to 840, posts the receive at 850.
	r0.send("MPI_Ssend", 700, 900, 2, 3)
	r2.call("work", 610, 840, nil)
	r2.recv(850, 905, 0, 3)

	// Late Sender in a Waitall: rank 2 waits from 1010 for the Isends of
	// rank 0 (at 1100) and rank 1 (at 1200): the larger, 190, counts.
	r2.call("MPI_Irecv", 1000, 1002, func() { r2.l.Request(1000, encode.KindIrecvRequest, 1) })
	r2.call("MPI_Irecv", 1003, 1005, func() { r2.l.Request(1003, encode.KindIrecvRequest, 2) })
	r2.call("MPI_Waitall", 1010, 1300, func() {
		r2.l.Irecv(1300, 0, 5, 8, 1, 1)
		r2.l.Irecv(1300, 1, 6, 8, 1, 2)
	})
	r0.call("MPI_Isend", 1100, 1105, func() { r0.l.Isend(1100, 2, 5, 8, 1, 7) })
	r1.call("MPI_Isend", 1200, 1205, func() { r1.l.Isend(1200, 2, 6, 8, 1, 7) })
	return write(t, r0, r1, r2)
}

func TestPointToPoint(t *testing.T) {
	files := p2pRun(t)
	r, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Pattern]int64{LateSender: 50 + 170 + 250 + 190, LateSenderWrongOrder: 250, LateReceiver: 150}
	for p := Pattern(0); p < NumPatterns; p++ {
		if r.Totals[p] != want[p] {
			t.Errorf("%v: %d ns, want %d", p, r.Totals[p], want[p])
		}
	}
	for _, c := range []struct {
		p      Pattern
		region string
		loc    int
		ns     int64
	}{
		{LateSender, "MPI_Recv", 1, 470},
		{LateSender, "MPI_Waitall", 2, 190},
		{LateSenderWrongOrder, "MPI_Recv", 1, 250},
		{LateReceiver, "MPI_Ssend", 0, 150},
		{LateSender, "MPI_Recv", 0, 0},
	} {
		if got := r.Time(c.p, c.region, c.loc); got != c.ns {
			t.Errorf("Time(%v, %s, %d) = %d, want %d", c.p, c.region, c.loc, got, c.ns)
		}
	}
	if r.Counts[LateSender] != 4 {
		t.Errorf("%d Late Sender instances, want 4 (the Waitall's two waits count once)", r.Counts[LateSender])
	}
	// The worst: the wrong-order wait, then its Late Sender, each charged
	// to what rank 2 did from 350 to 600: mostly work2 (195 ns from 405).
	w := r.Worst[0]
	if w.Time != 250 || w.Loc != 1 || w.Peer != 2 || w.Delay == nil || w.Delay.Region != "work2" || w.Delay.Time != 195 || w.Delay.Loc != 2 {
		t.Errorf("worst wait %+v (delay %+v), want 250 ns on rank 1 delayed by rank 2's work2, 195 ns", w, w.Delay)
	}
	// The second Late Sender of rank 1: rank 0 computed in work from its
	// send's leave at 110 to its next send at 300.
	var second *Instance
	for i, w := range r.Worst {
		if w.Pattern == LateSender && w.Loc == 1 && w.Peer == 0 && w.Time == 170 {
			second = &r.Worst[i]
		}
	}
	if d := second; d == nil || d.Delay == nil || d.Delay.Since != 110 || d.Delay.Work == nil || *d.Delay.Work != 190 || d.Delay.WorkRegion != "work" {
		t.Errorf("the 170 ns Late Sender: %+v, want its delay since 110: 190 ns of work", d)
	}
	// The second Late Sender of rank 1 is charged to rank 0's work; the
	// Late Receiver (700 to 850) to rank 2's work until 840.
	for _, c := range []struct {
		p      Pattern
		region string
		loc    int
		ns     int64
	}{{LateSender, "work", 0, 170}, {LateSender, "MPI_Send", 2, 5}, {LateReceiver, "work", 2, 140}} {
		var got int64
		for _, v := range r.Delays {
			if v.Pattern == c.p && v.Region == c.region && v.Loc == c.loc {
				got = v.Time
			}
		}
		if got != c.ns {
			t.Errorf("delay cost of %v in %s on %d: %d, want %d (delays %+v)", c.p, c.region, c.loc, got, c.ns, r.Delays)
		}
	}
	if r.UnmatchedRecvs+r.UnmatchedSends+r.Unresolved+r.ClockViolations != 0 {
		t.Errorf("unmatched %d/%d, unresolved %d, clock %d: want none", r.UnmatchedRecvs, r.UnmatchedSends, r.Unresolved, r.ClockViolations)
	}
}

// collRun is three ranks in collectives whose waits are known.
func collRun(t *testing.T) []*tracefile.File {
	r := []*rank{newRank(0, 3), newRank(1, 3), newRank(2, 3)}
	// Allreduce entered at 2000, 2100, 2300 (after work): N x N 300 + 200.
	r[2].call("work", 1500, 2300, nil)
	for i, at := range []uint64{2000, 2100, 2300} {
		r[i].coll("MPI_Allreduce", at, 2310, -1, 8, 8)
	}
	// Barrier entered at 3000, 3050, 3010: 50 + 40.
	for i, at := range []uint64{3000, 3050, 3010} {
		r[i].coll("MPI_Barrier", at, 3060, -1, 0, 0)
	}
	// Bcast from root 1, which enters last at 4100: 100 + 50.
	for i, at := range []uint64{4000, 4100, 4050} {
		var recvd uint64 = 8
		if i == 1 {
			recvd = 0
		}
		r[i].coll("MPI_Bcast", at, 4110, 1, 8, recvd)
	}
	// Reduce to root 0 at 5000, the first other at 5100: 100.
	for i, at := range []uint64{5000, 5200, 5100} {
		var recvd uint64
		if i == 0 {
			recvd = 8
		}
		r[i].coll("MPI_Reduce", at, 5210, 0, 8, recvd)
	}
	// Iallreduce started at 6000, 6000, 6400; rank 0 waits in MPI_Wait
	// from 6100: 300; rank 1 waits only from 6500.
	for i, at := range []uint64{6000, 6000, 6400} {
		k := r[i]
		k.call("MPI_Iallreduce", at, at+5, func() { k.l.Request(at, encode.KindCollRequest, 9) })
		wait := []uint64{6100, 6500, 6410}[i]
		k.call("MPI_Wait", wait, max(wait+5, 6420), func() { k.l.CollComplete(max(wait+5, 6420), id("MPI_Iallreduce"), -1, 8, 8, 1, 9) })
	}
	return write(t, r...)
}

func TestCollectives(t *testing.T) {
	files := collRun(t)
	r, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Pattern]int64{WaitNxN: 300 + 200 + 300, WaitBarrier: 90, LateBroadcast: 150, EarlyReduce: 100}
	for p := Pattern(0); p < NumPatterns; p++ {
		if r.Totals[p] != want[p] {
			t.Errorf("%v: %d ns, want %d", p, r.Totals[p], want[p])
		}
	}
	if got := r.Time(WaitNxN, "MPI_Wait", 0); got != 300 {
		t.Errorf("N x N in rank 0's MPI_Wait: %d, want 300", got)
	}
	if got := r.ByLocation(WaitNxN); !reflect.DeepEqual(got, []int64{600, 200, 0}) {
		t.Errorf("N x N by location %v, want [600 200 0]", got)
	}
	// The Allreduce's waits are charged to rank 2's work.
	var cost int64
	for _, v := range r.Delays {
		if v.Pattern == WaitNxN && v.Region == "work" && v.Loc == 2 {
			cost = v.Time
		}
	}
	if cost != 500 {
		t.Errorf("N x N delay cost of rank 2's work %d, want 500: %+v", cost, r.Delays)
	}
	if r.UnmatchedCollectives != 0 {
		t.Errorf("%d collectives not replayed", r.UnmatchedCollectives)
	}
}

func TestMissingMember(t *testing.T) {
	r := []*rank{newRank(0, 3), newRank(1, 3), newRank(2, 3)}
	for i, at := range []uint64{100, 200, 300} {
		r[i].coll("MPI_Allreduce", at, 310, -1, 8, 8)
	}
	r[0].coll("MPI_Allreduce", 400, 500, -1, 8, 8) // the others' were shed
	res, err := Analyze(write(t, r...), Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals[WaitNxN] != 300 || res.UnmatchedCollectives != 1 {
		t.Errorf("N x N %d, not replayed %d: want 300 and 1", res.Totals[WaitNxN], res.UnmatchedCollectives)
	}
}

func TestOpenMPBarriers(t *testing.T) {
	b := tracetest.NewBuilder("omp", "node", 0, time.Unix(1700000000, 0), regions...)
	var ls []*tracetest.Location
	for i := range 3 {
		ls = append(ls, b.Location("thread"))
		b.Trace.Locations[i].Team = []int{i}
	}
	// Two parallel regions: the implicit barrier entered at 100, 300, 150
	// (waits 200 + 150); an explicit barrier at 1000, 1010, 1100 (100 + 90).
	for i, l := range ls {
		l.Enter(10, id("!$omp implicit task"))
		l.Enter(20, id("work"))
		l.Leave([]uint64{100, 300, 150}[i])
		l.Enter([]uint64{100, 300, 150}[i], id("!$omp implicit barrier"))
		l.Leave(310)
		l.Leave(320)
		l.Enter(900, id("!$omp implicit task"))
		l.Enter([]uint64{1000, 1010, 1100}[i], id("!$omp barrier @x.c:5"))
		l.Leave(1105)
		l.Leave(1110)
	}
	res, err := Analyze([]*tracefile.File{b.Write(t, t.TempDir())}, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals[OMPImplicitBarrier] != 350 || res.Totals[OMPBarrier] != 190 {
		t.Errorf("implicit %d, explicit %d: want 350 and 190", res.Totals[OMPImplicitBarrier], res.Totals[OMPBarrier])
	}
	if w := res.Worst[0]; w.Pattern != OMPImplicitBarrier || w.Loc != 0 || w.Peer != 1 || w.Delay == nil || w.Delay.Region != "work" || w.Delay.Time != 200 {
		t.Errorf("worst %+v delay %+v: want thread 0's 200 ns, delayed by thread 1's work all along", w, w.Delay)
	}
	// The delay costs: the implicit barrier's waits go to thread 1's
	// work (280 ns against 80 and 130 since the threads' start), the
	// explicit barrier's to thread 2's time in its implicit task since
	// the implicit barrier (210 ns against 110 and 120).
	want := map[DelayCost]bool{
		{Pattern: OMPImplicitBarrier, Region: "work", Loc: 1, Time: 350}:        true,
		{Pattern: OMPBarrier, Region: "!$omp implicit task", Loc: 2, Time: 190}: true,
	}
	for _, c := range res.DelayCosts {
		c.Path = 0
		if !want[c] {
			t.Errorf("delay cost %+v not expected", c)
		}
		delete(want, c)
	}
	for c := range want {
		t.Errorf("no delay cost %+v", c)
	}
	// The critical path: back from thread 0's end (1110) to the explicit
	// barrier's release by thread 2 (1100), to the implicit barrier's by
	// thread 1 (300), whose work holds 280 ns of it.
	cp := res.CriticalPath
	if cp.Last != 0 || cp.Hops != 2 || cp.Length != 1100 {
		t.Errorf("critical path: last %d, %d hops, %d ns; want 0, 2, 1100", cp.Last, cp.Hops, cp.Length)
	}
	var work int64
	for _, v := range cp.Values {
		if v.Region == "work" {
			if v.Loc != 1 {
				t.Errorf("thread %d's work on the path", v.Loc)
			}
			work += v.Time
		}
	}
	if work != 280 {
		t.Errorf("%d ns of work on the path, want thread 1's 280", work)
	}
}

// The result is the same for any number of workers.
func TestProcs(t *testing.T) {
	dir := t.TempDir()
	paths := tracetest.SyntheticRun(t, dir, "syn", 6, 5)
	var files []*tracefile.File
	for _, p := range paths {
		files = append(files, tracetest.Open(t, p))
	}
	files = append(files, p2pRun(t)...) // other runs' files too: not one run, but replayable
	one, err := Analyze(files[:6], Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if one.Totals[LateSender]+one.Totals[WaitNxN] == 0 {
		t.Fatalf("the synthetic run shows no waits: %+v", one.Totals)
	}
	for _, procs := range []int{2, 4, 7} {
		r, err := Analyze(files[:6], Options{Procs: procs})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, r) {
			t.Errorf("-procs %d gives another result than 1", procs)
		}
		var a, b bytes.Buffer
		if err := WriteText(&a, one, 10); err != nil {
			t.Fatal(err)
		}
		WriteText(&b, r, 10)
		if a.String() != b.String() {
			t.Errorf("-procs %d prints otherwise:\n%s\nvs\n%s", procs, b.String(), a.String())
		}
	}
}

func TestRender(t *testing.T) {
	r, err := Analyze(p2pRun(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Late Sender, wrong order", "Late Receiver", "work2", "rank 2"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Patterns []struct {
			Metric string `json:"metric"`
			TimeNs int64  `json:"time_ns"`
		} `json:"patterns"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Patterns) != int(NumPatterns) || back.Patterns[LateSender].Metric != "mpi_latesender" || back.Patterns[LateSender].TimeNs != 660 {
		t.Errorf("JSON patterns %+v", back.Patterns)
	}
}

// The waits are kept per call path: the same MPI call from two callers is
// two cells.
func TestCallPaths(t *testing.T) {
	r0, r1 := newRank(0, 2), newRank(1, 2)
	r0.send("MPI_Send", 100, 110, 1, 0)
	r0.send("MPI_Send", 300, 310, 1, 0)
	r1.l.Enter(10, id("work"))
	r1.recv(50, 120, 0, 0) // waits 50 in work > MPI_Recv
	r1.l.Leave(125)
	r1.l.Enter(130, id("work2"))
	r1.recv(200, 320, 0, 0) // waits 100 in work2 > MPI_Recv
	r1.l.Leave(330)
	res, err := Analyze(write(t, r0, r1), Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, v := range res.Pattern(LateSender) {
		got[res.PathName(v.Path)] += v.Time
		if res.PathTime(LateSender, v.Path, v.Loc) != v.Time {
			t.Errorf("PathTime(%d, %d) = %d, want %d", v.Path, v.Loc, res.PathTime(LateSender, v.Path, v.Loc), v.Time)
		}
	}
	want := map[string]int64{"work > MPI_Recv": 50, "work2 > MPI_Recv": 100}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Late Sender by call path %v, want %v", got, want)
	}
	if res.Time(LateSender, "MPI_Recv", 1) != 150 {
		t.Errorf("Late Sender in MPI_Recv on rank 1: %d, want 150 over both paths", res.Time(LateSender, "MPI_Recv", 1))
	}
}

// A receive that ends before its send began (clocks out of step) waits at
// most its own duration, and is counted.
func TestClockViolation(t *testing.T) {
	r0, r1 := newRank(0, 2), newRank(1, 2)
	r0.send("MPI_Send", 500, 510, 1, 0)
	r1.recv(100, 300, 0, 0)
	res, err := Analyze(write(t, r0, r1), Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals[LateSender] != 200 || res.ClockViolations != 1 {
		t.Errorf("Late Sender %d, clock violations %d: want 200 (the receive's duration) and 1", res.Totals[LateSender], res.ClockViolations)
	}
}

// A receive with no send in the files is counted, not replayed.
func TestUnmatched(t *testing.T) {
	r0, r1 := newRank(0, 2), newRank(1, 2)
	r0.send("MPI_Send", 100, 110, 1, 7) // received with another tag: both unmatched
	r1.recv(50, 120, 0, 8)
	res, err := Analyze(write(t, r0, r1), Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.UnmatchedRecvs != 1 || res.UnmatchedSends != 1 || res.Totals[LateSender] != 0 {
		t.Errorf("unmatched receives %d, sends %d, Late Sender %d: want 1, 1, 0", res.UnmatchedRecvs, res.UnmatchedSends, res.Totals[LateSender])
	}
}

// Records the replay cannot place are skipped, never a panic: a message
// outside any call, a collective on a communicator the file does not
// define, a completion of a request never started.
func TestOddRecords(t *testing.T) {
	r0, r1 := newRank(0, 2), newRank(1, 2)
	r0.l.MessageComm(5, encode.KindSend, 1, 0, 8, 1)
	r0.call("MPI_Allreduce", 10, 20, func() { r0.l.Collective(10, -1, 8, 8, 99) })
	r1.call("MPI_Allreduce", 15, 20, func() { r1.l.Collective(15, -1, 8, 8, 99) })
	r1.call("MPI_Wait", 30, 40, func() {
		r1.l.Irecv(40, 0, 0, 8, 1, 77)
		r1.l.CollComplete(40, id("MPI_Iallreduce"), -1, 8, 8, 1, 78)
	})
	res, err := Analyze(write(t, r0, r1), Options{Procs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for p := Pattern(0); p < NumPatterns; p++ {
		if res.Totals[p] != 0 {
			t.Errorf("%v: %d ns from records that cannot be replayed", p, res.Totals[p])
		}
	}
	if res.UnmatchedRecvs != 1 {
		t.Errorf("%d receives not replayed, want 1 (the send outside any call is not one)", res.UnmatchedRecvs)
	}
}

// TestOpenMPBarriersAllocate: the barriers' instances are grouped without
// an allocation each (a LULESH run of 64 ranks of 2 threads has 1.7 M of
// them; a slice per instance in a map took 455 MB): Analyze allocates a
// small fraction of an object per barrier visit, most for the run's other
// tables. 4 threads, 5,000 parallel regions.
func TestOpenMPBarriersAllocate(t *testing.T) {
	const threads, regionsRun = 4, 5000
	b := tracetest.NewBuilder("omp", "node", 0, time.Unix(1700000000, 0), regions...)
	var ls []*tracetest.Location
	for i := range threads {
		ls = append(ls, b.Location("thread"))
		b.Trace.Locations[i].Team = []int{i}
	}
	for k := range regionsRun {
		at := uint64(k) * 1000
		for i, l := range ls {
			l.Enter(at+10, id("!$omp implicit task"))
			l.Enter(at+20, id("work"))
			l.Leave(at + 100 + uint64(i*50+k%7))
			l.Enter(at+100+uint64(i*50+k%7), id("!$omp implicit barrier"))
			l.Leave(at + 400)
			l.Leave(at + 410)
		}
	}
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	res, err := Analyze(files, Options{Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range res.Pattern(OMPImplicitBarrier) {
		n += v.Count
	}
	if n != (threads-1)*regionsRun {
		t.Fatalf("%d implicit barrier waits, want %d", n, (threads-1)*regionsRun)
	}
	allocs := testing.AllocsPerRun(2, func() {
		if _, err := Analyze(files, Options{Procs: 1}); err != nil {
			t.Fatal(err)
		}
	})
	if per := allocs / (threads * regionsRun); per > 0.1 {
		t.Errorf("Analyze made %.0f allocations, %.3f per barrier visit: want at most 0.1", allocs, per)
	}
}
