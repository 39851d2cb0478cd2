package cshim_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPICallProbes runs testdata/c/mpicall.c, which makes the probes of
// libhmbtrace-mpi's blocking calls (hmb_enter_send, hmb_recv_leave, and
// hmb_mpi_call, which records a call whole after it returned) on their
// fused direct path and on every path they fall back to, and RMA records
// of every kind, with the probes written in place (HMB_C_PROBE=direct) and
// replayed in Go (staged). Both traces must hold the same messages in the
// same regions, each send inside its call after the enter, each receive
// right before the leave, and the same RMA records. A call recorded whole
// on the direct path has its send at its enter's time and its receive at
// its leave's.
func TestMPICallProbes(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "mpicall", []string{"-I" + filepath.Join(root, "cshim", "lib")},
		filepath.Join(root, "cshim", "testdata", "c", "mpicall.c"))
	const calls = 20000
	record := func(t *testing.T, mode string, env []string) *tracefile.File {
		t.Helper()
		q := p
		q.out = filepath.Join(t.TempDir(), mode)
		if _, stderr := q.run(t, append([]string{"HMB_C_PROBE=" + mode}, env...)); stderr != "" {
			t.Errorf("HMB_C_PROBE=%s: stderr:\n%s", mode, stderr)
		}
		f, err := tracefile.Open(filepath.Join(q.out, "mpicall.0.hmb"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if len(f.Locations) != 1 {
			t.Fatalf("HMB_C_PROBE=%s: %d locations, want 1", mode, len(f.Locations))
		}
		return f
	}
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"whole", nil},
		// Bins fill every few dozen calls: the fused probes find no room
		// and fall back to the probes that take a new bin.
		{"small bins", []string{"HMB_BIN_SIZE=1K"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			direct := record(t, "direct", c.env)
			staged := record(t, "staged", c.env)
			dm := callMessages(t, direct, c.env == nil)
			sm := callMessages(t, staged, false)
			if want := callCount(calls); len(dm) != want {
				t.Errorf("direct: %d messages, want %d", len(dm), want)
			}
			if c.env == nil {
				wholeCalls(t, direct, calls)
			}
			if !reflect.DeepEqual(dm, sm) {
				n := min(len(dm), len(sm), 8)
				t.Errorf("messages differ: direct %d, staged %d; first direct %v, staged %v", len(dm), len(sm), dm[:n], sm[:n])
			}
			// The RMA records: one of each kind, and a put and a get to
			// targets no rank can be, every tenth call.
			dr, sr := rmaRecords(t, direct), rmaRecords(t, staged)
			if want := (calls / 10) * (int(encode.KindRmaOpCompleteRemote-encode.KindRmaWinCreate) + 3); len(dr) != want {
				t.Errorf("direct: %d RMA records, want %d", len(dr), want)
			}
			if !reflect.DeepEqual(dr, sr) {
				n := min(len(dr), len(sr), 20)
				t.Errorf("RMA records differ: direct %d, staged %d; first direct %v\nstaged %v", len(dr), len(sr), dr[:n], sr[:n])
			}
			for _, r := range dr {
				if (r.Kind == encode.KindRmaPut || r.Kind == encode.KindRmaGet) && r.Bytes == 8 && r.Remote != -1 {
					t.Fatalf("direct: %+v: a target out of range, want remote -1 (none)", r)
				}
			}
			for _, f := range []*tracefile.File{direct, staged} {
				l := &f.Locations[0]
				if l.Accounted() != l.Recorded {
					t.Errorf("%s: %d events accounted for, %d recorded", f.Path, l.Accounted(), l.Recorded)
				}
			}
			if !reflect.DeepEqual(direct.Locations[0].Comm, staged.Locations[0].Comm) {
				t.Errorf("matrix differs\ndirect: %+v\nstaged: %+v", direct.Locations[0].Comm, staged.Locations[0].Comm)
			}
		})
	}
}

// callMessage is a message as the calls of mpicall.c record it: the
// region it is in, its kind and fields.
type callMessage struct {
	region, kind string
	peer         uint64
	tag          uint32
	bytes        uint64
}

