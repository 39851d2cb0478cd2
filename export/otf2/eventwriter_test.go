package otf2

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// opsArchive is a small archive for behaviour tests: two locations, 300
// regions, MPI_COMM_WORLD, a 1-member and a 30-member metric class.
type opsArchive struct {
	*builder
	w       []*EventWriter
	world   CommRef
	c1, c30 MetricRef
	dir     string
	chunk   int
}

func newOpsArchive(t testing.TB, chunk int) *opsArchive {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	a, err := create(dir, Options{EventChunkSize: chunk, DefChunkSize: 4096}, 512)
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{t: t, a: a, events: map[LocationRef][]recordedEvent{}}
	node := b.stn("node", "machine", NoParent)
	proc := b.lg("process", node)
	o := &opsArchive{builder: b, dir: dir, chunk: chunk}
	o.w = []*EventWriter{b.loc("thread 0", proc), b.loc("thread 1", proc)}
	for i := 0; i < 300; i++ {
		b.region(fmt.Sprintf("r%d", i), "", "", "", 0, 0, RoleFunction, ParadigmUser, 0)
	}
	world, err := a.MPICommWorld("MPI_COMM_WORLD", []LocationRef{0, 1})
	b.ok(err)
	o.world = world
	m := b.member("m", "", "#", MetricTypeOther, MetricAbsolutePoint, TypeUint64, BaseDecimal, 0)
	o.c1 = b.class([]MetricMemberRef{m}, MetricAsynchronous, RecorderCPU)
	var ms []MetricMemberRef
	for i := 0; i < 30; i++ {
		ms = append(ms, m)
	}
	o.c30 = b.class(ms, MetricAsynchronous, RecorderCPU)
	b.ok(a.ClockProperties(1, 0, 1))
	return o
}

// run interprets data as a sequence of events on the two locations.
func (o *opsArchive) run(data []byte) {
	var t [2]uint64
	for i := 0; i+2 < len(data); i += 3 {
		op, arg, dt := data[i], data[i+1], data[i+2]
		l := int(op & 1)
		switch {
		case dt < 128: // same time: no TIMESTAMP record
		case dt < 250:
			t[l] += uint64(dt - 127)
		default: // large jumps: long timestamps
			t[l] += 1 << (dt - 250 + 30)
		}
		w := o.w[l]
		switch (op >> 1) % 11 {
		case 0:
			o.enter(w, t[l], RegionRef(uint16(arg)*3%300))
		case 1:
			o.leave(w, t[l], RegionRef(arg))
		case 2:
			o.send(w, t[l], uint32(arg)<<(arg%25), o.world, uint32(arg)*7919, uint64(arg)<<(arg%57))
		case 3:
			o.recv(w, t[l], uint32(arg&1), o.world, ^uint32(0)-uint32(arg), ^uint64(0)-uint64(arg))
		case 4:
			o.metric(w, t[l], o.c1, MetricValue(uint64(arg)<<(arg%64)))
		case 5:
			v := make([]MetricValue, 30)
			for k := range v {
				v[k] = MetricValue(uint64(arg+byte(k)) << (k * 2))
			}
			o.metric(w, t[l], o.c30, v...)
		case 6:
			peer, tag, n, req := uint32(arg)<<(arg%25), uint32(arg)*31, uint64(arg)<<(arg%57), ^uint64(0)-uint64(arg)<<(arg%60)
			o.other(w, "MPI_ISEND", t[l], w.MpiIsend(t[l], peer, o.world, tag, n, req), []uint64{uint64(peer), uint64(o.world), uint64(tag), n, req})
		case 7:
			o.other(w, "MPI_IRECV", t[l], w.MpiIrecv(t[l], uint32(arg&1), o.world, 3, uint64(arg), uint64(arg)<<40), []uint64{uint64(arg & 1), uint64(o.world), 3, uint64(arg), uint64(arg) << 40})
		case 8:
			req := uint64(arg) << (arg % 64)
			kinds := []string{"MPI_ISEND_COMPLETE", "MPI_IRECV_REQUEST", "MPI_REQUEST_TEST", "MPI_REQUEST_CANCELLED"}
			calls := []func(uint64, uint64) error{w.MpiIsendComplete, w.MpiIrecvRequest, w.MpiRequestTest, w.MpiRequestCancelled}
			o.other(w, kinds[arg%4], t[l], calls[arg%4](t[l], req), []uint64{req})
		case 9:
			o.other(w, "MPI_COLLECTIVE_BEGIN", t[l], w.MpiCollectiveBegin(t[l]), nil)
			root := uint32(arg & 1)
			if arg&2 != 0 {
				root = NoRoot
			}
			op := CollectiveOp(arg % 23)
			o.other(w, "MPI_COLLECTIVE_END", t[l], w.MpiCollectiveEnd(t[l], op, o.world, root, uint64(arg)<<(arg%64), ^uint64(arg)),
				[]uint64{uint64(op), uint64(o.world), uint64(root), uint64(arg) << (arg % 64), ^uint64(arg)})
		case 10:
			req := uint64(arg) << (arg % 64)
			o.other(w, "NON_BLOCKING_COLLECTIVE_REQUEST", t[l], w.NonBlockingCollectiveRequest(t[l], req), []uint64{req})
			o.other(w, "NON_BLOCKING_COLLECTIVE_COMPLETE", t[l], w.NonBlockingCollectiveComplete(t[l], CollAllreduce, o.world, NoRoot, ^uint64(0), 0, req),
				[]uint64{uint64(CollAllreduce), uint64(o.world), uint64(NoRoot), ^uint64(0), 0, req})
		}
		if op&0x80 != 0 && t[l] > 0 {
			// A decreasing time must be refused and write nothing.
			if err := w.Enter(t[l]-1, 0); err == nil {
				o.t.Fatalf("Enter at %d after %d succeeded", t[l]-1, t[l])
			}
		}
	}
}

