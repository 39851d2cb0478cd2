package otf2

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// The scenarios below are twins of those in testdata/gen/gen.c: the same
// definitions and events, through the Go API instead of libotf2. Keep them
// in step; TestGolden compares the archives byte for byte.

// lcg is the pseudo-random sequence gen.c uses.
type lcg uint64

func (l *lcg) next() uint64 {
	*l = *l*6364136223846793005 + 1442695040888963407
	return uint64(*l) >> 33
}

// recordedEvent is what a scenario wrote, to compare with what readers see.
type recordedEvent struct {
	kind   string // otf2-print's name: ENTER, LEAVE, METRIC, MPI_SEND, MPI_RECV
	time   uint64
	ref    uint64   // region, metric class or communicator
	values []uint64 // metric values; for MPI: peer, tag, length
	// fields are the other events' attributes as otf2-print shows them (a
	// reference by its number); their values are then the fields on disk.
	fields map[string]string
}

// builder wraps an Archive for scenarios: any error fails the test, and
// every event is recorded per location.
type builder struct {
	t      testing.TB
	a      *Archive
	events map[LocationRef][]recordedEvent
}

func newBuilder(t testing.TB, dir string, opt Options) *builder {
	t.Helper()
	a, err := Create(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return &builder{t: t, a: a, events: map[LocationRef][]recordedEvent{}}
}

func (b *builder) ok(err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b *builder) stn(name, class string, parent SystemTreeNodeRef) SystemTreeNodeRef {
	b.t.Helper()
	r, err := b.a.SystemTreeNode(name, class, parent)
	b.ok(err)
	return r
}

func (b *builder) lg(name string, parent SystemTreeNodeRef) LocationGroupRef {
	b.t.Helper()
	r, err := b.a.LocationGroup(name, parent)
	b.ok(err)
	return r
}

func (b *builder) loc(name string, g LocationGroupRef) *EventWriter {
	b.t.Helper()
	w, err := b.a.Location(name, g)
	b.ok(err)
	return w
}

func (b *builder) region(name, canon, desc, file string, begin, end uint32, role RegionRole, p Paradigm, flags RegionFlags) RegionRef {
	b.t.Helper()
	r, err := b.a.Region(RegionDef{Name: name, CanonicalName: canon, Description: desc, File: file,
		BeginLine: begin, EndLine: end, Role: role, Paradigm: p, Flags: flags})
	b.ok(err)
	return r
}

func (b *builder) group(name string, typ GroupType, p Paradigm, flags GroupFlags, members []uint64) GroupRef {
	b.t.Helper()
	r, err := b.a.Group(GroupDef{Name: name, Type: typ, Paradigm: p, Flags: flags, Members: members})
	b.ok(err)
	return r
}

func (b *builder) member(name, desc, unit string, typ MetricType, mode MetricMode, vt ValueType, base MetricBase, exp int64) MetricMemberRef {
	b.t.Helper()
	r, err := b.a.MetricMember(MetricMemberDef{Name: name, Description: desc, Unit: unit, Type: typ, Mode: mode, ValueType: vt, Base: base, Exponent: exp})
	b.ok(err)
	return r
}

func (b *builder) class(members []MetricMemberRef, occ MetricOccurrence, rec RecorderKind) MetricRef {
	b.t.Helper()
	r, err := b.a.MetricClass(members, occ, rec)
	b.ok(err)
	return r
}

func (b *builder) enter(w *EventWriter, t uint64, r RegionRef) {
	b.t.Helper()
	b.ok(w.Enter(t, r))
	b.events[w.Ref()] = append(b.events[w.Ref()], recordedEvent{kind: "ENTER", time: t, ref: uint64(r)})
}

func (b *builder) leave(w *EventWriter, t uint64, r RegionRef) {
	b.t.Helper()
	b.ok(w.Leave(t, r))
	b.events[w.Ref()] = append(b.events[w.Ref()], recordedEvent{kind: "LEAVE", time: t, ref: uint64(r)})
}

func (b *builder) metric(w *EventWriter, t uint64, m MetricRef, values ...MetricValue) {
	b.t.Helper()
	b.ok(w.Metric(t, m, values))
	vs := make([]uint64, len(values))
	for i, v := range values {
		vs[i] = uint64(v)
	}
	b.events[w.Ref()] = append(b.events[w.Ref()], recordedEvent{kind: "METRIC", time: t, ref: uint64(m), values: vs})
}

func (b *builder) send(w *EventWriter, t uint64, peer uint32, c CommRef, tag uint32, length uint64) {
	b.t.Helper()
	b.ok(w.MpiSend(t, peer, c, tag, length))
	b.events[w.Ref()] = append(b.events[w.Ref()], recordedEvent{kind: "MPI_SEND", time: t, ref: uint64(c), values: []uint64{uint64(peer), uint64(tag), length}})
}

func (b *builder) recv(w *EventWriter, t uint64, peer uint32, c CommRef, tag uint32, length uint64) {
	b.t.Helper()
	b.ok(w.MpiRecv(t, peer, c, tag, length))
	b.events[w.Ref()] = append(b.events[w.Ref()], recordedEvent{kind: "MPI_RECV", time: t, ref: uint64(c), values: []uint64{uint64(peer), uint64(tag), length}})
}

// other records an event of the kinds with no helper of their own: raw are
// its fields in their order on disk, fields its attributes as otf2-print
// shows them (name, value pairs).
func (b *builder) other(w *EventWriter, kind string, t uint64, err error, raw []uint64, fields ...string) {
	b.t.Helper()
	b.ok(err)
	f := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		f[fields[i]] = fields[i+1]
	}
	b.events[w.Ref()] = append(b.events[w.Ref()], recordedEvent{kind: kind, time: t, values: raw, fields: f})
}