// callMessages reads the sends and receives of f's location and checks
// that each lies in the region of the probe that made it, MPI_Send or work
// for a send, MPI_Recv or work for a receive: a send after its enter, a
// receive right before its leave, and that the events' times never go
// back, so Enter <= MpiSend <= Leave and Enter <= MpiRecv <= Leave. With
// fused, the message of hmb_enter_send (in MPI_Send) shares its enter's
// tick, the message of hmb_recv_leave (in MPI_Recv) its leave's, as the
// direct path writes them, with one clock read for the two; it declines
// few probes (a peer's first message, a full bin), which go event by event.
func callMessages(t *testing.T, f *tracefile.File, fused bool) []callMessage {
	t.Helper()
	var (
		stack         []string
		out           []callMessage
		pending       bool // a receive waits for its leave
		last          tracefile.Event
		e             tracefile.Event
		enter, recv   tracefile.Event
		shared, apart int
	)
	in := map[string]map[string]bool{
		"send": {"MPI_Send": true, "MPI_Ssend": true, "MPI_Sendrecv": true, "work": true},
		"recv": {"MPI_Recv": true, "MPI_Mrecv": true, "MPI_Sendrecv": true, "work": true},
	}
	it := f.Events(f.Locations[0].ID)
	for n := 0; it.Next(&e); n++ {
		if n > 0 && (e.Time < last.Time || (e.Time == last.Time && e.Seq <= last.Seq)) {
			t.Fatalf("%s: event %d (%v) at %d.%d after %d.%d", f.Path, n, e.Kind, e.Time, e.Seq, last.Time, last.Seq)
		}
		last = e
		switch e.Kind {
		case encode.KindEnter:
			if pending {
				t.Fatalf("%s: event %d: an enter between a receive and its leave", f.Path, n)
			}
			stack = append(stack, f.RegionName(e.Region))
			enter = e
		case encode.KindLeave:
			if len(stack) == 0 {
				t.Fatalf("%s: event %d: a leave with no region open", f.Path, n)
			}
			if pending && stack[len(stack)-1] == "MPI_Recv" {
				if e.Time == recv.Time && e.Seq == recv.Seq+1 {
					shared++
				} else {
					apart++
				}
			}
			pending = false
			stack = stack[:len(stack)-1]
		case encode.KindSend, encode.KindRecv:
			if !e.PeerRank || e.Comm == 0 {
				t.Fatalf("%s: event %d: %+v, want a world rank on a communicator", f.Path, n, e)
			}
			m := callMessage{kind: "send", peer: e.Peer, tag: e.Tag, bytes: e.Bytes}
			if e.Kind == encode.KindRecv {
				m.kind = "recv"
			}
			if len(stack) > 0 {
				m.region = stack[len(stack)-1]
			}
			if pending || !in[m.kind][m.region] {
				t.Fatalf("%s: event %d: a %s in %q (a receive pending: %v), want it inside its call", f.Path, n, m.kind, m.region, pending)
			}
			pending = m.kind == "recv"
			recv = e
			if m.kind == "send" && m.region == "MPI_Send" {
				if e.Time == enter.Time && e.Seq == enter.Seq+1 {
					shared++
				} else {
					apart++
				}
			}
			out = append(out, m)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", f.Path, err)
	}
	if fused {
		t.Logf("%s: %d messages of hmb_enter_send and hmb_recv_leave in their enter's or leave's tick, %d not", f.Path, shared, apart)
	}
	if fused && (shared == 0 || apart > (shared+apart)/20) {
		t.Errorf("%s: %d messages of hmb_enter_send and hmb_recv_leave in their enter's or leave's tick, %d not: want them to share the clock read", f.Path, shared, apart)
	}
	return out
}

// callCount is the number of messages mpicall.c records in calls iterations.
func callCount(calls int) int {
	n := 0
	for i := 0; i < calls; i++ {
		if i%5 != 0 { // a peer, not MPI_PROC_NULL
			n += 2 // hmb_enter_send and hmb_recv_leave
			if i%3 == 0 {
				n += 2 // MPI_Sendrecv
			} else {
				n++ // MPI_Ssend or MPI_Mrecv
			}
		}
		if i%100 == 0 {
			n += 2 // hmb_enter_send and hmb_recv_leave on work
		}
		if i%100 == 1 {
			n += 2 // hmb_mpi_call on work
		}
	}
	return n
}

// wholeCalls checks the calls that mpicall.c records with hmb_mpi_call
// (MPI_Ssend, MPI_Mrecv, MPI_Sendrecv) on the direct path: each is
// written whole, its send at its enter's time and next in
// its tick, its receive at its leave's time and just before it, but for
// the first messages to each peer, which the probes take to Go to add the
// peer's line to the matrix, and the calls that find a bin full. A call of work recorded while the MPI call
// ran comes before the call's enter.
func wholeCalls(t *testing.T, f *tracefile.File, calls int) {
	t.Helper()
	whole := map[string]bool{"MPI_Ssend": true, "MPI_Mrecv": true, "MPI_Sendrecv": true}
	var (
		e, enter, recv tracefile.Event
		open           string // the call recorded whole that is open
		apart          bool   // it was not written whole
		n, works       int
		firsts         []string
	)
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindEnter:
			if name := f.RegionName(e.Region); whole[name] {
				open, enter, recv, apart = name, e, tracefile.Event{}, false
			} else if name == "work" && open == "" {
				works++
			}
		case encode.KindSend:
			if open != "" && (e.Time != enter.Time || e.Seq != enter.Seq+1) {
				apart = true
				firsts = append(firsts, fmt.Sprintf("%s: a send at %d.%d, its enter at %d.%d", open, e.Time, e.Seq, enter.Time, enter.Seq))
			}
		case encode.KindRecv:
			recv = e
		case encode.KindLeave:
			if open == "" {
				continue
			}
			if recv.Kind == encode.KindRecv && (recv.Time != e.Time || recv.Seq+1 != e.Seq) && !apart {
				firsts = append(firsts, fmt.Sprintf("%s: its leave at %d.%d, its receive at %d.%d", open, e.Time, e.Seq, recv.Time, recv.Seq))
			}
			open = ""
			n++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", f.Path, err)
	}
	if n != calls {
		t.Errorf("%s: %d calls of MPI_Ssend, MPI_Mrecv or MPI_Sendrecv, want %d", f.Path, n, calls)
	}
	// 4 peers, each new to a send and to a receive, and a bin that fills
	// every few hundred calls.
	if len(firsts) > calls/100 {
		t.Errorf("%s: %d calls not written whole, want at most %d:\n%s", f.Path, len(firsts), calls/100, strings.Join(firsts[:min(len(firsts), 20)], "\n"))
	}
	// Calls of work at depth 2 outside any MPI call: one per i%100 == 0
	// (hmb_enter_send) and i%100 == 1 (hmb_mpi_call), one per i%50 == 7
	// (recorded while a call ran, so before its enter).
	if want := calls/100*2 + calls/50; works != want {
		t.Errorf("%s: %d calls of work outside MPI calls, want %d", f.Path, works, want)
	}
}

