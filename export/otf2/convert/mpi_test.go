package convert

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// mpiRun builds the files of an MPI run of four ranks, as the MPI wrappers
// record it: MPI_COMM_WORLD and MPI_COMM_SELF defined at MPI_Init, then a
// communicator from MPI_Comm_split by parity ({0, 2} and {1, 3}), a
// duplicate of world, and on each rank:
//   - a non-blocking exchange with its partner in the split communicator
//     (MPI_Irecv, MPI_Isend, MPI_Waitall),
//   - a ring of blocking sends on the duplicate of world,
//   - MPI_Allreduce on world, MPI_Bcast on the split communicator from its
//     world-rank-2 or -3 member (rank 1 there), MPI_Iallreduce on the split
//     communicator completed in MPI_Wait,
//   - on rank 3 a receive that is cancelled.
//
// The regions are numbered as NewBuilder numbers them.
var mpiRegions = []string{"main", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Send", "MPI_Recv",
	"MPI_Allreduce", "MPI_Bcast", "MPI_Iallreduce", "MPI_Wait", "MPI_Cancel", "MPI_Comm_split"}

const (
	rMain = iota + 1
	rIrecv
	rIsend
	rWaitall
	rSend
	rRecv
	rAllreduce
	rBcast
	rIallreduce
	rWait
	rCancel
	rSplit
)

func mpiRun(t *testing.T, ranks int, exported []int) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	var files []*tracefile.File
	for _, r := range exported {
		b := tracetest.NewBuilder("mpi", "node", r, start.Add(time.Duration(r)*time.Microsecond), mpiRegions...)
		all := make([]int32, ranks)
		for k := range all {
			all[k] = int32(k)
		}
		world := b.Comm("MPI_COMM_WORLD", 0, all, nil)
		b.Comm("MPI_COMM_SELF", 0, []int32{int32(r)}, nil)
		var half []int32
		for k := r % 2; k < ranks; k += 2 {
			half = append(half, int32(k))
		}
		split := b.Comm("", world, half, nil)
		dup := b.Comm("", world, all, nil)
		l := b.Location("main")
		now := uint64(1000)
		step := func() uint64 { now += 10; return now }
		l.Enter(now, rMain)
		l.Enter(step(), rSplit)
		l.Leave(step())
		// The partner in the split communicator: the other member of a
		// pair, named by its world rank.
		partner := int32(r ^ 2)
		if int(partner) < ranks {
			l.Enter(step(), rIrecv)
			l.Request(step(), encode.KindIrecvRequest, 7)
			l.Leave(step())
			l.Enter(step(), rIsend)
			l.Isend(step(), partner, 5, 64, split, 8)
			l.Leave(step())
			l.Enter(step(), rWaitall)
			l.Request(step(), encode.KindIsendComplete, 8)
			l.Irecv(step(), partner, 5, 64, split, 7)
			l.Leave(step())
		}
		next, prev := int32((r+1)%ranks), int32((r+ranks-1)%ranks)
		l.Enter(step(), rSend)
		l.MessageComm(step(), encode.KindSend, next, 9, 1000+uint64(r), dup)
		l.Leave(step())
		l.Enter(step(), rRecv)
		l.MessageComm(step(), encode.KindRecv, prev, 9, 1000+uint64(prev), dup)
		l.Leave(step())
		l.Enter(2000, rAllreduce)
		l.Collective(2000, -1, 8, 8, world)
		l.Leave(2100 + uint64(r))
		l.Enter(2200, rBcast)
		root := int64(2 + r%2)
		sent, recv := uint64(0), uint64(4096)
		if int64(r) == root {
			sent, recv = 4096, 0
		}
		l.Collective(2200, root, sent, recv, split)
		l.Leave(2300)
		l.Enter(2400, rIallreduce)
		l.Request(2401, encode.KindCollRequest, 9)
		l.Leave(2402)
		l.Enter(2500, rWait)
		l.CollComplete(2550, rIallreduce, -1, 16, 16, split, 9)
		l.Leave(2560)
		if r == 3 {
			l.Enter(2600, rIrecv)
			l.Request(2601, encode.KindIrecvRequest, 10)
			l.Leave(2602)
			l.Enter(2610, rCancel)
			l.Request(2611, encode.KindRequestCancelled, 10)
			l.Leave(2612)
		}
		l.Leave(3000)
		files = append(files, b.Write(t, dir))
	}
	return files
}

