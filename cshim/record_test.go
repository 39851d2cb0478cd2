package cshim

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/clock"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// startRuntime starts a Runtime writing into a temporary directory, with
// the HMB_* variables env, which are restored after the test.
func startRuntime(t testing.TB, env ...string) *Runtime {
	t.Helper()
	env = append([]string{"HMB_OUTPUT=" + t.TempDir(), "HMB_NAME=test"}, env...)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	rt := &Runtime{}
	if _, err := rt.Start(env, clock.Best().String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// readEvents reads a location's events back as text, one per event.
func readEvents(t *testing.T, path, loc string) []string {
	t.Helper()
	f := tracetest.Open(t, path)
	for _, l := range f.Locations {
		if l.Name != loc {
			continue
		}
		var out []string
		var e tracefile.Event
		it := f.Events(l.ID)
		for it.Next(&e) {
			switch e.Kind {
			case encode.KindEnter, encode.KindLeave:
				out = append(out, fmt.Sprintf("%v %s", e.Kind, f.RegionName(e.Region)))
			default:
				out = append(out, fmt.Sprintf("%v %d %d %d", e.Kind, e.Peer, e.Tag, e.Bytes))
			}
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		return out
	}
	t.Fatalf("%s: no location %q", path, loc)
	return nil
}

func TestReplay(t *testing.T) {
	rt := startRuntime(t)
	a := uint64(rt.Region("a", "a.c", 3))
	b := uint64(rt.Region("b", "", 0))
	th := rt.Thread(rt.NewThread(42, ""))
	t0 := rt.Measurement().Now()
	recs := []Record{
		MakeRecord(KindEnter, t0, a),
		MakeRecord(KindEnter, t0+100, b),
		MakeRecord(KindSend, t0+200, 7), {Time: 3, Word: 100},
		MakeRecord(KindRecv, t0+300, 8), {Time: 4, Word: 1 << 40},
		MakeRecord(KindLeave, t0+400, b),
		MakeRecord(KindFuncEnter, t0+500, 0x10), // no symbol: named by its address
		MakeRecord(KindFuncExit, t0+600, 0x10),
		{Time: t0 + 700, Word: 9 << kindShift}, // no such kind
		MakeRecord(KindLeave, t0+800, a),
		MakeRecord(KindSend, t0+900, 1), // its second record is missing
	}
	if bad := th.Replay(recs); bad != 2 {
		t.Errorf("Replay: %d malformed, want 2", bad)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, rt.Measurement().Path(), "thread 42")
	want := []string{"ENTER a", "ENTER b", "SEND 3 7 100", "RECV 4 8 1099511627776", "LEAVE b", "ENTER 0x10", "LEAVE 0x10", "LEAVE a"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
	f := tracetest.Open(t, rt.Measurement().Path())
	if r := f.Regions[a-1]; r.Name != "a" || r.File != "a.c" || r.Line != 3 {
		t.Errorf("region a: %+v", r)
	}
}

// TestReplayFunctionCache replays functions whose addresses share a slot
// of the thread's cache.
func TestReplayFunctionCache(t *testing.T) {
	rt := startRuntime(t)
	th := rt.Thread(rt.NewThread(7, "cache"))
	t0 := rt.Measurement().Now()
	const x, y = 0x10, 0x10 + funcCacheSize<<4 // same slot
	var recs []Record
	for i := uint64(0); i < 3; i++ {
		recs = append(recs,
			MakeRecord(KindFuncEnter, t0+40*i, x),
			MakeRecord(KindFuncEnter, t0+40*i+10, y),
			MakeRecord(KindFuncExit, t0+40*i+20, y),
			MakeRecord(KindFuncExit, t0+40*i+30, x))
	}
	if bad := th.Replay(recs); bad != 0 {
		t.Errorf("Replay: %d malformed", bad)
	}
	rt.Close()
	got := strings.Join(readEvents(t, rt.Measurement().Path(), "cache"), "|")
	want := strings.Repeat("|ENTER 0x10|ENTER 0x2010|LEAVE 0x2010|LEAVE 0x10", 3)[1:]
	if got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}

func TestRecordLayout(t *testing.T) {
	r := MakeRecord(KindFuncExit, 99, 0x7fff_1234_5678)
	if r.Kind() != KindFuncExit || r.Payload() != 0x7fff_1234_5678 || r.Time != 99 {
		t.Errorf("%+v: kind %d payload %#x", r, r.Kind(), r.Payload())
	}
	// The payload keeps its low 60 bits; the kind cannot be overwritten.
	if r := MakeRecord(KindEnter, 0, ^uint64(0)); r.Kind() != KindEnter || r.Payload() != payloadMask {
		t.Errorf("%+v", r)
	}
}

func TestProbes(t *testing.T) {
	recs := []Record{
		MakeRecord(KindEnter, 1, 1),
		MakeRecord(KindSend, 2, 0), {Time: 1, Word: 8}, // one probe, two records
		MakeRecord(KindLeave, 3, 1),
		MakeRecord(KindRecv, 4, 0), // cut short: still one probe
	}
	if n := Probes(recs); n != 4 {
		t.Errorf("Probes = %d, want 4", n)
	}
}

// recordsFromBytes reads 16-byte records as the C side lays them out.
func recordsFromBytes(data []byte) []Record {
	recs := make([]Record, len(data)/16)
	for i := range recs {
		recs[i] = Record{binary.LittleEndian.Uint64(data[16*i:]), binary.LittleEndian.Uint64(data[16*i+8:])}
	}
	return recs
}

func recordsToBytes(recs ...Record) []byte {
	var b []byte
	for _, r := range recs {
		b = binary.LittleEndian.AppendUint64(b, r.Time)
		b = binary.LittleEndian.AppendUint64(b, r.Word)
	}
	return b
}

// malformedRecords counts what Replay cannot decode, independently.
func malformedRecords(recs []Record) (n uint64) {
	for i := 0; i < len(recs); i++ {
		switch recs[i].Kind() {
		case KindEnter, KindLeave, KindFuncEnter, KindFuncExit:
		case KindSend, KindRecv, KindColl:
			if i == len(recs)-1 {
				n++
			}
			i++
		default:
			n++
		}
	}
	return n
}

func FuzzReplay(f *testing.F) {
	f.Add(recordsToBytes(MakeRecord(KindEnter, 10, 1), MakeRecord(KindLeave, 20, 1)))
	f.Add(recordsToBytes(MakeRecord(KindEnter, 10, 1), MakeRecord(KindSend, 15, 3), Record{2, 64}, MakeRecord(KindLeave, 20, 1)))
	f.Add(recordsToBytes(MakeRecord(KindLeave, 30, 2), MakeRecord(KindEnter, 10, 7), MakeRecord(KindRecv, 5, 1)))
	f.Add(recordsToBytes(MakeRecord(KindFuncEnter, 1, 0x10), MakeRecord(KindFuncExit, 2, 0x20), Record{3, 15 << kindShift}))
	f.Add(recordsToBytes(MakeRecord(KindColl, 40, 2), Record{0, 4096}, MakeRecord(KindLeave, 50, 2)))
	rt := startRuntime(f, "HMB_BUFFER_SIZE=256K", "HMB_BIN_SIZE=1K")
	rt.Region("one", "", 0)
	rt.Region("two", "", 0)
	th := rt.Thread(rt.NewThread(1, "fuzz"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := recordsFromBytes(data)
		if got, want := th.Replay(recs), malformedRecords(recs); got != want {
			t.Fatalf("Replay: %d malformed, want %d", got, want)
		}
	})
}

// BenchmarkReplay measures the Go side of a C probe: the replay of a
// staged batch of two nested calls into a location, per event, with the
// batch hot in the cache as the C side leaves it (writing its records is
// part of the figure, about half a nanosecond). The C side adds its clock
// read and a 16-byte store. Each measurement takes 2M events, so that its
// buffer never fills.
func BenchmarkReplay(b *testing.B) {
	const perMeasurement = 2 << 20
	recs := make([]Record, 4096)
	var rt *Runtime
	var th *Thread
	var ra, rb uint64
	n := 0
	rotate := func() {
		b.StopTimer()
		if rt != nil {
			rt.Close()
			if st := rt.Measurement().Stats(); st.Dropped() != 0 {
				b.Fatalf("%d events dropped: the benchmark measured reductions", st.Dropped())
			}
		}
		rt = &Runtime{}
		if _, err := rt.Start([]string{"HMB_OUTPUT=" + b.TempDir(), "HMB_BUFFER_SIZE=16M"}, clock.Best().String()); err != nil {
			b.Fatal(err)
		}
		ra, rb = uint64(rt.Region("outer", "", 0)), uint64(rt.Region("inner", "", 0))
		th = rt.Thread(rt.NewThread(1, ""))
		n = 0
		b.StartTimer()
	}
	rotate()
	t := clock.Now()
	for i := 0; i < b.N; i++ {
		if n += len(recs); n > perMeasurement {
			rotate()
		}
		for j := 0; j < len(recs); j += 4 {
			recs[j] = MakeRecord(KindEnter, t, ra)
			recs[j+1] = MakeRecord(KindEnter, t+25, rb)
			recs[j+2] = MakeRecord(KindLeave, t+50, rb)
			recs[j+3] = MakeRecord(KindLeave, t+75, ra)
			t += 100
		}
		th.Replay(recs)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/event")
	b.ReportMetric(0, "ns/op")
	rt.Close()
}

// BenchmarkReplayMPI measures the replay of staged MPI request records
// (an Isend and its completion inside a region, KindMPI records of four
// words each), the path of the records the C probes cannot write in place:
// per event, the enter and leave included.
func BenchmarkReplayMPI(b *testing.B) {
	const perMeasurement = 1 << 20
	var recs []Record
	var rt *Runtime
	var th *Thread
	var ra uint64
	n := 0
	rotate := func() {
		b.StopTimer()
		if rt != nil {
			rt.Close()
			if st := rt.Measurement().Stats(); st.Dropped() != 0 {
				b.Fatalf("%d events dropped: the benchmark measured reductions", st.Dropped())
			}
		}
		rt = &Runtime{}
		if _, err := rt.Start([]string{"HMB_OUTPUT=" + b.TempDir(), "HMB_BUFFER_SIZE=16M"}, clock.Best().String()); err != nil {
			b.Fatal(err)
		}
		ra = uint64(rt.Region("MPI_Isend", "", 0))
		th = rt.Thread(rt.NewThread(1, ""))
		n = 0
		b.StartTimer()
	}
	rotate()
	const batch = 64 // of an enter, two MPI records and a leave
	t := clock.Now()
	req := uint64(0)
	for i := 0; i < b.N; i++ {
		if n += 4 * batch; n > perMeasurement {
			rotate()
		}
		recs = recs[:0]
		for j := 0; j < batch; j++ {
			req++
			isend := MakeMPIRecord(t+10, encode.Record{Kind: encode.KindIsend, Peer: 1, PeerRank: true, Tag: 7, Bytes: 4096, Request: req})
			done := MakeMPIRecord(t+20, encode.Record{Kind: encode.KindIsendComplete, Request: req})
			recs = append(recs, MakeRecord(KindEnter, t, ra))
			recs = append(recs, isend[:]...)
			recs = append(recs, done[:]...)
			recs = append(recs, MakeRecord(KindLeave, t+30, ra))
			t += 40
		}
		if bad := th.Replay(recs); bad != 0 {
			b.Fatalf("%d malformed records", bad)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4*batch), "ns/event")
	b.ReportMetric(0, "ns/op")
	rt.Close()
}

func TestRuntimeStart(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HMB_OUTPUT", dir)
	t.Setenv("HMB_BUFFER_SIZE", "")
	var rt Runtime
	_, err := rt.Start([]string{"HMB_OUTPUT=" + dir, "HMB_BUFFER_SIZE=lots"}, clock.Best().String())
	if err == nil || !strings.Contains(err.Error(), `HMB_BUFFER_SIZE="lots"`) {
		t.Fatalf("Start with a bad size: %v", err)
	}
	if rt.NewThread(1, "") != NoThread || rt.Region("x", "", 0) != 0 || rt.Thread(0) != nil {
		t.Error("a Runtime that failed to start hands out threads or regions")
	}
	// A failed start may be retried, a successful one not.
	enabled, err := rt.Start([]string{"HMB_OUTPUT=" + dir}, clock.Best().String())
	if err != nil || !enabled {
		t.Fatalf("Start: %v, %v", enabled, err)
	}
	if os.Getenv("HMB_BUFFER_SIZE") != "" {
		t.Errorf("HMB_BUFFER_SIZE=%q is still set: the C environment did not have it", os.Getenv("HMB_BUFFER_SIZE"))
	}
	if _, err := rt.Start([]string{"HMB_OUTPUT=" + dir}, clock.Best().String()); err == nil {
		t.Error("a second Start succeeded")
	}
	if th := rt.Thread(rt.NewThread(5, "named")); th == nil || th.Location().Name() != "named" {
		t.Errorf("NewThread(5, named): %v", th)
	}
	if rt.Thread(1) != nil || rt.Thread(NoThread) != nil {
		t.Error("Thread of an index NewThread did not return")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if rt.NewThread(6, "") != NoThread {
		t.Error("NewThread after Close")
	}
}

func TestRuntimeDisabled(t *testing.T) {
	dir := t.TempDir()
	rt := startRuntime(t, "HMB_OUTPUT="+dir, "HMB_ENABLE=0")
	if rt.Measurement().Enabled() {
		t.Fatal("HMB_ENABLE=0 is enabled")
	}
	if rt.NewThread(1, "") != NoThread || rt.Region("x", "", 0) != 0 {
		t.Error("a disabled measurement hands out threads or regions")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a disabled measurement wrote %v", entries)
	}
}

// TestRuntimeClock checks that the measurement reads the clock the C
// probes read, whichever that is.
func TestRuntimeClock(t *testing.T) {
	for _, name := range []string{"monotonic", clock.Best().String()} {
		var rt Runtime
		t.Setenv("HMB_OUTPUT", t.TempDir())
		if _, err := rt.Start([]string{"HMB_OUTPUT=" + os.Getenv("HMB_OUTPUT")}, name); err != nil {
			t.Fatal(err)
		}
		if clock.Active().String() != name {
			t.Errorf("C probes read %s, the measurement %v", name, clock.Active())
		}
		rt.Close()
	}
}

func TestSyncEnv(t *testing.T) {
	t.Setenv("HMB_OLD", "1")
	t.Setenv("HMB_SAME", "x")
	t.Setenv("HMB_NEW", "")
	os.Unsetenv("HMB_NEW")
	syncEnv([]string{"HMB_NEW=2", "HMB_SAME=x", "NOT_HMB=3"})
	if _, ok := os.LookupEnv("HMB_OLD"); ok {
		t.Error("HMB_OLD is still set")
	}
	if os.Getenv("HMB_NEW") != "2" || os.Getenv("HMB_SAME") != "x" {
		t.Errorf("HMB_NEW=%q HMB_SAME=%q", os.Getenv("HMB_NEW"), os.Getenv("HMB_SAME"))
	}
	if _, ok := os.LookupEnv("NOT_HMB"); ok {
		t.Error("a variable other than HMB_* was set")
	}
}

// TestProbeMode checks HMB_C_PROBE: direct by default, staged on request or
// where the configuration needs the Go probes for every event, and a clear
// error for anything else. A direct thread's location is pinned for C.
func TestProbeMode(t *testing.T) {
	// Start makes the process's HMB_* variables the C environment's: these
	// are restored afterwards.
	for _, v := range []string{"HMB_OUTPUT", "HMB_C_PROBE", "HMB_MIN_DURATION", "HMB_CALLPATHS", "HMB_ENCODING_OFF"} {
		t.Setenv(v, "")
	}
	for _, tc := range []struct {
		env  []string
		want ProbeMode
		err  string
	}{
		{nil, ProbeDirect, ""},
		{[]string{"HMB_C_PROBE=staged"}, ProbeStaged, ""},
		{[]string{"HMB_C_PROBE= direct "}, ProbeDirect, ""},
		{[]string{"HMB_MIN_DURATION=2us"}, ProbeStaged, ""},
		{[]string{"HMB_CALLPATHS=1"}, ProbeStaged, ""},
		{[]string{"HMB_ENCODING_OFF=delta"}, ProbeStaged, ""},
		{[]string{"HMB_C_PROBE=fast"}, 0, `HMB_C_PROBE="fast": want direct or staged`},
	} {
		dir := t.TempDir()
		var rt Runtime
		_, err := rt.Start(append([]string{"HMB_OUTPUT=" + dir}, tc.env...), clock.Best().String())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: Start: %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: Start: %v", tc.env, err)
		}
		if got := rt.ProbeMode(); got != tc.want {
			t.Errorf("%v: probe mode %v, want %v", tc.env, got, tc.want)
		}
		loc, epoch := rt.PinForC(rt.NewThread(1, ""), nil)
		if (loc != nil && epoch != nil) != (tc.want == ProbeDirect) {
			t.Errorf("%v: PinForC gave %p, %p", tc.env, loc, epoch)
		}
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// The MPI records replay with every field, count as one probe each, and a
// kind the replay does not know, or one cut short, is malformed.
func TestReplayMPI(t *testing.T) {
	rt := startRuntime(t)
	wait := rt.Region("wait", "", 0)
	ireduce := rt.Region("ireduce", "", 0)
	th := rt.Thread(rt.NewThread(43, ""))
	comm, err := rt.Measurement().DefineComm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := rt.Measurement().Now()
	var recs []Record
	add := func(dt uint64, r encode.Record) {
		mr := MakeMPIRecord(t0+dt, r)
		recs = append(recs, mr[:]...)
	}
	recs = append(recs, MakeRecord(KindEnter, t0, uint64(wait)))
	add(10, encode.Record{Kind: encode.KindSend, Peer: 2, Tag: 5, Bytes: 64, Comm: uint32(comm)})
	add(20, encode.Record{Kind: encode.KindIsend, Peer: 1, Tag: 6, Bytes: 1 << 33, Comm: uint32(comm), Request: 1 << 40})
	add(30, encode.Record{Kind: encode.KindIsendComplete, Request: 1 << 40})
	add(40, encode.Record{Kind: encode.KindIrecv, Peer: 0, Tag: 6, Bytes: 8, Comm: uint32(comm), Request: 2})
	add(50, encode.Record{Kind: encode.KindCollComplete, Region: uint32(ireduce), Root: 2, Bytes: 8, Received: 16, Comm: uint32(comm), Request: 3})
	add(60, encode.Record{Kind: encode.KindEnter}) // not an MPI record
	recs = append(recs, MakeRecord(KindLeave, t0+70, uint64(wait)))
	mr := MakeMPIRecord(t0+80, encode.Record{Kind: encode.KindIsendComplete, Request: 4})
	recs = append(recs, mr[:2]...) // cut short
	if n := Probes(recs); n != 9 {
		t.Errorf("Probes = %d, want 9", n)
	}
	if bad := th.Replay(recs); bad != 2 {
		t.Errorf("Replay: %d malformed, want 2", bad)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	f := tracetest.Open(t, rt.Measurement().Path())
	var got []string
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		got = append(got, fmt.Sprintf("%v %s peer=%d tag=%d bytes=%d recv=%d root=%d comm=%d req=%d",
			e.Kind, f.RegionName(e.Region), e.Peer, e.Tag, e.Bytes, e.Received, e.Root, e.Comm, e.Request))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ENTER wait peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=0",
		"SEND wait peer=2 tag=5 bytes=64 recv=0 root=0 comm=1 req=0",
		"ISEND wait peer=1 tag=6 bytes=8589934592 recv=0 root=0 comm=1 req=1099511627776",
		"ISEND_COMPLETE wait peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=1099511627776",
		"IRECV wait peer=0 tag=6 bytes=8 recv=0 root=0 comm=1 req=2",
		"COLL_COMPLETE ireduce peer=0 tag=0 bytes=8 recv=16 root=2 comm=1 req=3",
		"LEAVE wait peer=0 tag=0 bytes=0 recv=0 root=0 comm=0 req=0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m := f.Locations[0].Comm; len(m) != 3 || m[0].Received != 1 || m[1].Sent != 1 || m[1].SentBytes != 1<<33 || m[2].Sent != 1 {
		t.Errorf("matrix %+v", m)
	}
}

// Task records replay with their ids, in order with the enters and leaves
// around them.
func TestReplayTasks(t *testing.T) {
	rt := startRuntime(t)
	task := rt.Region("!$omp task @t.c:1", "", 0)
	th := rt.Thread(rt.NewThread(44, ""))
	t0 := rt.Measurement().Now()
	var recs []Record
	add := func(dt uint64, r encode.Record) {
		mr := MakeMPIRecord(t0+dt, r)
		recs = append(recs, mr[:]...)
	}
	add(0, encode.Record{Kind: encode.KindTaskCreate, Task: 1 << 40})
	add(10, encode.Record{Kind: encode.KindTaskSwitch, Task: 1 << 40})
	recs = append(recs, MakeRecord(KindEnter, t0+20, uint64(task)), MakeRecord(KindLeave, t0+30, uint64(task)))
	add(40, encode.Record{Kind: encode.KindTaskComplete, Task: 1 << 40})
	add(50, encode.Record{Kind: encode.KindTaskSwitch})
	if bad := th.Replay(recs); bad != 0 {
		t.Errorf("Replay: %d malformed, want 0", bad)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	f := tracetest.Open(t, rt.Measurement().Path())
	var got []string
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		got = append(got, fmt.Sprintf("%v %d %d", e.Kind, e.Depth, e.Task))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	want := "TASK_CREATE 0 1099511627776\nTASK_SWITCH 0 1099511627776\nENTER 1 0\nLEAVE 1 0\nTASK_COMPLETE 0 1099511627776\nTASK_SWITCH 0 0"
	if strings.Join(got, "\n") != want {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

// TestReplayTiedTask replays the staged task records of a tied task
// (TaskTied in [1].Time) and of one that may be suspended: the same
// records, but only the second keeps where it started, so only its
// suspension leaves the regions it entered.
func TestReplayTiedTask(t *testing.T) {
	rt := startRuntime(t)
	task := uint64(rt.Region("task", "", 0))
	th := rt.Thread(rt.NewThread(9, ""))
	t0 := rt.Measurement().Now()
	taskRec := func(at uint64, k encode.Kind, id uint64, tied bool) []Record {
		r := MakeMPIRecord(at, encode.Record{Kind: k, Task: id})
		if tied {
			r[1].Time = TaskTied
		}
		return r[:]
	}
	var recs []Record
	recs = append(recs, taskRec(t0, encode.KindTaskCreate, 1, true)...)
	recs = append(recs, taskRec(t0+10, encode.KindTaskSwitch, 1, true)...)
	recs = append(recs, MakeRecord(KindEnter, t0+20, task))
	recs = append(recs, taskRec(t0+30, encode.KindTaskSuspend, 1, false)...) // not kept: nothing to leave
	recs = append(recs, MakeRecord(KindLeave, t0+40, task))
	recs = append(recs, taskRec(t0+50, encode.KindTaskComplete, 1, true)...)
	recs = append(recs, taskRec(t0+60, encode.KindTaskSwitch, 2, false)...)
	recs = append(recs, MakeRecord(KindEnter, t0+70, task))
	recs = append(recs, taskRec(t0+80, encode.KindTaskSuspend, 2, false)...) // leaves "task"
	recs = append(recs, taskRec(t0+90, encode.KindTaskSwitch, 0, true)...)
	if bad := th.Replay(recs); bad != 0 {
		t.Errorf("Replay: %d malformed, want 0", bad)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	f := tracetest.Open(t, rt.Measurement().Path())
	it := f.Events(f.Locations[0].ID)
	var e tracefile.Event
	for it.Next(&e) {
		if e.Kind == encode.KindEnter || e.Kind == encode.KindLeave {
			got = append(got, fmt.Sprintf("%v %s", e.Kind, f.RegionName(e.Region)))
		} else {
			got = append(got, fmt.Sprintf("%v %d", e.Kind, e.Task))
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	want := []string{"TASK_CREATE 1", "TASK_SWITCH 1", "ENTER task", "TASK_SUSPEND 1", "LEAVE task", "TASK_COMPLETE 1",
		"TASK_SWITCH 2", "ENTER task", "LEAVE task", "TASK_SUSPEND 2", "TASK_SWITCH 0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
}