// rmaRecord is an RMA record's kind and fields.
type rmaRecord struct {
	Kind                     encode.Kind
	Win, Aux, Level, Group   uint32
	Remote                   int64
	Bytes, Received, Request uint64
	region                   string
}

// rmaRecords reads the RMA records of f's location.
func rmaRecords(t *testing.T, f *tracefile.File) []rmaRecord {
	t.Helper()
	var out []rmaRecord
	var e tracefile.Event
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		if e.Kind.IsRma() {
			out = append(out, rmaRecord{e.Kind, e.Win, e.Aux, e.Level, e.Group, e.Remote, e.Bytes, e.Received, e.Request, f.RegionName(e.Region)})
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", f.Path, err)
	}
	return out
}

// TestMPICallClock runs selfsend (MPI_Send to itself and the MPI_Recv that
// takes it) with each clock: the wrappers read the time before a blocking
// call themselves, inline, and must read the clock libhmbtrace reads, or
// the call's enter lands hours away from its leave. Every call lies within
// the run, and nearly every one is written whole (its send at its enter's
// time).
func TestMPICallClock(t *testing.T) {
	build := mpiLibrary(t)
	prog := filepath.Join(t.TempDir(), "selfsend")
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-mpi")
	if err != nil {
		t.Fatalf("pkg-config hmbtrace-mpi: %v\n%s", err, pc)
	}
	args := append([]string{"-O2", "-o", prog, filepath.Join(root, "cshim", "testdata", "mpi", "selfsend.c")}, strings.Fields(string(pc))...)
	if msg, err := run(root, nil, "mpicc", args...); err != nil {
		t.Fatalf("mpicc %v: %v\n%s", args, err, msg)
	}
	const rounds, repeats = 2000, 2
	for _, clock := range []string{"default", "monotonic"} {
		t.Run(clock, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hmb-out")
			var env []string
			if clock != "default" {
				env = []string{"HMB_CLOCK=" + clock}
			}
			start := time.Now()
			mpirun(t, 1, out, env, prog, strconv.Itoa(rounds), strconv.Itoa(repeats))
			wall := time.Since(start).Nanoseconds()
			f := rankFiles(t, out, "selfsend", 1)[0]
			var (
				e, first, enter tracefile.Event
				n, calls, apart int
				open            string
			)
			it := f.Events(f.Locations[0].ID)
			for ; it.Next(&e); n++ {
				if n == 0 {
					first = e
				}
				switch e.Kind {
				case encode.KindEnter:
					if name := f.RegionName(e.Region); name == "MPI_Send" || name == "MPI_Recv" {
						open, enter = name, e
					}
				case encode.KindSend:
					if open == "MPI_Send" && (e.Time != enter.Time || e.Seq != enter.Seq+1) {
						apart++
					}
				case encode.KindLeave:
					if open != "" {
						if d := f.Nanos(e.Time) - f.Nanos(enter.Time); d < 0 || d > wall {
							t.Fatalf("%s: %s lasted %d ns, in a run of %d ns", f.Path, open, d, wall)
						}
						open = ""
						calls++
					}
				}
			}
			if err := it.Err(); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			if span := f.Nanos(e.Time) - f.Nanos(first.Time); span < 0 || span > wall {
				t.Errorf("%s: events over %d ns, in a run of %d ns", f.Path, span, wall)
			}
			if want := 2 * rounds * repeats; calls != want {
				t.Errorf("%s: %d calls of MPI_Send and MPI_Recv, want %d", f.Path, calls, want)
			}
			if apart > rounds*repeats/100 {
				t.Errorf("%s: %d of %d sends not at their enter's time, want them written whole", f.Path, apart, rounds*repeats)
			}
		})
	}
}