// hasClockOffsets reports whether readers shift the location's times.
func (b *builder) hasClockOffsets(l LocationRef) bool {
	return len(b.a.locations[l].clockOffsets) > 1
}

func (b *builder) close() {
	b.t.Helper()
	b.ok(b.a.Close())
}

const creator = "hmbtrace otf2 golden"

type scenario struct {
	name string
	run  func(b *builder)
	opt  Options
	// notForPython says why python3-otf2 cannot read the archive.
	notForPython string
}

var scenarios = []scenario{
	{"single", scenarioSingle, Options{Creator: creator, Machine: "testhost", Description: "one location, 12 events"}, ""},
	{"locations", scenarioLocations, Options{Creator: creator}, ""},
	{"metrics", scenarioMetrics, Options{Creator: creator, Machine: "testhost", Description: "metrics"}, ""},
	{"mpi", scenarioMPI, Options{Creator: creator, Machine: "cluster", Description: "MPI ring"}, ""},
	{"threads", scenarioThreads, Options{Creator: creator, Description: "OpenMP team"}, ""},
	{"mpinb", scenarioMPINonBlocking, Options{Creator: creator, Machine: "cluster", Description: "MPI requests and collectives"}, ""},
	{"intercomm", scenarioInterComm, Options{Creator: creator}, "python3-otf2 3.0.2 gives InterComm the fields of Comm before its own and so cannot read one"},
	{"multichunk", scenarioMultichunk, Options{Creator: creator, Description: "multi-chunk", EventChunkSize: 256 << 10}, ""},
	{"manydefs", scenarioManyDefs, Options{Creator: creator, EventChunkSize: 256 << 10, DefChunkSize: 256 << 10}, ""},
	{"attic", scenarioAttic, Options{Creator: creator}, "python3-otf2 rejects groups of type UNKNOWN"},
	{"tasks", scenarioTasks, Options{Creator: creator, Description: "OpenMP tasks"}, ""},
}

func scenarioSingle(b *builder) {
	node := b.stn("localhost", "machine", NoParent)
	proc := b.lg("Process 0", node)
	w := b.loc("Master thread", proc)
	rmain := b.region("main", "", "", "main.c", 10, 60, RoleFunction, ParadigmUser, 0)
	rinit := b.region("init", "", "", "main.c", 12, 20, RoleFunction, ParadigmUser, 0)
	rcomp := b.region("compute", "_Z7computev", "the solver", "compute.c", 5, 40, RoleFunction, ParadigmUser, 0)
	rkern := b.region("kernel", "", "", "compute.c", 42, 50, RoleFunction, ParadigmCompiler, 0)
	rfin := b.region("finalize", "", "", "main.c", 22, 30, RoleFunction, ParadigmUser, 0)
	t := uint64(1000000001706)
	step := func(d uint64) uint64 { t += d; return t }
	b.enter(w, t, rmain)
	b.enter(w, step(701), rinit)
	b.leave(w, step(350), rinit)
	b.enter(w, step(12), rcomp)
	b.enter(w, step(40), rkern)
	b.leave(w, step(900), rkern)
	b.enter(w, t, rkern)
	b.leave(w, step(870), rkern)
	b.leave(w, step(5), rcomp)
	b.enter(w, step(3), rfin)
	b.leave(w, step(250), rfin)
	b.leave(w, step(1), rmain)
	b.ok(b.a.ClockProperties(1000000000, 1000000000000, t-1000000000000+1))
}

