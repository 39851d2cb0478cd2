package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
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

// recorder records a trace with the probes at explicit times: ticks of the
// monotonic clock, which are nanoseconds, kept at full resolution.
type recorder struct {
	m  *measure.Measurement
	t0 uint64
}

func newRecorder(t testing.TB, dir string, rank int, cfg measure.Config) *recorder {
	t.Helper()
	cfg.Output, cfg.Name, cfg.Rank = dir, "t", rank
	cfg.TimerShift, cfg.Clock = measure.NoTimerShift, "monotonic"
	cfg.NoThrottle = true // the scripts' thousands of short calls are all wanted in the export
	m, err := measure.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{m: m, t0: m.Now()}
}

// export exports the files into a fresh directory and returns the anchor.
func export(t testing.TB, files []*tracefile.File, opt otf2.Options) (string, Stats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "archive")
	st, err := Export(dir, files, opt)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "traces.otf2"), st
}

// expected lists, per OTF2 location reference, the events the archive must
// hold, in otf2-print's terms (see printed): the reader's events on the time
// axis of the export (ns since the earliest file's start), peers as
// location references, and a leave at the last time for every region left
// open.
func expected(t testing.TB, files []*tracefile.File) map[uint64][]string {
	t.Helper()
	origin := files[0].Header.StartWall
	for _, f := range files {
		if f.Header.StartWall.Before(origin) {
			origin = f.Header.StartWall
		}
	}
	ref := map[[2]int]uint64{} // (file, location id) -> reference
	n := uint64(0)
	for i, f := range files {
		for _, l := range f.Locations {
			ref[[2]int{i, int(l.ID)}] = n
			n++
		}
	}
	rankTarget := func(rank uint64) (uint64, bool) {
		found := -1
		for i, f := range files {
			if uint64(f.Header.Rank) == rank {
				if found >= 0 {
					return 0, false
				}
				found = i
			}
		}
		if found < 0 {
			return 0, false
		}
		f := files[found]
		for _, l := range f.Locations {
			for _, e := range readAll(t, f, l.ID) {
				if (e.Kind == encode.KindSend || e.Kind == encode.KindRecv) && e.PeerRank {
					return ref[[2]int{found, int(l.ID)}], true
				}
			}
		}
		return ref[[2]int{found, int(f.Locations[0].ID)}], true
	}
	want := map[uint64][]string{}
	for i, f := range files {
		off := f.Header.StartWall.Sub(origin).Nanoseconds()
		for _, l := range f.Locations {
			r := ref[[2]int{i, int(l.ID)}]
			var open []uint32
			var ends []string // the collectives' ends, by depth
			var last int64
			evs := []string{}
			skipped := map[uint64]bool{}
			// dropped are the receive requests whose receive has no peer.
			dropped := map[uint64]bool{}
			for _, e := range readAll(t, f, l.ID) {
				if e.Kind != encode.KindIrecv {
					continue
				}
				if _, ok := rankTarget(e.Peer); !ok {
					dropped[e.Request] = true
				}
			}
			leave := func(evs []string, ts int64) []string {
				if end := ends[len(ends)-1]; end != "" {
					evs = append(evs, fmt.Sprintf(end, ts))
				}
				ends = ends[:len(ends)-1]
				return append(evs, fmt.Sprintf("LEAVE %d %s", ts, f.RegionName(open[len(open)-1])))
			}
			for _, e := range readAll(t, f, l.ID) {
				ts := off + f.Nanos(e.Time)
				last = ts
				switch e.Kind {
				case encode.KindEnter:
					open = append(open, e.Region)
					ends = append(ends, "")
					evs = append(evs, fmt.Sprintf("ENTER %d %s", ts, f.RegionName(e.Region)))
				case encode.KindLeave:
					evs = leave(evs, ts)
					open = open[:len(open)-1]
				case encode.KindSend, encode.KindRecv, encode.KindIsend, encode.KindIrecv:
					peer, ok := ref[[2]int{i, int(e.Peer)}]
					if e.PeerRank {
						peer, ok = rankTarget(e.Peer)
					}
					if e.PeerRank && e.Comm != 0 && f.Comm(e.Comm) == nil {
						ok = false // a communicator the file does not define
					}
					if !ok {
						if e.Kind == encode.KindIsend {
							skipped[e.Request] = true
						}
						continue
					}
					ev := fmt.Sprintf("MPI_%v %d %d %s %d %d", e.Kind, ts, peer, commName(f, e.Comm, e.PeerRank), e.Tag, e.Bytes)
					if e.Kind == encode.KindIsend || e.Kind == encode.KindIrecv {
						ev += fmt.Sprintf(" %d", e.Request)
					}
					evs = append(evs, ev)
				case encode.KindIrecvRequest:
					if dropped[e.Request] {
						continue
					}
					evs = append(evs, fmt.Sprintf("MPI_%v %d %d", e.Kind, ts, e.Request))
				case encode.KindIsendComplete, encode.KindRequestCancelled:
					if skipped[e.Request] {
						continue
					}
					evs = append(evs, fmt.Sprintf("MPI_%v %d %d", e.Kind, ts, e.Request))
				case encode.KindCollective:
					op := collOp(f.RegionName(open[len(open)-1]))
					evs = append(evs, fmt.Sprintf("MPI_COLLECTIVE_BEGIN %d", ts))
					root := "NONE"
					if r, ok := rankTarget(uint64(e.Root)); e.Root >= 0 && ok {
						root = strconv.FormatUint(r, 10)
					}
					ends[len(open)-1] = fmt.Sprintf("%s %s %s %s %d %d", "MPI_COLLECTIVE_END %d", op, commName(f, e.Comm, true), root, e.Bytes, e.Received)
				case encode.KindCollRequest:
					evs = append(evs, fmt.Sprintf("NON_BLOCKING_COLLECTIVE_REQUEST %d %d", ts, e.Request))
				case encode.KindCollComplete:
					root := "NONE"
					if r, ok := rankTarget(uint64(e.Root)); e.Root >= 0 && ok {
						root = strconv.FormatUint(r, 10)
					}
					evs = append(evs, fmt.Sprintf("NON_BLOCKING_COLLECTIVE_COMPLETE %d %s %s %s %d %d %d", ts,
						collOp(f.RegionName(e.Region)), commName(f, e.Comm, true), root, e.Bytes, e.Received, e.Request))
				case encode.KindMetric:
					evs = append(evs, fmt.Sprintf("METRIC %d %v", ts, e.Values))
				}
			}
			for len(open) > 0 {
				evs = leave(evs, last)
				open = open[:len(open)-1]
			}
			want[r] = evs
		}
	}
	return want
}

