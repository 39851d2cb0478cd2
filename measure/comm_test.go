package measure

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Communicators, non-blocking messages and collectives come back from the
// file with every field, in recorded order, and the matrix counts the
// messages of both kinds.
func TestMPIRecordsRoundTrip(t *testing.T) {
	m := startTest(t, Config{})
	world, err := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := m.DefineComm("MPI_COMM_SELF", 0, []int32{1}, nil)
	split, _ := m.DefineComm("", world, []int32{3, 1}, nil)
	inter, _ := m.DefineComm("", split, []int32{1}, []int32{0, 2})
	if world != 1 || self != 2 || split != 3 || inter != 4 {
		t.Fatalf("ids %d %d %d %d", world, self, split, inter)
	}
	main, isend, wait, iallreduce, allreduce := m.Region("main"), m.Region("MPI_Isend"), m.Region("MPI_Wait"), m.Region("MPI_Iallreduce"), m.Region("MPI_Allreduce")
	loc := m.Location("rank 1")
	loc.Enter(main)
	loc.SendRankComm(3, 5, 100, split)
	loc.RecvRankComm(3, 5, 50, split)
	loc.Enter(isend)
	loc.Isend(0, 7, 4096, world, 1)
	loc.Leave(isend)
	loc.IrecvRequest(2)
	loc.Enter(wait)
	loc.IsendComplete(1)
	loc.Irecv(2, 7, 64, world, 2)
	loc.Leave(wait)
	loc.RequestCancelled(3)
	loc.Enter(iallreduce)
	loc.CollectiveRequest(4)
	loc.Leave(iallreduce)
	loc.Enter(wait)
	loc.CollectiveComplete(iallreduce, -1, 8, 8, world, 4)
	loc.Leave(wait)
	loc.EnterCollectiveComm(allreduce, 0, 16, 64, split)
	loc.Leave(allreduce)
	loc.SendRank(0, 1, 10)
	loc.Leave(main)
	m.Close()
	f := openTrace(t, m)

	wantComms := []tracefile.Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: []int32{0, 1, 2, 3}}, {ID: 2, Name: "MPI_COMM_SELF", Members: []int32{1}},
		{ID: 3, Parent: 1, Members: []int32{3, 1}}, {ID: 4, Parent: 3, Members: []int32{1}, Remote: []int32{0, 2}}}
	if !reflect.DeepEqual(f.Comms, wantComms) {
		t.Errorf("comms %+v", f.Comms)
	}
	wantMatrix := []tracefile.CommCount{
		{Peer: 0, PeerRank: true, Sent: 2, SentBytes: 4106},
		{Peer: 2, PeerRank: true, Received: 1, ReceivedBytes: 64},
		{Peer: 3, PeerRank: true, Sent: 1, SentBytes: 100, Received: 1, ReceivedBytes: 50},
	}
	if got := f.Locations[0].Comm; !reflect.DeepEqual(got, wantMatrix) {
		t.Errorf("matrix %+v\nwant %+v", got, wantMatrix)
	}
	var got []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		s := fmt.Sprintf("%v %s d%d %v", e.Kind, f.RegionName(e.Region), e.Depth, e.Class)
		switch e.Kind {
		case encode.KindEnter, encode.KindLeave:
		default:
			s += fmt.Sprintf(" peer=%d tag=%d bytes=%d recv=%d root=%d comm=%d req=%d", e.Peer, e.Tag, e.Bytes, e.Received, e.Root, e.Comm, e.Request)
		}
		got = append(got, s)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	want := []string{
		"ENTER main d1 enter/leave",
		"SEND main d1 message peer=3 tag=5 bytes=100 recv=0 root=0 comm=3 req=0",
		"RECV main d1 message peer=3 tag=5 bytes=50 recv=0 root=0 comm=3 req=0",
		"ENTER MPI_Isend d2 enter/leave",
		"ISEND MPI_Isend d2 message peer=0 tag=7 bytes=4096 recv=0 root=0 comm=1 req=1",
		"LEAVE MPI_Isend d2 enter/leave",
		"IRECV_REQUEST main d1 message peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=2",
		"ENTER MPI_Wait d2 enter/leave",
		"ISEND_COMPLETE MPI_Wait d2 message peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=1",
		"IRECV MPI_Wait d2 message peer=2 tag=7 bytes=64 recv=0 root=0 comm=1 req=2",
		"LEAVE MPI_Wait d2 enter/leave",
		"REQUEST_CANCELLED main d1 message peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=3",
		"ENTER MPI_Iallreduce d2 enter/leave",
		"COLL_REQUEST MPI_Iallreduce d2 collective peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=4",
		"LEAVE MPI_Iallreduce d2 enter/leave",
		"ENTER MPI_Wait d2 enter/leave",
		"COLL_COMPLETE MPI_Iallreduce d2 collective peer=0 tag=0 bytes=8 recv=8 root=-1 comm=1 req=4",
		"LEAVE MPI_Wait d2 enter/leave",
		"ENTER MPI_Allreduce d2 collective",
		"COLLECTIVE MPI_Allreduce d2 collective peer=0 tag=0 bytes=16 recv=64 root=0 comm=3 req=0",
		"LEAVE MPI_Allreduce d2 collective",
		"SEND main d1 message peer=0 tag=1 bytes=10 recv=0 root=0 comm=0 req=0",
		"LEAVE main d1 enter/leave",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkCounts(t, f.Location(0))
}