// mpiCheck is what testdata/check_mpi.py reports.
type mpiCheck struct {
	Comms map[string]struct {
		Name    string   `json:"name"`
		Group   string   `json:"group"`
		Members []uint64 `json:"members"`
		Parent  *uint64  `json:"parent"`
	} `json:"comms"`
	Unmatched    []string            `json:"unmatched"`
	OpenRequests []string            `json:"open_requests"`
	Collectives  map[string][]string `json:"collectives"`
	Balanced     bool                `json:"balanced"`
	Messages     int                 `json:"messages"`
}

func checkMPIPython(t *testing.T, anchor string) mpiCheck {
	t.Helper()
	out := otf2Python(t, filepath.Join("testdata", "check_mpi.py"), anchor)
	var res mpiCheck
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

// TestMPICommunicators exports the run of mpiRun and reads it back: with
// otf2-print (-Werror clean, every event where expected, peers and roots
// resolved to the right locations) and with python3-otf2 (every request
// completes on its location, every send matches a receive by sender,
// receiver, communicator, tag and length, the communicators' members and
// the collectives' operations and roots).
func TestMPICommunicators(t *testing.T) {
	files := mpiRun(t, 4, []int{0, 1, 2, 3})
	anchor, st := export(t, files, otf2.Options{})
	want := checkArchive(t, anchor, files)
	checkMatched(t, want)
	if st.MessagesWithoutPeer != 0 || st.Collectives != 12 || st.CollectivesLeftOut != 0 || st.RootsNotExported != 0 ||
		st.CommMembersNotExported != 0 || st.UndefinedComms != 0 {
		t.Errorf("stats %+v, want 12 collectives and nothing left out", st)
	}
	res := checkMPIPython(t, anchor)
	if len(res.Unmatched) != 0 || len(res.OpenRequests) != 0 || !res.Balanced || res.Messages != 8 {
		t.Errorf("python3-otf2: unmatched %q, open requests %q, balanced %v, %d messages (want 8)",
			res.Unmatched, res.OpenRequests, res.Balanced, res.Messages)
	}
	// Communicators: world, self, the two halves of the split, the
	// duplicate of world; the halves and the duplicate are world's children.
	type commWant struct {
		name, group string
		members     []uint64
		parent      *uint64
	}
	zero := uint64(0)
	wantComms := []commWant{
		{"MPI_COMM_WORLD", "COMM_GROUP", []uint64{0, 1, 2, 3}, nil},
		{"MPI_COMM_SELF", "COMM_SELF", []uint64{}, nil},
		{"", "COMM_GROUP", []uint64{0, 2}, &zero},
		{"", "COMM_GROUP", []uint64{0, 1, 2, 3}, &zero},
		{"", "COMM_GROUP", []uint64{1, 3}, &zero},
	}
	if len(res.Comms) != len(wantComms) {
		t.Errorf("%d communicators, want %d: %+v", len(res.Comms), len(wantComms), res.Comms)
	}
	for i, w := range wantComms {
		c, ok := res.Comms[fmt.Sprint(i)]
		if !ok || c.Name != w.name || c.Group != w.group || !slices.Equal(c.Members, w.members) ||
			(c.Parent == nil) != (w.parent == nil) || (c.Parent != nil && *c.Parent != *w.parent) {
			t.Errorf("communicator %d: %+v, want %+v", i, c, w)
		}
	}
	// Collectives: Allreduce on world (0) without root, Bcast on the
	// location's half from its member of world rank 2 or 3, Iallreduce on
	// the half.
	for loc := 0; loc < 4; loc++ {
		half := []int{2, 4}[loc%2]
		root := 2 + loc%2
		sent, recv := 0, 4096
		if loc == root {
			sent, recv = 4096, 0
		}
		w := []string{"begin", "end ALLREDUCE 0 NONE 8 8", "begin",
			fmt.Sprintf("end BCAST %d %d %d %d", half, root, sent, recv),
			fmt.Sprintf("complete ALLREDUCE %d NONE 16 16", half)}
		if got := res.Collectives[fmt.Sprint(loc)]; !reflect.DeepEqual(got, w) {
			t.Errorf("location %d: collectives %q, want %q", loc, got, w)
		}
	}
	defs := definitions(t, anchor)
	for _, re := range []string{
		`GROUP +0  Name: "" <\d+>, Type: COMM_LOCATIONS, Paradigm: MPI, Flags: NONE, 4 Members`,
		`REGION +\d+  Name: "MPI_Iallreduce" <\d+> .*Role: COLL_ALL2ALL, Paradigm: MPI`,
		`REGION +\d+  Name: "MPI_Waitall" <\d+> .*Role: POINT2POINT, Paradigm: MPI`,
		`REGION +\d+  Name: "MPI_Comm_split" <\d+> .*Role: FUNCTION, Paradigm: MPI`,
		`REGION +\d+  Name: "main" <\d+> .*Role: FUNCTION, Paradigm: USER`,
	} {
		if !regexp.MustCompile(re).MatchString(defs) {
			t.Errorf("definitions lack %s:\n%s", re, defs)
		}
	}
}

// TestMPIRanksNotExported exports three of the four ranks: the OTF2 ranks
// are those of the exported ones, the groups lose the missing member, and
// what involves it is left out and counted, with the archive still valid
// and its requests complete.
func TestMPIRanksNotExported(t *testing.T) {
	files := mpiRun(t, 4, []int{0, 1, 2})
	anchor, st := export(t, files, otf2.Options{})
	want := checkArchive(t, anchor, files)
	// Sends to and receives from rank 3: rank 1's Isend and Irecv, rank 2's
	// ring send and rank 0's ring receive.
	if st.MessagesWithoutPeer != 4 {
		t.Errorf("stats %+v: want 4 messages without peer", st)
	}
	// World (2 times: world and its duplicate) and rank 1's half lose rank 3.
	if st.CommMembersNotExported != 3 {
		t.Errorf("stats %+v: want 3 members not exported", st)
	}
	// Rank 1's Bcast has root 3.
	if st.RootsNotExported != 1 {
		t.Errorf("stats %+v: want 1 root not exported", st)
	}
	res := checkMPIPython(t, anchor)
	if len(res.Unmatched) != 0 || !res.Balanced {
		t.Errorf("python3-otf2: unmatched %q, balanced %v", res.Unmatched, res.Balanced)
	}
	// Rank 1's exchange with the missing rank is left out whole: the
	// receive's request with the receive, the send's completion with it.
	if len(res.OpenRequests) != 0 {
		t.Errorf("open requests %q", res.OpenRequests)
	}
	if len(want) != 3 {
		t.Errorf("%d locations", len(want))
	}
}

// TestInterComm exports an inter-communicator between ranks {0, 1} and
// {2, 3}: each side records its own group as members and the other as
// remote, and both must find one InterComm. A message from rank 0 to rank 1
// of the remote group (world rank 3) must reach world rank 3's location.
// python3-otf2 3.0.2 cannot read InterComm definitions (see the otf2
// package's intercomm scenario), so only otf2-print reads it.
func TestInterComm(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	var files []*tracefile.File
	for r := 0; r < 4; r++ {
		b := tracetest.NewBuilder("ic", "node", r, start, "main", "MPI_Intercomm_create", "MPI_Send", "MPI_Recv")
		world := b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1, 2, 3}, nil)
		b.Comm("MPI_COMM_SELF", 0, []int32{int32(r)}, nil)
		local, remote := []int32{0, 1}, []int32{2, 3}
		if r >= 2 {
			local, remote = remote, local
		}
		half := b.Comm("", world, local, nil)
		inter := b.Comm("", half, local, remote)
		l := b.Location("main")
		l.Enter(10, 1)
		switch r {
		case 0:
			l.Enter(20, 3)
			l.MessageComm(21, encode.KindSend, 3, 4, 128, inter)
			l.Leave(22)
		case 3:
			l.Enter(20, 4)
			l.MessageComm(30, encode.KindRecv, 0, 4, 128, inter)
			l.Leave(31)
		}
		l.Leave(40)
		files = append(files, b.Write(t, dir))
	}
	anchor, st := export(t, files, otf2.Options{})
	want := checkArchiveNoPython(t, anchor, files)
	checkMatched(t, want)
	if st.MessagesWithoutPeer != 0 {
		t.Errorf("stats %+v", st)
	}
	defs := definitions(t, anchor)
	if n := strings.Count(defs, "\nINTER_COMM "); n != 1 {
		t.Errorf("%d InterComm definitions, want 1:\n%s", n, defs)
	}
	// The common communicator is world: the recorded parents are each
	// side's half.
	re := regexp.MustCompile(`INTER_COMM +\d+  name: "" <\d+>, Group A: "" <(\d+)>, Group B: "" <(\d+)>, Common Communicator: "MPI_COMM_WORLD" <0>`)
	m := re.FindStringSubmatch(defs)
	if m == nil {
		t.Fatalf("no InterComm of two groups with a common communicator:\n%s", defs)
	}
	for _, g := range m[1:] {
		if !regexp.MustCompile(`GROUP +` + g + `  Name: "" <\d+>, Type: COMM_GROUP, Paradigm: MPI, Flags: NONE, 2 Members`).MatchString(defs) {
			t.Errorf("group %s of the InterComm is not a COMM_GROUP of 2:\n%s", g, defs)
		}
	}
}