// commName is how otf2-print names the communicator of a record: its name,
// MPI_COMM_WORLD for a rank peer without one, COMM_LOCATIONS for a
// location peer.
func commName(f *tracefile.File, id uint32, rank bool) string {
	switch {
	case !rank:
		return CommName
	case id == 0 || f.Comm(id).Name == "MPI_COMM_WORLD":
		return "MPI_COMM_WORLD"
	}
	return `"` + f.Comm(id).Name + `"`
}

// collOp is OTF2's name of the operation of an MPI collective function.
func collOp(name string) string {
	op := strings.ToUpper(strings.TrimPrefix(name, "MPI_"))
	switch op {
	case "IALLREDUCE", "IBARRIER", "IBCAST", "IALLTOALLV", "IREDUCE_SCATTER_BLOCK":
		op = op[1:]
	}
	return op
}

func readAll(t testing.TB, f *tracefile.File, id uint32) []tracefile.Event {
	t.Helper()
	var out []tracefile.Event
	var e tracefile.Event
	it := f.Events(id)
	for it.Next(&e) {
		e.Values = append([]uint64(nil), e.Values...)
		out = append(out, e)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// printed reduces an otf2-print event to the terms of expected.
func printed(e otf2print.Event) (string, error) {
	switch e.Name {
	case "ENTER", "LEAVE":
		name, _, err := e.Region()
		return fmt.Sprintf("%s %d %s", e.Name, e.Time, name), err
	case "MPI_SEND", "MPI_RECV", "MPI_ISEND", "MPI_IRECV":
		key := "Receiver"
		if e.Name == "MPI_RECV" || e.Name == "MPI_IRECV" {
			key = "Sender"
		}
		peer, err := printedLocation(e, key)
		if err != nil {
			return "", err
		}
		comm, _ := e.Field("Communicator")
		comm, _, _ = strings.Cut(comm, " <")
		comm = strings.Trim(comm, `"`)
		if comm != CommName && comm != "MPI_COMM_WORLD" {
			comm = `"` + comm + `"`
		}
		tag, _ := e.Field("Tag")
		length, _ := e.Field("Length")
		s := fmt.Sprintf("%s %d %s %s %s %s", e.Name, e.Time, peer, comm, tag, length)
		if req, ok := e.Field("Request"); ok {
			s += " " + req
		}
		return s, nil
	case "MPI_ISEND_COMPLETE", "MPI_IRECV_REQUEST", "MPI_REQUEST_CANCELLED", "NON_BLOCKING_COLLECTIVE_REQUEST":
		req, _ := e.Field("Request")
		return fmt.Sprintf("%s %d %s", e.Name, e.Time, req), nil
	case "THREAD_FORK":
		model, _ := e.Field("Model")
		n, _ := e.Field("# Requested Threads")
		return fmt.Sprintf("%s %d %s %s", e.Name, e.Time, model, n), nil
	case "THREAD_JOIN":
		model, _ := e.Field("Model")
		return fmt.Sprintf("%s %d %s", e.Name, e.Time, model), nil
	case "THREAD_TEAM_BEGIN", "THREAD_TEAM_END":
		team, _ := e.Field("Thread Team")
		team, _, _ = strings.Cut(team, " <")
		return fmt.Sprintf("%s %d %s", e.Name, e.Time, team), nil
	case "THREAD_TASK_CREATE", "THREAD_TASK_SWITCH", "THREAD_TASK_COMPLETE":
		// Thread Team: "Rank 0 lanes" <0>, Creating Thread: 1 ("lane 2" <1>), Generation Number: 3
		team, _ := e.Field("Thread Team")
		team, _, _ = strings.Cut(team, " <")
		creator, _ := e.Field("Creating Thread")
		creator, _, _ = strings.Cut(creator, " ")
		gen, _ := e.Field("Generation Number")
		return fmt.Sprintf("%s %d %s %s %s", e.Name, e.Time, team, creator, gen), nil
	case "MPI_COLLECTIVE_BEGIN":
		return fmt.Sprintf("%s %d", e.Name, e.Time), nil
	case "MPI_COLLECTIVE_END", "NON_BLOCKING_COLLECTIVE_COMPLETE":
		op, _ := e.Field("Operation")
		comm, _ := e.Field("Communicator")
		comm, _, _ = strings.Cut(comm, " <")
		if comm == `"MPI_COMM_WORLD"` {
			comm = "MPI_COMM_WORLD"
		}
		root := "NONE"
		if r, _ := e.Field("Root"); r != "NONE" {
			var err error
			if root, err = printedLocation(e, "Root"); err != nil {
				return "", err
			}
		}
		sent, _ := e.Field("Sent")
		recv, _ := e.Field("Received")
		s := fmt.Sprintf("%s %d %s %s %s %s %s", e.Name, e.Time, op, comm, root, sent, recv)
		if req, ok := e.Field("Request"); ok {
			s += " " + req
		}
		return s, nil
	case "METRIC":
		_, vals, err := e.Metric()
		var vs []string
		for _, v := range vals {
			if v.Type != "UINT64" {
				return "", fmt.Errorf("metric value %+v is not UINT64", v)
			}
			vs = append(vs, v.Value)
		}
		return fmt.Sprintf("METRIC %d [%s]", e.Time, strings.Join(vs, " ")), err
	}
	return "", fmt.Errorf("unexpected event %s", e.Name)
}

// printedLocation returns the location otf2-print resolves a rank field
// to, `2 ("Master thread" <5>)`: 5. It is the location reference whatever
// the rank, so the tests check the exporter's ranks through otf2-print's
// reading of the communicators.
func printedLocation(e otf2print.Event, key string) (string, error) {
	v, _ := e.Field(key)
	i := strings.LastIndex(v, "<")
	if i < 0 || !strings.HasSuffix(v, ">)") {
		return "", fmt.Errorf("%s: %s %q names no location", e.Name, key, v)
	}
	return v[i+1 : len(v)-2], nil
}

// checkArchive reads the archive with otf2-print (-Werror must accept it
// with an empty stderr, and each location must show exactly the expected
// events) and with python3-otf2 (the same counts, times never decreasing).
func checkArchive(t *testing.T, anchor string, files []*tracefile.File) map[uint64][]string {
	t.Helper()
	want, threads := checkArchiveThreads(t, anchor, files)
	all := map[uint64][]string{}
	for loc, w := range want {
		all[loc] = append(slices.Clip(w), threads[loc]...)
	}
	checkPython(t, anchor, all)
	return want
}

// checkArchiveNoPython is checkArchive without python3-otf2, for archives
// it cannot read.
func checkArchiveNoPython(t *testing.T, anchor string, files []*tracefile.File) map[uint64][]string {
	t.Helper()
	want, _ := checkArchiveThreads(t, anchor, files)
	return want
}

// checkArchiveThreads is checkArchiveNoPython that leaves the thread events
// (THREAD_FORK, THREAD_TEAM_BEGIN, ...), which the trace's events do not
// list, out of the comparison and returns them per location.
func checkArchiveThreads(t *testing.T, anchor string, files []*tracefile.File) (want, threads map[uint64][]string) {
	t.Helper()
	tracetest.RequireTool(t, "otf2-print", otf2print.DebianPackage)
	want = expected(t, files)
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	evs, err := otf2print.Events(anchor)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64][]string{}
	threads = map[uint64][]string{}
	for _, e := range evs {
		s, err := printed(e)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name, "THREAD_") {
			threads[e.Location] = append(threads[e.Location], s)
			continue
		}
		got[e.Location] = append(got[e.Location], s)
	}
	for loc, w := range want {
		g := got[loc]
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Errorf("location %d: otf2-print shows %d events, want %d; first difference:\n%s", loc, len(g), len(w), firstDiff(g, w))
		}
	}
	for loc := range got {
		if _, ok := want[loc]; !ok {
			t.Errorf("otf2-print shows events of location %d, which is not exported", loc)
		}
	}
	return want, threads
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("event %d: got %q, want %q", i, g, w)
		}
	}
	return "none"
}