// The matrix is counted at the probe: with a buffer far too small for the
// run, messages at a deep calling depth are shed, and the matrix is still
// the unreduced run's, as is the flat profile.
func TestCommMatrixIsExact(t *testing.T) {
	run := func(c Config) *tracefile.File {
		m := startTest(t, c)
		regions := make([]Region, 8)
		for i := range regions {
			regions[i] = m.Region(fmt.Sprintf("level%d", i))
		}
		a, b := m.Location("a"), m.Location("b")
		for i := 0; i < 4000; i++ {
			for _, l := range regions {
				a.Enter(l)
			}
			a.SendRankComm(1+i%5, 1, uint64(8*(i%7)), 1)
			a.Isend(100+i%3, 2, 1000, 1, uint64(i))
			a.Send(b, 3, 16)
			b.Recv(a, 3, 16)
			a.Irecv(7, 2, 24, 1, uint64(i))
			for j := len(regions) - 1; j >= 0; j-- {
				a.Leave(regions[j])
			}
		}
		m.Close()
		return openTrace(t, m)
	}
	full := run(Config{})
	small := run(Config{BufferSize: 16 * 1024, BinSize: 512})
	if len(small.Reductions) == 0 {
		t.Fatal("the small buffer did not reduce")
	}
	for i := range full.Locations {
		fl, sl := &full.Locations[i], &small.Locations[i]
		checkCounts(t, sl)
		if len(fl.Comm) == 0 || !reflect.DeepEqual(fl.Comm, sl.Comm) {
			t.Errorf("%s: matrix of the reduced run\n%+v\nunreduced\n%+v", fl.Name, sl.Comm, fl.Comm)
		}
	}
	kept := 0
	it := small.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		if e.Kind == encode.KindSend || e.Kind == encode.KindIsend {
			kept++
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	var sent uint64
	for _, c := range small.Locations[0].Comm {
		sent += c.Sent
	}
	if sent != 3*4000 || uint64(kept) >= sent {
		t.Errorf("matrix counts %d sends, the reduced file keeps %d: want 12000 and fewer kept", sent, kept)
	}
	b := small.Locations[1].Comm
	if len(b) != 1 || b[0].PeerRank || b[0].Peer != uint64(small.Locations[0].ID) || b[0].Received != 4000 || b[0].ReceivedBytes != 64000 {
		t.Errorf("b's matrix %+v", b)
	}
}

// Many peers grow the table; lookups still find every line.
func TestCommMatrixManyPeers(t *testing.T) {
	m := startTest(t, Config{})
	l := m.Location("a")
	for round := 0; round < 3; round++ {
		for p := 0; p < 1000; p++ {
			l.SendRank(p*7919, 0, uint64(p))
			l.RecvRank(p*7919, 0, 1)
		}
	}
	got := l.commMatrix()
	if len(got) != 1000 {
		t.Fatalf("%d lines, want 1000", len(got))
	}
	for i, c := range got {
		if c.Peer != uint64(i*7919) || c.Sent != 3 || c.SentBytes != uint64(3*i) || c.Received != 3 || c.ReceivedBytes != 3 {
			t.Fatalf("line %d: %+v", i, c)
		}
	}
	m.Close()
}

func TestMPIProbesAllocateNothing(t *testing.T) {
	m := startTest(t, Config{})
	world, _ := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
	r, coll := m.Region("MPI_Waitall"), m.Region("MPI_Allreduce")
	loc := m.Location("main")
	warm := func() {
		loc.Enter(r)
		loc.SendRankComm(1, 0, 8, world)
		loc.RecvRankComm(1, 0, 8, world)
		loc.Isend(1, 0, 8, world, 1)
		loc.IrecvRequest(2)
		loc.IsendComplete(1)
		loc.Irecv(1, 0, 8, world, 2)
		loc.RequestCancelled(3)
		loc.CollectiveRequest(4)
		loc.CollectiveComplete(coll, -1, 8, 8, world, 4)
		loc.Leave(r)
		loc.EnterCollectiveComm(coll, -1, 8, 8, world)
		loc.Leave(coll)
	}
	warm()
	if allocs := testing.AllocsPerRun(2000, warm); allocs != 0 {
		t.Errorf("MPI probes allocate %v times per run", allocs)
	}
	m.Close()
}

func TestDefineCommErrors(t *testing.T) {
	m := startTest(t, Config{})
	if _, err := m.DefineComm("x", 3, []int32{0}, nil); err == nil || !strings.Contains(err.Error(), `communicator "x": parent 3 is not defined`) {
		t.Errorf("undefined parent: %v", err)
	}
	if _, err := m.DefineComm("y", 0, []int32{0, -2}, nil); err == nil || !strings.Contains(err.Error(), "world rank -2 is negative") {
		t.Errorf("negative rank: %v", err)
	}
	var off *Measurement
	if id, err := off.DefineComm("MPI_COMM_WORLD", 0, []int32{0}, nil); id != 0 || err != nil {
		t.Errorf("disabled: %d, %v", id, err)
	}
	m.Close()
}

// recordAt replays what the probes record, at the times given.
func TestRecordAt(t *testing.T) {
	m := startTest(t, Config{})
	r := m.Region("MPI_Wait")
	loc := m.Location("main")
	t0 := m.Now()
	loc.EnterAt(r, t0)
	loc.recordAt(encode.Record{Kind: encode.KindIrecv, Peer: 1, PeerRank: true, Tag: 3, Bytes: 8, Comm: 0, Request: 9}, t0+10)
	loc.recordAt(encode.Record{Kind: encode.KindSend, Peer: 1, PeerRank: true, Tag: 3, Bytes: 8, Comm: 2}, t0+20)
	loc.recordAt(encode.Record{Kind: encode.KindEnter, Region: 1}, t0+30)
	loc.LeaveAt(r, t0+40)
	m.Close()
	f := openTrace(t, m)
	if u := f.Locations[0].Usage.UnknownRegion; u != 1 {
		t.Errorf("recordAt of an enter: %d usage errors, want 1", u)
	}
	var kinds []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		kinds = append(kinds, fmt.Sprintf("%v/%d/%d", e.Kind, e.Comm, e.Request))
	}
	if got := strings.Join(kinds, " "); got != "ENTER/0/0 IRECV/0/9 SEND/2/0 LEAVE/0/0" {
		t.Errorf("events %s", got)
	}
}