// check closes the archive and decodes each event file.
func (o *opsArchive) check() {
	o.t.Helper()
	o.close()
	for i := range o.w {
		data, err := os.ReadFile(filepath.Join(o.dir, "traces", fmt.Sprintf("%d.evt", i)))
		if err != nil {
			o.t.Fatal(err)
		}
		got, err := decodeEventFile(data, o.chunk)
		if err != nil {
			o.t.Fatalf("location %d: %v", i, err)
		}
		want := o.events[LocationRef(i)]
		if len(got) != len(want) {
			o.t.Fatalf("location %d: decoded %d events, wrote %d", i, len(got), len(want))
		}
		for k := range want {
			w := decodedEvent{kind: want[k].kind, time: want[k].time, ref: want[k].ref, values: want[k].values}
			if !reflect.DeepEqual(got[k], w) {
				o.t.Fatalf("location %d event %d: decoded %+v, wrote %+v", i, k, got[k], w)
			}
		}
		if n := o.a.locations[i].events; n != uint64(len(want)) {
			o.t.Errorf("location %d: definition counts %d events, wrote %d", i, n, len(want))
		}
	}
}

// TestChunkBoundaries writes random event sequences with small chunks, so
// that every record kind lands at chunk ends, and decodes them back.
func TestChunkBoundaries(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, chunk := range []int{512, 777, 4096} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			data := make([]byte, 30000)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			o := newOpsArchive(t, chunk)
			o.run(data)
			o.check()
		})
	}
}

// FuzzEventWriter drives the event writer with arbitrary event sequences on
// 512-byte chunks; the files must decode to exactly the events written.
func FuzzEventWriter(f *testing.F) {
	f.Add([]byte{0, 1, 200, 2, 2, 0, 4, 3, 255, 6, 9, 130, 8, 7, 7, 10, 5, 129})
	f.Add(bytes.Repeat([]byte{10, 255, 128}, 40))
	f.Add(bytes.Repeat([]byte{0, 0, 0, 3, 1, 0}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 30000 {
			return
		}
		o := newOpsArchive(t, 512)
		o.run(data)
		o.check()
	})
}