func checkPython(t *testing.T, anchor string, want map[uint64][]string) {
	t.Helper()
	out := otf2Python(t, filepath.Join("..", "testdata", "read_otf2.py"), anchor)
	var res struct {
		Locations map[string]struct {
			NumberOfEvents uint64 `json:"number_of_events"`
			Events         int    `json:"events"`
			Monotonic      bool   `json:"monotonic"`
		} `json:"locations"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Locations) != len(want) {
		t.Errorf("python3-otf2 sees %d locations, want %d", len(res.Locations), len(want))
	}
	for loc, w := range want {
		p, ok := res.Locations[strconv.FormatUint(loc, 10)]
		if !ok || p.Events != len(w) || p.NumberOfEvents != uint64(len(w)) || !p.Monotonic {
			t.Errorf("location %d: python3-otf2 reads %+v (present %v), want %d events in order", loc, p, ok, len(w))
		}
	}
}

// definitions returns otf2-print's listing of the global definitions.
func definitions(t *testing.T, anchor string) string {
	t.Helper()
	out, err := otf2print.Run(anchor, "-G", "--silent")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestOneLocation(t *testing.T) {
	r := newRecorder(t, t.TempDir(), 0, measure.Config{})
	main, solve := r.m.RegionAt("main", "main.go", 10), r.m.RegionAt("solve", "solve.go", 42)
	loc := r.m.Location("alpha")
	loc.EnterAt(main, r.t0+100)
	for i := uint64(0); i < 3; i++ {
		loc.EnterAt(solve, r.t0+200+100*i)
		loc.LeaveAt(solve, r.t0+250+100*i)
	}
	loc.EnterAt(solve, r.t0+600)
	loc.LeaveAt(solve, r.t0+600) // a call of no duration: equal timestamps
	loc.LeaveAt(main, r.t0+700)
	f := tracetest.Finish(t, r.m)
	anchor, st := export(t, []*tracefile.File{f}, otf2.Options{})
	want := checkArchive(t, anchor, []*tracefile.File{f})
	if st.Locations != 1 || st.Events != uint64(len(want[0])) || st.Events != 10 || st.ClosedAtEnd != 0 || st.MessagesWithoutPeer != 0 {
		t.Errorf("stats %+v, want 1 location and 10 events", st)
	}
	defs := definitions(t, anchor)
	for _, s := range []string{`Name: "solve"`, `File: "solve.go"`, `Begin: 42`, `File: "main.go"`, `Begin: 10`,
		`Name: "alpha"`, `Name: "Rank 0"`, `Class: "node"`, "Ticks per Seconds: 1000000000"} {
		if !strings.Contains(defs, s) {
			t.Errorf("definitions lack %s:\n%s", s, defs)
		}
	}
	if strings.Contains(defs, "COMM") {
		t.Errorf("a trace without messages has a communicator:\n%s", defs)
	}
}

// TestLocationsAndMessages exports a process of four locations that pass
// messages around a ring: every send must show its receiver, and every
// receive its sender, as the same locations on the other side.
func TestLocationsAndMessages(t *testing.T) {
	r := newRecorder(t, t.TempDir(), 0, measure.Config{})
	work, send, recv := r.m.Region("work"), r.m.Region("send"), r.m.Region("recv")
	locs := make([]*measure.Location, 4)
	for i := range locs {
		locs[i] = r.m.Location(fmt.Sprintf("worker %d", i))
	}
	for i, l := range locs {
		next := locs[(i+1)%len(locs)]
		prev := locs[(i+len(locs)-1)%len(locs)]
		base := r.t0 + uint64(i)*7
		l.EnterAt(work, base+10)
		for k := uint64(0); k < 5; k++ {
			at := base + 100 + 100*k
			l.EnterAt(send, at)
			l.MessageAt(measure.Message{Peer: uint64(next.ID()), Tag: uint32(k), Bytes: 8 << k}, at+5)
			l.LeaveAt(send, at+10)
			l.EnterAt(recv, at+20)
			l.MessageAt(measure.Message{Recv: true, Peer: uint64(prev.ID()), Tag: uint32(k), Bytes: 8 << k}, at+25)
			l.LeaveAt(recv, at+30)
		}
		l.LeaveAt(work, base+1000)
	}
	f := tracetest.Finish(t, r.m)
	anchor, st := export(t, []*tracefile.File{f}, otf2.Options{})
	want := checkArchive(t, anchor, []*tracefile.File{f})
	if st.Locations != 4 || st.MessagesWithoutPeer != 0 {
		t.Errorf("stats %+v", st)
	}
	checkMatched(t, want)
	if defs := definitions(t, anchor); !strings.Contains(defs, `COMM                                   0  Name: "COMM_LOCATIONS"`) {
		t.Errorf("no communicator COMM_LOCATIONS:\n%s", defs)
	}
}

// checkMatched checks that the sends and receives pair up: for every send
// from a to b with tag and length, one receive at b from a with the same.
func checkMatched(t *testing.T, want map[uint64][]string) {
	t.Helper()
	pending := map[string]int{}
	n := 0
	for loc, evs := range want {
		for _, e := range evs {
			f := strings.Fields(e)
			switch f[0] {
			case "MPI_SEND", "MPI_ISEND":
				pending[fmt.Sprintf("%d>%s %s %s %s", loc, f[2], f[3], f[4], f[5])]++
				n++
			case "MPI_RECV", "MPI_IRECV":
				pending[fmt.Sprintf("%s>%d %s %s %s", f[2], loc, f[3], f[4], f[5])]--
			}
		}
	}
	if n == 0 {
		t.Error("no messages")
	}
	for k, v := range pending {
		if v != 0 {
			t.Errorf("message %s: %d more sends than receives", k, v)
		}
	}
}

// TestSeveralFiles exports the ranks of a run, each its own file with its
// own clock start, exchanging messages by rank: the archive has a location
// group per rank, puts both on one time axis and pairs the messages.
func TestSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank := 0; rank < 2; rank++ {
		r := newRecorder(t, dir, rank, measure.Config{})
		main, exch := r.m.Region("main"), r.m.Region("exchange")
		// A helper location first, so that the rank's messages are not on
		// its first location.
		helper, l := r.m.Location("helper"), r.m.Location("master")
		helper.EnterAt(main, r.t0+1)
		helper.LeaveAt(main, r.t0+2)
		l.EnterAt(main, r.t0+10)
		for k := uint64(0); k < 3; k++ {
			l.EnterAt(exch, r.t0+100*k+20)
			l.MessageAt(measure.Message{Peer: uint64(1 - rank), PeerIsRank: true, Tag: 9, Bytes: 100 + k}, r.t0+100*k+21)
			l.MessageAt(measure.Message{Recv: true, Peer: uint64(1 - rank), PeerIsRank: true, Tag: 9, Bytes: 100 + k}, r.t0+100*k+22)
			l.LeaveAt(exch, r.t0+100*k+30)
		}
		// A message to a rank that is not exported is left out.
		l.MessageAt(measure.Message{Peer: 7, PeerIsRank: true, Tag: 1, Bytes: 1}, r.t0+500)
		l.LeaveAt(main, r.t0+600)
		files = append(files, tracetest.Finish(t, r.m))
		time.Sleep(2 * time.Millisecond) // distinct starts
	}
	anchor, st := export(t, files, otf2.Options{})
	want := checkArchive(t, anchor, files)
	checkMatched(t, want)
	if st.Locations != 4 || st.MessagesWithoutPeer != 2 {
		t.Errorf("stats %+v, want 4 locations and 2 messages without peer", st)
	}
	defs := definitions(t, anchor)
	for _, s := range []string{`Name: "Rank 0"`, `Name: "Rank 1"`} {
		if !strings.Contains(defs, s) {
			t.Errorf("definitions lack %s:\n%s", s, defs)
		}
	}
	if files[1].Header.StartWall.Sub(files[0].Header.StartWall) < time.Millisecond {
		t.Fatal("the files started less than 1 ms apart")
	}
	// The second rank's first event lies after the first rank's start by
	// at least the distance of their starts.
	first := strings.Fields(want[2][0])
	if ts, _ := strconv.ParseInt(first[1], 10, 64); ts < time.Millisecond.Nanoseconds() {
		t.Errorf("rank 1 starts at %d ns on the common axis, want its start offset", ts)
	}
}

// TestHostsCountersInterrupted exports synthetic files: two hosts, counters
// after enters and leaves, messages by rank and to nowhere, and a location
// whose regions are still open at its end (a trace written for a signal).
func TestHostsCountersInterrupted(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1700000000, 0)
	a := tracetest.NewBuilder("run", "node-a", 0, start, "main", "compute")
	a.Trace.Header.Metrics = []string{"cycles", "instructions"}
	l := a.Location("main")
	l.Enter(1000, 1, 10, 20)
	l.Enter(1100, 2, 15, 30)
	l.Leave(1500, 115, 530)
	l.Message(1550, encode.KindRecv, 1, true, 3, 64)   // from rank 1
	l.Message(1560, encode.KindSend, 99, false, 3, 64) // to no location
	l.Leave(1600, 120, 600)
	w := a.Location("interrupted")
	w.Enter(1000, 1)
	w.Enter(1200, 2, 1, 2)
	a.Trace.Locations[1].Interrupted = true

	b := tracetest.NewBuilder("run", "node-b", 1, start.Add(500*time.Nanosecond), "compute", "main")
	b.Trace.Header.Metrics = []string{"instructions"}
	m := b.Location("main")
	m.Enter(0, 2)
	m.Enter(100, 1, 7)
	m.Leave(300, 907)
	m.Message(350, encode.KindSend, 0, true, 3, 64) // to rank 0
	m.Leave(400)
	files := []*tracefile.File{a.Write(t, dir), b.Write(t, dir)}

	anchor, st := export(t, files, otf2.Options{})
	want := checkArchive(t, anchor, files)
	checkMatched(t, want)
	if st.ClosedAtEnd != 2 || st.MessagesWithoutPeer != 1 {
		t.Errorf("stats %+v, want 2 regions closed at the end and 1 message without peer", st)
	}
	if got := want[1][len(want[1])-2:]; got[0] != "LEAVE 1200 compute" || got[1] != "LEAVE 1200 main" {
		t.Errorf("interrupted location ends with %q", got)
	}
	if want[2][0] != "ENTER 500 main" || want[2][1] != "ENTER 600 compute" {
		t.Errorf("second file's events are not shifted by its start: %q", want[2][:2])
	}
	defs := definitions(t, anchor)
	for _, s := range []string{`Name: "node-a"`, `Name: "node-b"`, `Name: "cycles"`, `Name: "instructions"`,
		"METRIC_CLASS                           0", "METRIC_CLASS                           1"} {
		if !strings.Contains(defs, s) {
			t.Errorf("definitions lack %s:\n%s", s, defs)
		}
	}
	if n := strings.Count(defs, "\nREGION "); n != 2 {
		t.Errorf("%d regions defined, want 2 (the files' regions merged by name)", n)
	}
	if n := strings.Count(defs, "\nMETRIC_MEMBER "); n != 2 {
		t.Errorf("%d metric members defined, want 2 (merged by name)", n)
	}
}

// steps records main calling step calls times, in a buffer of bufferSize
// bytes, and opens the trace.
func steps(t testing.TB, calls uint64, bufferSize int) *tracefile.File {
	t.Helper()
	r := newRecorder(t, t.TempDir(), 0, measure.Config{BufferSize: bufferSize})
	main, step := r.m.Region("main"), r.m.Region("step")
	l := r.m.Location("main")
	l.EnterAt(main, r.t0)
	for i := uint64(1); i <= calls; i++ {
		l.EnterAt(step, r.t0+10*i)
		l.LeaveAt(step, r.t0+10*i+5)
	}
	l.LeaveAt(main, r.t0+10*calls+10)
	return tracetest.Finish(t, r.m)
}

// TestMultiChunk exports a location whose events fill several event chunks.
func TestMultiChunk(t *testing.T) {
	const calls = 40000
	f := steps(t, calls, 8<<20)
	anchor, _ := export(t, []*tracefile.File{f}, otf2.Options{EventChunkSize: otf2.MinChunkSize})
	fi, err := os.Stat(filepath.Join(filepath.Dir(anchor), "traces", "0.evt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 3*otf2.MinChunkSize {
		t.Fatalf("event file of %d bytes: fewer than 3 chunks of %d", fi.Size(), otf2.MinChunkSize)
	}
	want := checkArchive(t, anchor, []*tracefile.File{f})
	if len(want[0]) != 2*calls+2 {
		t.Errorf("%d events, want %d", len(want[0]), 2*calls+2)
	}
}

// TestKeepLastWindow exports a flight-recorder trace: the calls open at
// the window's start become enters at that time.
func TestKeepLastWindow(t *testing.T) {
	r := newRecorder(t, t.TempDir(), 0, measure.Config{Reduction: measure.ReduceLast, BufferSize: 64 << 10, BinSize: 1 << 10})
	main, outer, inner := r.m.Region("main"), r.m.Region("outer"), r.m.Region("inner")
	l := r.m.Location("main")
	l.EnterAt(main, r.t0)
	l.EnterAt(outer, r.t0+1)
	for i := uint64(1); i <= 100000; i++ {
		l.EnterAt(inner, r.t0+10*i)
		l.LeaveAt(inner, r.t0+10*i+5)
	}
	l.LeaveAt(outer, r.t0+2000000)
	l.LeaveAt(main, r.t0+2000001)
	f := tracetest.Finish(t, r.m)
	if !f.Locations[0].Windowed {
		t.Fatal("the trace has no window: the buffer did not fill")
	}
	evs := readAll(t, f, f.Locations[0].ID)
	if !evs[0].Truncated || !evs[1].Truncated {
		t.Fatalf("the window does not start with the truncated enters of main and outer: %+v", evs[:2])
	}
	anchor, _ := export(t, []*tracefile.File{f}, otf2.Options{})
	want := checkArchive(t, anchor, []*tracefile.File{f})
	if !strings.HasPrefix(want[0][0], "ENTER ") || !strings.HasSuffix(want[0][0], " main") || !strings.HasSuffix(want[0][1], " outer") {
		t.Errorf("archive starts with %q", want[0][:2])
	}
}

// TestFailures checks that bad input is an error that names it and leaves
// nothing behind.
func TestFailures(t *testing.T) {
	dir := t.TempDir()
	good := tracetest.NewBuilder("good", "h", 0, time.Unix(0, 0), "main")
	g := good.Location("main")
	g.Enter(10, 1)
	g.Leave(20)
	goodFile := good.Write(t, dir)

	t.Run("existing directory", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		keep := filepath.Join(out, "keep")
		if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Export(out, []*tracefile.File{goodFile}, otf2.Options{})
		if err == nil || !strings.Contains(err.Error(), out+" already exists") {
			t.Fatalf("err = %v, want one naming %s as existing", err, out)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 1 {
			t.Errorf("the existing directory changed: %v", entries)
		}
	})
	t.Run("no files", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Export(out, nil, otf2.Options{}); err == nil {
			t.Fatal("no error")
		}
		noTrace(t, out)
	})

	// A file whose level streams do not nest: the reader fails mid-way,
	// after the good file's location was written.
	bad := tracetest.NewBuilder("bad", "h", 1, time.Unix(0, 0), "main")
	b := bad.Location("broken")
	b.Put(1, tracefile.ClassRegion, encode.Record{Kind: encode.KindEnter, Time: 10, Region: 1})
	b.Put(3, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: 20})
	badFile := bad.Write(t, dir)

	mismatch := tracetest.NewBuilder("mismatch", "h", 2, time.Unix(0, 0), "main")
	mismatch.Trace.Header.Metrics = []string{"cycles", "instructions"}
	m := mismatch.Location("main")
	m.Enter(10, 1, 5)
	m.Leave(20)
	mismatchFile := mismatch.Write(t, dir)

	badName := tracetest.NewBuilder("badname", "h", 3, time.Unix(0, 0), "main")
	badName.Location("nul\x00byte")
	badNameFile := badName.Write(t, dir)

	for _, c := range []struct {
		name  string
		files []*tracefile.File
		want  string
	}{
		{"streams do not nest", []*tracefile.File{goodFile, badFile}, "do not nest"},
		{"metric values", []*tracefile.File{goodFile, mismatchFile}, `location "main": METRIC at 10 ns: metric record with 1 values, the header names 2 counters`},
		{"location name", []*tracefile.File{badNameFile}, "NUL byte"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := Export(out, c.files, otf2.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			noTrace(t, out)
		})
	}
}

func noTrace(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		entries, _ := os.ReadDir(dir)
		t.Errorf("%s left behind (%v): %v", dir, err, entries)
	}
}

// TestBoundedMemory checks that the export does not allocate per event: a
// trace ten times longer costs a handful more allocations (per bin and per
// chunk), so memory does not grow with the trace.
func TestBoundedMemory(t *testing.T) {
	mallocs := func(calls uint64) uint64 {
		f := steps(t, calls, 16<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Export(filepath.Join(t.TempDir(), "out"), []*tracefile.File{f}, otf2.Options{EventChunkSize: otf2.MinChunkSize}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	small, large := mallocs(20000), mallocs(200000)
	t.Logf("mallocs %d %d", small, large)
	const events = 2 * (200000 - 20000)
	if extra := int64(large) - int64(small); extra > events/1000 {
		t.Errorf("%d more allocations for %d more events: the export allocates per event", extra, events)
	}
}

// TestCollectives exports collective operations of a trace that records no
// communicators: MpiCollectiveBegin/End on MPI_COMM_WORLD inside their
// regions, MPI functions with the MPI paradigm and their role.
func TestCollectives(t *testing.T) {
	r := newRecorder(t, t.TempDir(), 0, measure.Config{})
	solve, allreduce, bcast, send := r.m.Region("solve"), r.m.Region("MPI_Allreduce"), r.m.Region("MPI_Bcast"), r.m.Region("MPI_Send")
	l := r.m.Location("rank 0")
	l.EnterAt(solve, r.t0+10)
	l.EnterCollectiveAt(allreduce, -1, 8, r.t0+20)
	l.LeaveAt(allreduce, r.t0+30)
	l.EnterCollectiveAt(bcast, 0, 64, r.t0+40)
	l.LeaveAt(bcast, r.t0+50)
	l.EnterAt(send, r.t0+60)
	l.LeaveAt(send, r.t0+70)
	l.LeaveAt(solve, r.t0+80)
	files := []*tracefile.File{tracetest.Finish(t, r.m)}
	anchor, st := export(t, files, otf2.Options{})
	checkArchive(t, anchor, files)
	if st.Collectives != 2 || st.CollectivesLeftOut != 0 {
		t.Errorf("stats %+v: want 2 collectives", st)
	}
	defs := definitions(t, anchor)
	for _, want := range []string{
		`Name: "solve" <\d+> .*Role: FUNCTION, Paradigm: USER`,
		`Name: "MPI_Allreduce" <\d+> .*Role: COLL_ALL2ALL, Paradigm: MPI`,
		`Name: "MPI_Bcast" <\d+> .*Role: COLL_ONE2ALL, Paradigm: MPI`,
		`Name: "MPI_Send" <\d+> .*Role: POINT2POINT, Paradigm: MPI`,
	} {
		if !regexp.MustCompile(want).MatchString(defs) {
			t.Errorf("definitions lack %s:\n%s", want, defs)
		}
	}
}

// TestCollectiveBelowRemoved: the depth policy keeps the MPI calls and
// their collectives longer than the compute regions around them, which
// then sit below a removed ancestor, deeper than the regions open: each
// collective is still exported inside its call.
func TestCollectiveBelowRemoved(t *testing.T) {
	b := tracetest.NewBuilder("below", "node", 0, time.Unix(1700000000, 0), "main", "MPI_Allreduce")
	world := b.Comm("MPI_COMM_WORLD", 0, []int32{0}, nil)
	l := b.Location("main")
	l.Enter(100, 1)
	// Depth 2 (a compute region) was removed; the call is at depth 3.
	for k := uint64(0); k < 4; k++ {
		now := 110 + 10*k
		l.Put(3, tracefile.ClassRegion, encode.Record{Kind: encode.KindEnter, Time: now, Region: 2})
		l.Put(3, tracefile.ClassCollective, encode.Record{Kind: encode.KindCollective, Time: now, Root: -1, Bytes: 8, Received: 8, Comm: world})
		l.Put(3, tracefile.ClassRegion, encode.Record{Kind: encode.KindLeave, Time: now + 5})
	}
	l.Leave(200)
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	_, st := export(t, files, otf2.Options{})
	if st.Collectives != 4 || st.CollectivesLeftOut != 0 {
		t.Errorf("stats %+v: want the 4 collectives below the removed region exported", st)
	}
}