// TestMixedMessages exports a process whose threads pass messages to each
// other (location peers) besides MPI messages by rank, and a record that
// names a communicator its file does not define: both communicator
// families coexist (a COMM_LOCATIONS group per paradigm), and the record of
// the undefined communicator is left out and counted once.
func TestMixedMessages(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	var files []*tracefile.File
	for r := 0; r < 2; r++ {
		b := tracetest.NewBuilder("mixed", "node", r, start, "main", "MPI_Send", "MPI_Recv")
		b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
		b.Comm("MPI_COMM_SELF", 0, []int32{int32(r)}, nil)
		m, w := b.Location("main"), b.Location("worker")
		m.Enter(10, 1)
		w.Enter(10, 1)
		m.Message(20, encode.KindSend, 1, false, 1, 10) // to the worker
		w.Message(30, encode.KindRecv, 0, false, 1, 10)
		if r == 0 {
			m.Enter(40, 2)
			m.MessageComm(41, encode.KindSend, 1, 2, 20, 1)
			m.MessageComm(42, encode.KindSend, 1, 2, 20, 9) // undefined communicator
			m.MessageComm(43, encode.KindSend, 1, 2, 20, 9)
			m.Leave(44)
		} else {
			m.Enter(40, 3)
			m.MessageComm(50, encode.KindRecv, 0, 2, 20, 1)
			m.Leave(51)
		}
		m.Leave(60)
		w.Leave(60)
		files = append(files, b.Write(t, dir))
	}
	anchor, st := export(t, files, otf2.Options{})
	checkMatched(t, checkArchive(t, anchor, files))
	if st.UndefinedComms != 1 || st.MessagesWithoutPeer != 2 {
		t.Errorf("stats %+v: want 1 undefined communicator and 2 messages left out", st)
	}
	res := checkMPIPython(t, anchor)
	if len(res.Unmatched) != 0 || res.Messages != 3 {
		t.Errorf("python3-otf2: unmatched %q, %d messages (want 3)", res.Unmatched, res.Messages)
	}
	defs := definitions(t, anchor)
	for _, re := range []string{
		`Type: COMM_LOCATIONS, Paradigm: MPI, Flags: NONE, 2 Members: "main" <0>, "main" <2>`,
		`Type: COMM_LOCATIONS, Paradigm: USER, Flags: NONE, 4 Members`,
		`COMM +\d+  Name: "COMM_LOCATIONS"`,
	} {
		if !regexp.MustCompile(re).MatchString(defs) {
			t.Errorf("definitions lack %s:\n%s", re, defs)
		}
	}
}