func scenarioLocations(b *builder) {
	root := b.stn("cluster", "machine", NoParent)
	n0 := b.stn("node0", "node", root)
	n1 := b.stn("node1", "node", root)
	p0 := b.lg("Process 0", n0)
	p1 := b.lg("Process 1", n1)
	w := []*EventWriter{b.loc("Master thread", p0), b.loc("Pthread 1", p0), b.loc("Master thread", p1)}
	b.loc("Idle thread", p1)
	rmain := b.region("main", "", "", "main.c", 1, 99, RoleFunction, ParadigmUser, 0)
	rpar := b.region("!$omp parallel @main.c:20", "", "", "main.c", 20, 30, RoleParallel, ParadigmOpenMP, 0)
	rloop := b.region("loop", "", "", "main.c", 21, 29, RoleLoop, ParadigmUser, RegionFlagDynamic)
	rcreate := b.region("pthread_create", "", "", "", 0, 0, RoleThreadCreate, ParadigmPthread, 0)
	var t [3]uint64
	r := lcg(7)
	for l := range w {
		b.enter(w[l], 0, rmain)
	}
	b.enter(w[0], 0, rcreate)
	b.leave(w[0], 0, rcreate)
	for i := 0; i < 20; i++ {
		for l := range w {
			t[l] += r.next() % 4
			b.enter(w[l], t[l], rpar)
			t[l] += r.next() % 4
			b.enter(w[l], t[l], rloop)
			t[l] += r.next() % 4
			b.leave(w[l], t[l], rloop)
			t[l] += r.next() % 4
			b.leave(w[l], t[l], rpar)
		}
	}
	var end uint64
	for l := range w {
		t[l]++
		b.leave(w[l], t[l], rmain)
		end = max(end, t[l])
	}
	b.ok(b.a.ClockOffset(0, 0, 0, 0))
	b.ok(b.a.ClockOffset(2, 0, -12345, 1.5))
	b.ok(b.a.ClockOffset(2, 5000, 300, 0.25))
	b.ok(b.a.ClockProperties(1000000000, 0, end+1))
}