// BenchmarkSendRank is a blocking send's probe with the matrix counted,
// to 8 peers in turn, with and without a communicator.
func BenchmarkSendRank(b *testing.B) {
	for _, comm := range []CommID{0, 1} {
		b.Run(fmt.Sprintf("comm=%d", comm), func(b *testing.B) {
			m := startTest(b, Config{BufferSize: 256 << 20})
			loc := m.Location("main")
			for i := 0; i < b.N; i++ {
				loc.SendRankComm(i&7, 0, 64, comm)
			}
			b.StopTimer()
			m.Close()
		})
	}
}

// A communicator with its parent's members (MPI_Comm_dup, MPI_Cart_create
// over every rank) holds the parent's list, and costs the file a few
// bytes, not a list: the file of a rank that made world of 10^4 ranks and
// two duplicates of it is no larger than with world of 10 ranks.
func TestDefineCommSharesParentMembers(t *testing.T) {
	size := func(ranks int) int64 {
		m := startTest(t, Config{})
		world := make([]int32, ranks)
		for i := range world {
			world[i] = int32(i)
		}
		w, err := m.DefineComm("MPI_COMM_WORLD", 0, world, nil)
		if err != nil {
			t.Fatal(err)
		}
		d1, _ := m.DefineComm("", w, world, nil)
		d2, _ := m.DefineComm("", d1, slices.Clone(world), nil)
		other, _ := m.DefineComm("", w, world[:ranks/2], nil)
		cs := m.commDefs()
		if &cs[d1-1].Members[0] != &cs[w-1].Members[0] || &cs[d2-1].Members[0] != &cs[w-1].Members[0] {
			t.Errorf("%d ranks: the duplicates of world hold copies of its members", ranks)
		}
		if len(cs[other-1].Members) != ranks/2 {
			t.Errorf("%d ranks: a half of world has %d members", ranks, len(cs[other-1].Members))
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := tracefile.Open(m.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if len(f.Comms) != 4 || !slices.Equal(f.Comms[2].Members, world) || !slices.Equal(f.Comms[3].Members, world[:ranks/2]) {
			t.Errorf("%d ranks: communicators read back as %d, members differ", ranks, len(f.Comms))
		}
		st, err := os.Stat(m.Path())
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	small, large := size(10), size(10000)
	if large-small > 64 {
		t.Errorf("the file with world of 10^4 ranks and its duplicates is %d bytes, with 10 ranks %d", large, small)
	}
}