// TestMPIMeasured records two ranks through measure's MPI probes (as the
// C shim's wrappers call them) and exports them: the records the probes
// write, read back by the trace reader, must make an archive whose
// requests complete, whose messages match and whose collectives name
// their communicator and root.
func TestMPIMeasured(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank := 0; rank < 2; rank++ {
		r := newRecorder(t, dir, rank, measure.Config{})
		m := r.m
		world, err := m.DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.DefineComm("MPI_COMM_SELF", 0, []int32{int32(rank)}, nil); err != nil {
			t.Fatal(err)
		}
		dup, err := m.DefineComm("", world, []int32{1, 0}, nil) // ranks reversed
		if err != nil {
			t.Fatal(err)
		}
		main, irecv, isend, waitall := m.Region("main"), m.Region("MPI_Irecv"), m.Region("MPI_Isend"), m.Region("MPI_Waitall")
		bcast, ibarrier, wait := m.Region("MPI_Bcast"), m.Region("MPI_Ibarrier"), m.Region("MPI_Wait")
		l := m.Location("rank")
		peer := 1 - rank
		l.Enter(main)
		l.Enter(irecv)
		l.IrecvRequest(1)
		l.Leave(irecv)
		l.Enter(isend)
		l.Isend(peer, 3, 256, dup, 2)
		l.Leave(isend)
		l.Enter(waitall)
		l.IsendComplete(2)
		l.Irecv(peer, 3, 256, dup, 1)
		l.Leave(waitall)
		sent, recv := uint64(0), uint64(32)
		if rank == 1 {
			sent, recv = 32, 0
		}
		l.EnterCollectiveComm(bcast, 1, sent, recv, dup) // root: world rank 1, rank 0 in dup
		l.Leave(bcast)
		l.Enter(ibarrier)
		l.CollectiveRequest(3)
		l.Leave(ibarrier)
		l.Enter(wait)
		l.CollectiveComplete(ibarrier, -1, 0, 0, world, 3)
		l.Leave(wait)
		l.Leave(main)
		files = append(files, tracetest.Finish(t, m))
	}
	anchor, st := export(t, files, otf2.Options{})
	checkMatched(t, checkArchive(t, anchor, files))
	if st.Collectives != 4 || st.MessagesWithoutPeer != 0 || st.CollectivesLeftOut != 0 {
		t.Errorf("stats %+v: want 4 collectives, nothing left out", st)
	}
	res := checkMPIPython(t, anchor)
	if len(res.Unmatched) != 0 || len(res.OpenRequests) != 0 || !res.Balanced || res.Messages != 2 {
		t.Errorf("python3-otf2: unmatched %q, open requests %q, balanced %v, %d messages (want 2)",
			res.Unmatched, res.OpenRequests, res.Balanced, res.Messages)
	}
	for loc := 0; loc < 2; loc++ {
		sent, recv := 0, 32
		if loc == 1 {
			sent, recv = 32, 0
		}
		w := []string{"begin", fmt.Sprintf("end BCAST 2 1 %d %d", sent, recv), "complete BARRIER 0 NONE 0 0"}
		if got := res.Collectives[fmt.Sprint(loc)]; !reflect.DeepEqual(got, w) {
			t.Errorf("location %d: collectives %q, want %q", loc, got, w)
		}
	}
	if c := res.Comms["2"]; !slices.Equal(c.Members, []uint64{1, 0}) {
		t.Errorf("the reversed duplicate of world has members %v, want [1 0]", c.Members)
	}
}