func scenarioMetrics(b *builder) {
	node := b.stn("localhost", "machine", NoParent)
	proc := b.lg("Process 0", node)
	w := b.loc("Master thread", proc)
	rmain := b.region("main", "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	rwork := b.region("work", "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	cyc := b.member("PAPI_TOT_CYC", "Total cycles", "#", MetricTypePAPI, MetricAccumulatedStart, TypeUint64, BaseDecimal, 0)
	ins := b.member("PAPI_TOT_INS", "Instructions completed", "#", MetricTypePAPI, MetricAccumulatedStart, TypeUint64, BaseDecimal, 0)
	temp := b.member("temperature", "", "C", MetricTypeUser, MetricAbsolutePoint, TypeDouble, BaseDecimal, -3)
	bal := b.member("balance", "signed", "B", MetricTypeOther, MetricRelativePoint, TypeInt64, BaseBinary, 20)
	c0 := b.class([]MetricMemberRef{cyc, ins}, MetricSynchronousStrict, RecorderCPU)
	c1 := b.class([]MetricMemberRef{temp, bal}, MetricAsynchronous, RecorderAbstract)
	var m30 []MetricMemberRef
	for i := 0; i < 30; i++ {
		m30 = append(m30, b.member(fmt.Sprintf("counter_%d", i), "", "#", MetricTypeOther, MetricAbsolutePoint, TypeUint64, BaseDecimal, 0))
	}
	c2 := b.class(m30, MetricSynchronous, RecorderCPU)

	t, cycles, instr := uint64(5000), uint64(1000), uint64(700)
	r := lcg(3)
	b.metric(w, t, c0, Uint64Value(cycles), Uint64Value(instr))
	b.enter(w, t, rmain)
	for i := 0; i < 10; i++ {
		t += 1 + r.next()%100
		cycles += r.next() % 100000
		instr += r.next() % 100000
		b.metric(w, t, c0, Uint64Value(cycles), Uint64Value(instr))
		b.enter(w, t, rwork)
		if i%3 == 0 {
			b.metric(w, t+1, c1, DoubleValue(21.5+0.25*float64(i)), Int64Value(int64(r.next()%2000)-1000))
		}
		if i%4 == 1 {
			v := make([]MetricValue, 30)
			for k := range v {
				switch k % 3 {
				case 0:
					v[k] = 0
				case 1:
					v[k] = math.MaxUint64
				default:
					v[k] = Uint64Value(r.next() << (k % 31))
				}
			}
			b.metric(w, t+1, c2, v...)
		}
		t += 2 + r.next()%1000
		cycles += r.next() % 100000
		instr += r.next() % 100000
		b.metric(w, t, c0, Uint64Value(cycles), Uint64Value(instr))
		b.leave(w, t, rwork)
	}
	b.leave(w, t+10, rmain)
	b.ok(b.a.ClockProperties(1000000000, 5000, t+10-5000+1))
}

// scenarioThreads is an OpenMP process of two threads: a parallel region
// forked by thread 0, ThreadFork/Join around it, ThreadTeamBegin/End
// around both threads' implicit tasks on a thread-team communicator.
func scenarioThreads(b *builder) {
	node := b.stn("node0", "node", NoParent)
	p := b.lg("Rank 0", node)
	w := []*EventWriter{b.loc("thread 0", p), b.loc("thread 1", p)}
	rmain := b.region("main", "", "", "omp.c", 1, 40, RoleFunction, ParadigmUser, 0)
	rpar := b.region("!$omp parallel @omp.c:10", "", "", "omp.c", 10, 0, RoleParallel, ParadigmOpenMP, 0)
	rtask := b.region("!$omp implicit task", "", "", "", 0, 0, RoleTask, ParadigmOpenMP, 0)
	b.group("", GroupTypeCommLocations, ParadigmOpenMP, 0, []uint64{0, 1})
	gteam := b.group("", GroupTypeCommGroup, ParadigmOpenMP, 0, []uint64{0, 1})
	team, err := b.a.Comm("Rank 0 team thread 0, thread 1", gteam, NoComm)
	b.ok(err)
	name := fmt.Sprint(team)
	b.enter(w[0], 100, rmain)
	b.other(w[0], "THREAD_FORK", 110, w[0].ThreadFork(110, ParadigmOpenMP, 2), []uint64{uint64(ParadigmOpenMP), 2},
		"Model", "OPENMP", "# Requested Threads", "2")
	b.enter(w[0], 110, rpar)
	for k := range uint64(2) {
		b.other(w[k], "THREAD_TEAM_BEGIN", 111+k, w[k].ThreadTeamBegin(111+k, team), []uint64{uint64(team)}, "Thread Team", name)
		b.enter(w[k], 111+k, rtask)
		b.leave(w[k], 190-k, rtask)
		b.other(w[k], "THREAD_TEAM_END", 190-k, w[k].ThreadTeamEnd(190-k, team), []uint64{uint64(team)}, "Thread Team", name)
	}
	b.leave(w[0], 195, rpar)
	b.other(w[0], "THREAD_JOIN", 195, w[0].ThreadJoin(195, ParadigmOpenMP), []uint64{uint64(ParadigmOpenMP)}, "Model", "OPENMP")
	b.leave(w[0], 200, rmain)
	b.ok(b.a.ClockProperties(1000000000, 100, 101))
}

// scenarioTasks is scenarioThreads with explicit tasks: thread 0 creates
// two tasks in a single construct; thread 1 runs the first, thread 0 the
// second inside its taskwait, each switching back to its implicit task
// (generation 0) after the completion.
func scenarioTasks(b *builder) {
	node := b.stn("node0", "node", NoParent)
	p := b.lg("Rank 0", node)
	w := []*EventWriter{b.loc("thread 0", p), b.loc("thread 1", p)}
	rpar := b.region("!$omp parallel @t.c:10", "", "", "t.c", 10, 0, RoleParallel, ParadigmOpenMP, 0)
	rimpl := b.region("!$omp implicit task", "", "", "", 0, 0, RoleTask, ParadigmOpenMP, 0)
	rcreate := b.region("!$omp create task @t.c:12", "", "", "t.c", 12, 0, RoleTaskCreate, ParadigmOpenMP, 0)
	rtask := b.region("!$omp task @t.c:12", "", "", "t.c", 12, 0, RoleTask, ParadigmOpenMP, 0)
	rwait := b.region("!$omp taskwait @t.c:14", "", "", "t.c", 14, 0, RoleTaskWait, ParadigmOpenMP, 0)
	b.group("", GroupTypeCommLocations, ParadigmOpenMP, 0, []uint64{0, 1})
	gteam := b.group("", GroupTypeCommGroup, ParadigmOpenMP, 0, []uint64{0, 1})
	team, err := b.a.Comm("Rank 0 team thread 0, thread 1", gteam, NoComm)
	b.ok(err)
	name := fmt.Sprint(team)
	task := func(w *EventWriter, kind string, ts uint64, creator, gen uint32) {
		var err error
		switch kind {
		case "THREAD_TASK_CREATE":
			err = w.ThreadTaskCreate(ts, team, creator, gen)
		case "THREAD_TASK_SWITCH":
			err = w.ThreadTaskSwitch(ts, team, creator, gen)
		default:
			err = w.ThreadTaskComplete(ts, team, creator, gen)
		}
		b.other(w, kind, ts, err, []uint64{uint64(team), uint64(creator), uint64(gen)},
			"Thread Team", name, "Creating Thread", fmt.Sprint(creator), "Generation Number", fmt.Sprint(gen))
	}
	b.other(w[0], "THREAD_FORK", 100, w[0].ThreadFork(100, ParadigmOpenMP, 2), []uint64{uint64(ParadigmOpenMP), 2},
		"Model", "OPENMP", "# Requested Threads", "2")
	b.enter(w[0], 100, rpar)
	for k := range uint64(2) {
		b.other(w[k], "THREAD_TEAM_BEGIN", 101+k, w[k].ThreadTeamBegin(101+k, team), []uint64{uint64(team)}, "Thread Team", name)
		b.enter(w[k], 101+k, rimpl)
	}
	b.enter(w[0], 110, rcreate)
	task(w[0], "THREAD_TASK_CREATE", 111, 0, 1)
	task(w[0], "THREAD_TASK_CREATE", 112, 0, 2)
	b.leave(w[0], 113, rcreate)
	task(w[1], "THREAD_TASK_SWITCH", 114, 0, 1)
	b.enter(w[1], 114, rtask)
	b.enter(w[0], 115, rwait)
	task(w[0], "THREAD_TASK_SWITCH", 116, 0, 2)
	b.enter(w[0], 116, rtask)
	b.leave(w[0], 150, rtask)
	task(w[0], "THREAD_TASK_COMPLETE", 150, 0, 2)
	task(w[0], "THREAD_TASK_SWITCH", 151, 0, 0)
	b.leave(w[1], 160, rtask)
	task(w[1], "THREAD_TASK_COMPLETE", 160, 0, 1)
	task(w[1], "THREAD_TASK_SWITCH", 161, 1, 0)
	b.leave(w[0], 162, rwait)
	for k := range uint64(2) {
		b.leave(w[k], 190-k, rimpl)
		b.other(w[k], "THREAD_TEAM_END", 190-k, w[k].ThreadTeamEnd(190-k, team), []uint64{uint64(team)}, "Thread Team", name)
	}
	b.leave(w[0], 195, rpar)
	b.other(w[0], "THREAD_JOIN", 195, w[0].ThreadJoin(195, ParadigmOpenMP), []uint64{uint64(ParadigmOpenMP)}, "Model", "OPENMP")
	b.ok(b.a.ClockProperties(1000000000, 100, 96))
}

func scenarioMPI(b *builder) {
	root := b.stn("cluster", "machine", NoParent)
	node := b.stn("node0", "node", root)
	var w []*EventWriter
	var ranks []LocationRef
	for r := 0; r < 3; r++ {
		p := b.lg(fmt.Sprintf("MPI Rank %d", r), node)
		w = append(w, b.loc("Master thread", p))
		ranks = append(ranks, w[r].Ref())
	}
	rmain := b.region("main", "", "", "ring.c", 1, 50, RoleFunction, ParadigmUser, 0)
	rsend := b.region("MPI_Send", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	rrecv := b.region("MPI_Recv", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	rbar := b.region("MPI_Barrier", "", "", "", 0, 0, RoleBarrier, ParadigmMPI, 0)
	world, err := b.a.MPICommWorld("MPI_COMM_WORLD", ranks)
	b.ok(err)
	geven := b.group("", GroupTypeCommGroup, ParadigmMPI, 0, []uint64{0, 2})
	even, err := b.a.Comm("even ranks", geven, world)
	b.ok(err)
	for r := uint32(0); r < 3; r++ {
		t := 1000 + 10*uint64(r)
		step := func(d uint64) uint64 { t += d; return t }
		b.enter(w[r], t, rmain)
		b.enter(w[r], step(5), rsend)
		b.send(w[r], step(1), (r+1)%3, world, 42+r, 1024*uint64(r+1))
		b.leave(w[r], step(2), rsend)
		b.enter(w[r], step(1), rrecv)
		b.recv(w[r], step(100), (r+2)%3, world, 42+(r+2)%3, 1024*uint64((r+2)%3+1))
		b.leave(w[r], step(1), rrecv)
		if r == 0 {
			b.enter(w[r], step(1), rsend)
			b.send(w[r], step(1), 1, even, 7, 8)
			b.leave(w[r], step(1), rsend)
		}
		if r == 2 {
			b.enter(w[r], step(1), rrecv)
			b.recv(w[r], step(50), 0, even, 7, 8)
			b.leave(w[r], step(1), rrecv)
		}
		b.enter(w[r], 1400, rbar)
		b.leave(w[r], 1500+uint64(r), rbar)
		b.leave(w[r], 1510+uint64(r), rmain)
	}
	b.ok(b.a.ClockOffset(1, 1000, 25, 0.5))
	b.ok(b.a.ClockOffset(2, 1000, -40, 0.5))
	b.ok(b.a.ClockProperties(1000000, 1000, 513))
}

// scenarioMPINonBlocking has four ranks with MPI_COMM_WORLD, MPI_COMM_SELF
// and a derived communicator per half, non-blocking sends and receives, a
// cancelled request, blocking and non-blocking collectives.
func scenarioMPINonBlocking(b *builder) {
	root := b.stn("cluster", "machine", NoParent)
	node := b.stn("node0", "node", root)
	var w []*EventWriter
	var ranks []LocationRef
	for r := 0; r < 4; r++ {
		p := b.lg(fmt.Sprintf("MPI Rank %d", r), node)
		w = append(w, b.loc("Master thread", p))
		ranks = append(ranks, w[r].Ref())
	}
	rmain := b.region("main", "", "", "nb.c", 1, 80, RoleFunction, ParadigmUser, 0)
	risend := b.region("MPI_Isend", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	rirecv := b.region("MPI_Irecv", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	rwait := b.region("MPI_Waitall", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	rallred := b.region("MPI_Allreduce", "", "", "", 0, 0, RoleCollAll2All, ParadigmMPI, 0)
	rbcast := b.region("MPI_Bcast", "", "", "", 0, 0, RoleCollOne2All, ParadigmMPI, 0)
	riallred := b.region("MPI_Iallreduce", "", "", "", 0, 0, RoleCollAll2All, ParadigmMPI, 0)
	rwait1 := b.region("MPI_Wait", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	world, err := b.a.MPICommWorld("MPI_COMM_WORLD", ranks)
	b.ok(err)
	_, err = b.a.MPICommSelf("MPI_COMM_SELF")
	b.ok(err)
	glow := b.group("", GroupTypeCommGroup, ParadigmMPI, 0, []uint64{0, 1})
	ghigh := b.group("", GroupTypeCommGroup, ParadigmMPI, 0, []uint64{2, 3})
	low, err := b.a.Comm("", glow, world)
	b.ok(err)
	high, err := b.a.Comm("", ghigh, world)
	b.ok(err)
	comms := []CommRef{low, low, high, high}
	cs := func(c CommRef) string { return fmt.Sprint(c) }
	u := func(v ...uint64) []uint64 { return v }
	for r := uint32(0); r < 4; r++ {
		t := 1000 + 10*uint64(r)
		step := func(d uint64) uint64 { t += d; return t }
		peer := r ^ 1 // partner in the low or high communicator: its rank there is r&1^1
		b.enter(w[r], t, rmain)
		b.enter(w[r], step(5), rirecv)
		b.other(w[r], "MPI_IRECV_REQUEST", step(1), w[r].MpiIrecvRequest(t, 100+uint64(r)), u(100+uint64(r)), "Request", fmt.Sprint(100+r))
		b.leave(w[r], step(1), rirecv)
		b.enter(w[r], step(1), risend)
		b.other(w[r], "MPI_ISEND", step(1), w[r].MpiIsend(t, peer&1, comms[r], 5, 64, 200+uint64(r)),
			u(uint64(peer&1), uint64(comms[r]), 5, 64, 200+uint64(r)), "Receiver", fmt.Sprint(peer&1), "Communicator", cs(comms[r]), "Tag", "5", "Length", "64", "Request", fmt.Sprint(200+r))
		b.leave(w[r], step(1), risend)
		b.enter(w[r], step(1), rwait)
		b.other(w[r], "MPI_ISEND_COMPLETE", step(20), w[r].MpiIsendComplete(t, 200+uint64(r)), u(200+uint64(r)), "Request", fmt.Sprint(200+r))
		b.other(w[r], "MPI_IRECV", step(1), w[r].MpiIrecv(t, peer&1, comms[r], 5, 64, 100+uint64(r)),
			u(uint64(peer&1), uint64(comms[r]), 5, 64, 100+uint64(r)), "Sender", fmt.Sprint(peer&1), "Communicator", cs(comms[r]), "Tag", "5", "Length", "64", "Request", fmt.Sprint(100+r))
		b.leave(w[r], step(1), rwait)
		// A cancelled receive.
		if r == 3 {
			b.other(w[r], "MPI_IRECV_REQUEST", step(1), w[r].MpiIrecvRequest(t, 300), u(300), "Request", "300")
			b.other(w[r], "MPI_REQUEST_TEST", step(1), w[r].MpiRequestTest(t, 300), u(300), "Request", "300")
			b.other(w[r], "MPI_REQUEST_CANCELLED", step(1), w[r].MpiRequestCancelled(t, 300), u(300), "Request", "300")
		}
		b.enter(w[r], 1300, rallred)
		b.other(w[r], "MPI_COLLECTIVE_BEGIN", 1300, w[r].MpiCollectiveBegin(1300), nil)
		b.other(w[r], "MPI_COLLECTIVE_END", 1350+uint64(r), w[r].MpiCollectiveEnd(1350+uint64(r), CollAllreduce, world, NoRoot, 8, 8),
			u(uint64(CollAllreduce), uint64(world), uint64(NoRoot), 8, 8), "Operation", "ALLREDUCE", "Communicator", cs(world), "Root", "UNDEFINED", "Sent", "8", "Received", "8")
		b.leave(w[r], 1351+uint64(r), rallred)
		b.enter(w[r], 1400, rbcast)
		b.other(w[r], "MPI_COLLECTIVE_BEGIN", 1400, w[r].MpiCollectiveBegin(1400), nil)
		sent, recv := uint64(0), uint64(4096)
		if r == 2 {
			sent, recv = 4096, 0
		}
		b.other(w[r], "MPI_COLLECTIVE_END", 1450, w[r].MpiCollectiveEnd(1450, CollBcast, world, 2, sent, recv),
			u(uint64(CollBcast), uint64(world), 2, sent, recv), "Operation", "BCAST", "Communicator", cs(world), "Root", "2", "Sent", fmt.Sprint(sent), "Received", fmt.Sprint(recv))
		b.leave(w[r], 1451, rbcast)
		b.enter(w[r], 1500, riallred)
		b.other(w[r], "NON_BLOCKING_COLLECTIVE_REQUEST", 1501, w[r].NonBlockingCollectiveRequest(1501, 400+uint64(r)), u(400+uint64(r)), "Request", fmt.Sprint(400+r))
		b.leave(w[r], 1502, riallred)
		b.enter(w[r], 1600, rwait1)
		b.other(w[r], "NON_BLOCKING_COLLECTIVE_COMPLETE", 1650, w[r].NonBlockingCollectiveComplete(1650, CollAllreduce, comms[r], NoRoot, 16, 16, 400+uint64(r)),
			u(uint64(CollAllreduce), uint64(comms[r]), uint64(NoRoot), 16, 16, 400+uint64(r)), "Operation", "ALLREDUCE", "Communicator", cs(comms[r]), "Root", "UNDEFINED", "Sent", "16", "Received", "16", "Request", fmt.Sprint(400+r))
		b.leave(w[r], 1651, rwait1)
		b.leave(w[r], 1700+uint64(r), rmain)
	}
	b.ok(b.a.ClockProperties(1000000, 1000, 704))
}

// scenarioInterComm has an inter-communicator between ranks {0, 1} and
// {2, 3}: rank 0 of one group sends to rank 1 of the other (world rank 3),
// which names the sender by its rank in the remote group.
func scenarioInterComm(b *builder) {
	node := b.stn("node0", "node", NoParent)
	var w []*EventWriter
	var ranks []LocationRef
	for r := 0; r < 4; r++ {
		w = append(w, b.loc("Master thread", b.lg(fmt.Sprintf("MPI Rank %d", r), node)))
		ranks = append(ranks, w[r].Ref())
	}
	rsend := b.region("MPI_Send", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	rrecv := b.region("MPI_Recv", "", "", "", 0, 0, RolePoint2Point, ParadigmMPI, 0)
	world, err := b.a.MPICommWorld("MPI_COMM_WORLD", ranks)
	b.ok(err)
	glow := b.group("", GroupTypeCommGroup, ParadigmMPI, 0, []uint64{0, 1})
	ghigh := b.group("", GroupTypeCommGroup, ParadigmMPI, 0, []uint64{2, 3})
	inter, err := b.a.InterComm("halves", glow, ghigh, world)
	b.ok(err)
	b.enter(w[0], 10, rsend)
	b.send(w[0], 11, 1, inter, 9, 1<<20)
	b.leave(w[0], 12, rsend)
	b.enter(w[3], 10, rrecv)
	b.recv(w[3], 20, 0, inter, 9, 1<<20)
	b.leave(w[3], 21, rrecv)
	b.ok(b.a.ClockProperties(1000000000, 10, 12))
}

func scenarioMultichunk(b *builder) {
	node := b.stn("localhost", "machine", NoParent)
	proc := b.lg("Process 0", node)
	w := []*EventWriter{b.loc("Master thread", proc), b.loc("Worker thread", proc)}
	for i := 0; i < 300; i++ {
		b.region(fmt.Sprintf("f%d", i), "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	}
	m0 := b.member("PAPI_TOT_CYC", "", "#", MetricTypePAPI, MetricAccumulatedStart, TypeUint64, BaseDecimal, 0)
	m1 := b.member("PAPI_L2_DCM", "", "#", MetricTypePAPI, MetricAccumulatedStart, TypeUint64, BaseDecimal, 0)
	c := b.class([]MetricMemberRef{m0, m1}, MetricSynchronous, RecorderCPU)
	t := [2]uint64{1000000, 1000000}
	var cnt [2]uint64
	var stack [2][]RegionRef
	r := lcg(11)
	for i := 0; i < 150000; i++ {
		for l := 0; l < 2; l++ {
			t[l] += r.next() % 6
			if i%100 == 99 {
				cnt[l] += r.next()
				b.metric(w[l], t[l], c, Uint64Value(cnt[l]), Uint64Value(cnt[l]/3))
			} else if len(stack[l]) == 0 || (len(stack[l]) < 16 && r.next()%2 == 0) {
				reg := RegionRef(r.next() % 300)
				stack[l] = append(stack[l], reg)
				b.enter(w[l], t[l], reg)
			} else {
				top := stack[l][len(stack[l])-1]
				stack[l] = stack[l][:len(stack[l])-1]
				b.leave(w[l], t[l], top)
			}
		}
	}
	for l := 0; l < 2; l++ {
		for len(stack[l]) > 0 {
			t[l]++
			top := stack[l][len(stack[l])-1]
			stack[l] = stack[l][:len(stack[l])-1]
			b.leave(w[l], t[l], top)
		}
	}
	end := max(t[0], t[1])
	b.ok(b.a.ClockProperties(1000000000, 1000000, end-1000000+1))
}

func scenarioManyDefs(b *builder) {
	node := b.stn("localhost", "machine", NoParent)
	proc := b.lg("Process 0", node)
	w := b.loc("Master thread", proc)
	r := lcg(5)
	pad := strings.Repeat("x", 44)
	for i := 0; i < 20000; i++ {
		p := r.next() % 40
		name := fmt.Sprintf("region_%d_%s", i, pad[:p])
		file := fmt.Sprintf("file%d.c", i%97)
		end := uint32(i) + uint32(r.next()%100)
		b.region(name, "", "", file, uint32(i), end, RoleFunction, ParadigmUser, 0)
	}
	rlong := b.region(strings.Repeat("L", 300), "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	b.region(strings.Repeat("L", 250), "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	b.region(strings.Repeat("M", 251), "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	mem := make([]uint64, 100)
	for i := range mem {
		mem[i] = uint64(20000 - i)
	}
	b.group("big region group", GroupTypeRegions, ParadigmUnknown, 0, mem)
	b.group("small", GroupTypeRegions, ParadigmUnknown, 0, mem[:3])
	for i := 0; i < 26; i++ {
		mem[i] = uint64(i)
	}
	b.group("26 small members", GroupTypeRegions, ParadigmUnknown, 0, mem[:26])
	b.enter(w, 10, 0)
	b.enter(w, 11, rlong)
	b.leave(w, 12, rlong)
	b.leave(w, 13, 0)
	b.ok(b.a.ClockProperties(1000, 10, 4))
}

func scenarioAttic(b *builder) {
	node := b.stn("localhost", "machine", NoParent)
	proc := b.lg("Process 0", node)
	b.loc("Master thread", proc)
	for role := RegionRole(0); role <= RoleFileIOMetadata; role++ {
		for p := Paradigm(0); p <= ParadigmKokkos; p++ {
			for fl := RegionFlags(0); fl < 4; fl++ {
				b.region("r", "", "", "", 0, 0, role, p, fl)
			}
		}
	}
	for typ := GroupType(0); typ <= GroupTypeCommSelf; typ++ {
		for p := Paradigm(0); p <= ParadigmKokkos; p++ {
			for fl := GroupFlags(0); fl < 2; fl++ {
				if (typ != GroupTypeCommLocations && typ != GroupTypeCommSelf) || fl == 0 {
					b.group("g", typ, p, fl, []uint64{0})
				}
			}
		}
	}
	b.ok(b.a.ClockProperties(1, 0, 0))
}