func TestDecreasingTimestamp(t *testing.T) {
	o := newOpsArchive(t, 512)
	w := o.w[1]
	o.enter(w, 100, 1)
	err := w.Enter(99, 2)
	if err == nil {
		t.Fatal("decreasing timestamp accepted")
	}
	for _, s := range []string{`location 1 "thread 1"`, "99", "100"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	o.enter(w, 100, 2) // equal time is fine
	o.leave(w, 101, 2)
	o.check()
	data, err := os.ReadFile(filepath.Join(o.dir, "traces", "1.evt"))
	if err != nil {
		t.Fatal(err)
	}
	// 100 is written once for both events at that time.
	want := []byte{
		timestampID, 100, 0, 0, 0, 0, 0, 0, 0, eventEnter, 1, 1, eventEnter, 1, 2,
		timestampID, 101, 0, 0, 0, 0, 0, 0, 0, eventLeave, 1, 2,
		endOfFile, endOfBuffer,
	}
	if !bytes.Equal(data[chunkHeaderLen:], want) {
		t.Errorf("events % x, want % x", data[chunkHeaderLen:], want)
	}
}

func TestUndefinedReferences(t *testing.T) {
	o := newOpsArchive(t, 512)
	w := o.w[0]
	for _, c := range []struct {
		err  error
		want string
	}{
		{w.Enter(1, 300), "region 300 is not defined"},
		{w.Leave(1, 1000), "region 1000 is not defined"},
		{w.MpiSend(1, 0, 5, 0, 0), "communicator 5 is not defined"},
		{w.MpiRecv(1, 0, 1, 0, 0), "communicator 1 is not defined"},
		{w.Metric(1, 2, []MetricValue{1}), "metric class 2 is not defined"},
		{w.Metric(1, o.c1, []MetricValue{1, 2}), "metric class 0 has 1 members, got 2 values"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || !strings.Contains(c.err.Error(), `"thread 0"`) {
			t.Errorf("got error %v, want one naming the location and %q", c.err, c.want)
		}
	}
	// A region defined after the writer was opened is usable.
	r, err := o.a.Region(RegionDef{Name: "late"})
	if err != nil {
		t.Fatal(err)
	}
	o.enter(w, 2, r)
	o.check()
}

func TestClosedWriter(t *testing.T) {
	o := newOpsArchive(t, 512)
	w := o.w[0]
	o.enter(w, 5, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Leave(6, 0); err == nil {
		t.Error("Leave on a closed writer succeeded")
	}
	if w.Events() != 1 {
		t.Errorf("Events() = %d, want 1", w.Events())
	}
	o.check()
	if first, last, ok := o.a.TimeRange(); !ok || first != 5 || last != 5 {
		t.Errorf("TimeRange = %d, %d, %v", first, last, ok)
	}
}

func TestEmptyLocation(t *testing.T) {
	o := newOpsArchive(t, 512)
	o.check()
	data, err := os.ReadFile(filepath.Join(o.dir, "traces", "0.evt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{chunkHeader, littleEndianMarker, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, endOfFile, endOfBuffer}
	if !bytes.Equal(data, want) {
		t.Errorf("empty event file % x, want % x", data, want)
	}
	if _, _, ok := o.a.TimeRange(); ok {
		t.Error("TimeRange of an archive without events is ok")
	}
}

// TestTerminatorChunk covers the corner libotf2 crashes in: the last record
// leaves only the reserved byte, so END_OF_FILE goes into a chunk of its
// own. Readers accept that layout.
func TestTerminatorChunk(t *testing.T) {
	golden := goldenFiles(t, "single")
	evt := golden["traces/0.evt"]
	const size = DefaultEventChunkSize
	c := chunkedFile{path: filepath.Join(t.TempDir(), "0.evt"), buf: make([]byte, size), countEvents: true}
	copy(c.buf, evt[:len(evt)-2]) // records without END_OF_FILE
	c.pos = size - 1              // END_OF_CHUNK bytes up to the reserved one
	if err := createEmpty(c.path); err != nil {
		t.Fatal(err)
	}
	if err := c.finish(12); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	tail := []byte{chunkHeader, littleEndianMarker, 13, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, endOfFile, endOfBuffer}
	if len(data) != size+len(tail) || !bytes.Equal(data[size:], tail) || binary.LittleEndian.Uint64(data[10:]) != 12 {
		t.Fatalf("file of %d bytes ends % x", len(data), data[size:])
	}
	if evs, err := decodeEventFile(data, size); err != nil || len(evs) != 12 {
		t.Fatalf("decoded %d events: %v", len(evs), err)
	}
	tracetest.RequireTool(t, "otf2-print", otf2print.DebianPackage)
	dir := t.TempDir()
	for name, b := range golden {
		if name == "traces/0.evt" {
			b = data
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	anchor := filepath.Join(dir, "traces.otf2")
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	if evs, err := otf2print.Events(anchor); err != nil || len(evs) != 12 {
		t.Fatalf("otf2-print: %d events, %v", len(evs), err)
	}
}

// TestEventsDoNotAllocate: the event methods write into the chunk buffer
// (10,000 rounds fit in one 1 MiB chunk, so no chunk is flushed here).
func TestEventsDoNotAllocate(t *testing.T) {
	o := newOpsArchive(t, DefaultEventChunkSize)
	w := o.w[0]
	vals := []MetricValue{1}
	ts := uint64(0)
	_ = w.Enter(ts, 3) // takes the chunk buffer
	allocs := testing.AllocsPerRun(10000, func() {
		ts++
		_ = w.Enter(ts, 3)
		_ = w.MpiSend(ts, 1, o.world, 7, 64)
		_ = w.Metric(ts, o.c1, vals)
		_ = w.Leave(ts+1, 3)
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per round of 4 events", allocs)
	}
	if w.file.written != 0 {
		t.Errorf("a chunk was flushed (%d bytes): the test measures flushes too", w.file.written)
	}
}

// TestMemoryBounded: many events through several open writers allocate
// about one chunk per writer, however many chunks the files get.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4 x 12 MB")
	}
	const chunk = MinChunkSize
	dir := filepath.Join(t.TempDir(), "trace")
	a, err := Create(dir, Options{EventChunkSize: chunk})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	node, _ := a.SystemTreeNode("n", "machine", NoParent)
	proc, _ := a.LocationGroup("p", node)
	r, _ := a.Region(RegionDef{Name: "f"})
	var ws []*EventWriter
	for i := 0; i < 4; i++ {
		w, err := a.Location(fmt.Sprint("thread ", i), proc)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const events = 1 << 20
	for i := uint64(0); i < events; i += 2 {
		for _, w := range ws {
			if err := w.Enter(i, r); err != nil {
				t.Fatal(err)
			}
			if err := w.Leave(i+1, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	// 4 chunk buffers plus small change per chunk flush (file open).
	if limit := uint64(4*chunk + 256<<10); allocated > limit {
		t.Errorf("writing %d events on 4 writers allocated %d bytes, want at most %d", 4*events, allocated, limit)
	}
	fi, err := os.Stat(filepath.Join(dir, "traces", "0.evt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 40*chunk {
		t.Fatalf("event file has %d bytes, want many chunks", fi.Size())
	}
}