// TestCollectiveOps exports one collective of each kind on one rank and
// reads their operations back with python3-otf2: blocking, non-blocking
// and persistent variants, v variants, scans, reduce_scatter, the
// neighbourhood collectives, and Fortran's names.
func TestCollectiveOps(t *testing.T) {
	ops := []struct{ name, op string }{
		{"MPI_Barrier", "BARRIER"}, {"MPI_Bcast", "BCAST"}, {"MPI_Gather", "GATHER"}, {"MPI_Gatherv", "GATHERV"},
		{"MPI_Scatter", "SCATTER"}, {"MPI_Scatterv", "SCATTERV"}, {"MPI_Allgather", "ALLGATHER"},
		{"MPI_Allgatherv", "ALLGATHERV"}, {"MPI_Alltoall", "ALLTOALL"}, {"MPI_Alltoallv", "ALLTOALLV"},
		{"MPI_Alltoallw", "ALLTOALLW"}, {"MPI_Allreduce", "ALLREDUCE"}, {"MPI_Reduce", "REDUCE"},
		{"MPI_Reduce_scatter", "REDUCE_SCATTER"}, {"MPI_Reduce_scatter_block", "REDUCE_SCATTER_BLOCK"},
		{"MPI_Scan", "SCAN"}, {"MPI_Exscan", "EXSCAN"}, {"MPI_Ibarrier", "BARRIER"}, {"MPI_Igatherv", "GATHERV"},
		{"MPI_Ireduce_scatter_block", "REDUCE_SCATTER_BLOCK"}, {"MPI_Iexscan", "EXSCAN"},
		{"MPI_Allreduce_init", "ALLREDUCE"}, {"MPI_Neighbor_alltoallv", "ALLTOALLV"},
		{"MPI_Ineighbor_allgather", "ALLGATHER"}, {"mpi_allreduce_", "ALLREDUCE"}, {"MPI_ALLTOALLW", "ALLTOALLW"},
	}
	names := []string{"main"}
	for _, o := range ops {
		names = append(names, o.name)
	}
	b := tracetest.NewBuilder("ops", "node", 0, time.Unix(1700000000, 0), names...)
	world := b.Comm("MPI_COMM_WORLD", 0, []int32{0}, nil)
	b.Comm("MPI_COMM_SELF", 0, []int32{0}, nil)
	l := b.Location("main")
	now := uint64(100)
	l.Enter(now, 1)
	var want []string
	for k, o := range ops {
		now += 10
		l.Enter(now, uint32(k+2))
		root := int64(-1)
		if k%2 == 1 {
			root = 0
		}
		l.Collective(now, root, uint64(k), uint64(2*k), world)
		now += 5
		l.Leave(now)
		rootLoc := "NONE"
		if root == 0 {
			rootLoc = "0"
		}
		want = append(want, "begin", fmt.Sprintf("end %s 0 %s %d %d", o.op, rootLoc, k, 2*k))
	}
	// A collective record whose region is not a collective (the buffer
	// shed the collective's region, or a wrapper erred) is left out.
	l.Collective(now+1, -1, 0, 0, world)
	l.Leave(now + 10)
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	anchor, st := export(t, files, otf2.Options{})
	if st.Collectives != uint64(len(ops)) || st.CollectivesLeftOut != 1 {
		t.Errorf("stats %+v: want %d collectives and 1 left out", st, len(ops))
	}
	res := checkMPIPython(t, anchor)
	if got := res.Collectives["0"]; !reflect.DeepEqual(got, want) {
		t.Errorf("collectives\n%q\nwant\n%q", got, want)
	}
	defs := definitions(t, anchor)
	for _, re := range []string{
		`Name: "MPI_Gatherv" <\d+> .*Role: COLL_ALL2ONE, Paradigm: MPI`,
		`Name: "MPI_Scan" <\d+> .*Role: COLL_OTHER, Paradigm: MPI`,
		`Name: "mpi_allreduce_" <\d+> .*Role: COLL_ALL2ALL, Paradigm: MPI`,
		`Name: "MPI_Ibarrier" <\d+> .*Role: BARRIER, Paradigm: MPI`,
	} {
		if !regexp.MustCompile(re).MatchString(defs) {
			t.Errorf("definitions lack %s", re)
		}
	}
}

