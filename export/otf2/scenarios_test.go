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
	{"multichunk", scenarioMultichunk, Options{Creator: creator, Description: "multi-chunk", EventChunkSize: 256 << 10}, ""},
	{"manydefs", scenarioManyDefs, Options{Creator: creator, EventChunkSize: 256 << 10, DefChunkSize: 256 << 10}, ""},
	{"attic", scenarioAttic, Options{Creator: creator}, "python3-otf2 rejects groups of type UNKNOWN"},
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