// TestInvalidComms: a communicator definition with a rank twice is left
// out with its reason, as is one made from it, and the records naming them
// are counted; the rest of the run is exported.
func TestInvalidComms(t *testing.T) {
	b := tracetest.NewBuilder("bad", "node", 0, time.Unix(1700000000, 0), "main", "MPI_Send", "MPI_Allreduce")
	world := b.Comm("MPI_COMM_WORLD", 0, []int32{0}, nil)
	bad := b.Comm("", world, []int32{0, 0}, nil)
	child := b.Comm("", bad, []int32{0}, nil)
	inter := b.Comm("", world, []int32{0}, []int32{0})
	l := b.Location("main")
	l.Enter(10, 1)
	l.Enter(20, 2)
	l.MessageComm(21, encode.KindSend, 0, 1, 8, world)
	l.MessageComm(22, encode.KindSend, 0, 1, 8, bad)
	l.MessageComm(23, encode.KindSend, 0, 1, 8, child)
	l.MessageComm(24, encode.KindSend, 0, 1, 8, inter)
	l.Request(25, encode.KindIrecvRequest, 1)
	l.Irecv(26, 0, 1, 8, bad, 1)
	l.Leave(27)
	l.Enter(30, 3)
	l.Collective(30, -1, 8, 8, bad)
	l.Leave(40)
	l.Leave(50)
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	anchor, st := export(t, files, otf2.Options{})
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	if len(st.InvalidComms) != 3 || !strings.Contains(st.InvalidComms[0], `communicator 2 "": world rank 0 is a member twice`) ||
		!strings.Contains(st.InvalidComms[1], "communicator 3 \"\": its parent 2 is not defined") ||
		!strings.Contains(st.InvalidComms[2], "in both groups") {
		t.Errorf("invalid communicators %q", st.InvalidComms)
	}
	if st.UndefinedComms != 3 || st.MessagesWithoutPeer != 4 || st.CollectivesLeftOut != 1 {
		t.Errorf("stats %+v: want 3 undefined communicators, 4 messages and 1 collective left out", st)
	}
	// The receive on the left-out communicator takes its request along.
	printed, err := otf2print.Run(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(printed), "MPI_IRECV") || strings.Count(string(printed), "MPI_SEND ") != 1 {
		t.Errorf("want one MPI_SEND and no receive request:\n%s", printed)
	}
}

// TestMPIGroupsShared exports a halo code of 16 ranks (world, self, a
// cartesian communicator over every rank, four rows and four columns):
// one COMM_GROUP per distinct member list, world's shared by the
// cartesian communicator, and otf2-print reads the archive clean.
func TestMPIGroupsShared(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for r := 0; r < 16; r++ {
		files = append(files, tracetest.HaloRank("halo", r, 16, 3).Write(t, dir))
	}
	anchor, st := export(t, files, otf2.Options{})
	if st.UndefinedComms != 0 || len(st.InvalidComms) != 0 || st.MessagesWithoutPeer != 0 || st.CollectivesLeftOut != 0 {
		t.Errorf("stats %+v, want nothing left out", st)
	}
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	defs := definitions(t, anchor)
	groups := regexp.MustCompile(`(?m)^GROUP +(\d+)  Name: "" <\d+>, Type: COMM_GROUP, .*, (\d+) Members`).FindAllStringSubmatch(defs, -1)
	sizes := map[string]int{}
	for _, g := range groups {
		sizes[g[2]]++
	}
	if len(groups) != 9 || sizes["16"] != 1 || sizes["4"] != 8 {
		t.Errorf("%d COMM_GROUPs (by size %v), want world's and 4 rows' and 4 columns':\n%s", len(groups), sizes, defs)
	}
	comms := regexp.MustCompile(`(?m)^COMM +\d+  Name: "[^"]*" <\d+>, Group: "" <(\d+)>`).FindAllStringSubmatch(defs, -1)
	if len(comms) != 11 || comms[0][1] != comms[2][1] {
		t.Errorf("%d communicators, want 11, the cartesian one (2) with world's group (0):\n%s", len(comms), defs)
	}
}
