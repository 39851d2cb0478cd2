package cshim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestProbePaths runs testdata/c/paths.c, which takes every path of the C
// probes, with its enters and leaves written in place by the probes
// (HMB_C_PROBE=direct, the default) and replayed in Go (staged): the two
// traces must tell the same story. With a buffer that holds the whole run,
// the same events in the same order, and each region's exact inclusive time
// equal to what its events span; with a small one, reduced, the same counts
// and every event accounted for.
func TestProbePaths(t *testing.T) {
	build := library(t)
	dir := t.TempDir()
	hooked := filepath.Join(dir, "hooked.o")
	if msg, err := run(root, nil, "gcc", "-O2", "-g", "-c", "-finstrument-functions", "-o", hooked,
		filepath.Join(root, "cshim", "testdata", "c", "paths_hooked.c")); err != nil {
		t.Fatalf("gcc paths_hooked.c: %v\n%s", err, msg)
	}
	p := buildC(t, build, "paths", nil, filepath.Join(root, "cshim", "testdata", "c", "paths.c"), hooked)
	filter := filepath.Join(dir, "filter")
	if err := os.WriteFile(filter, []byte("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE skipped\nSCOREP_REGION_NAMES_END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	record := func(t *testing.T, mode string, env []string) (*tracefile.File, []event) {
		t.Helper()
		q := p
		q.out = filepath.Join(dir, t.Name(), mode)
		// Throttling off: whether a region of 1024 short calls is throttled
		// depends on the load, and the two paths are compared event by event.
		_, stderr := q.run(t, append([]string{"HMB_C_PROBE=" + mode, "HMB_FILTER_FILE=" + filter, "HMB_THROTTLE=0"}, env...))
		if stderr = withoutExitLines(stderr); stderr != "" {
			// The direct path says so when it cannot be taken.
			t.Errorf("HMB_C_PROBE=%s: stderr:\n%s", mode, stderr)
		}
		path := filepath.Join(q.out, "paths.0.hmb")
		f, err := tracefile.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if len(f.Locations) != 1 {
			t.Fatalf("HMB_C_PROBE=%s: %d locations, want 1", mode, len(f.Locations))
		}
		return f, dump(t, path)
	}
	var whole []tracefile.CommCount // the matrix of the unreduced run
	t.Run("whole", func(t *testing.T) {
		direct, devs := record(t, "direct", nil)
		staged, sevs := record(t, "staged", nil)
		sameCounts(t, direct, staged)
		if len(devs) != len(sevs) {
			t.Fatalf("direct: %d events, staged: %d", len(devs), len(sevs))
		}
		for i := range devs {
			d, s := devs[i], sevs[i]
			if d.kind != s.kind || d.region != s.region || d.depth != s.depth {
				t.Fatalf("event %d: direct %s %s at depth %d, staged %s %s at depth %d",
					i, d.kind, d.region, d.depth, s.kind, s.region, s.depth)
			}
		}
		checkTrace(t, devs, []string{"step", "r00", "r99", "nap", "allreduce", "leaf", "middle", "hooked"}, nil)
		// What dump does not show: the messages' and collectives' fields.
		if d, s := payloads(t, direct), payloads(t, staged); d != s {
			t.Errorf("messages and collectives differ\ndirect: %.300s\nstaged: %.300s", d, s)
		} else {
			for _, want := range []string{"coll allreduce -1 0", "coll allreduce 1 8", "send 1 0 64 rank",
				"send 1 1 1 rank comm 1", "send 0 0 0 rank comm 3", "recv 3 9 100 rank comm 3",
				"ISEND 0 2 4096 comm 1 req 1", "IRECV_REQUEST req 2", "ISEND_COMPLETE req 1", "IRECV 0 2 512 comm 1 req 2",
				"REQUEST_CANCELLED req 3", "coll allreduce -1 16 received 128 comm 1", "COLL_REQUEST req 4",
				"COLL_COMPLETE iallreduce -1 8 received 64 comm 3 req 4"} {
				if !strings.Contains(d, want) {
					t.Errorf("direct: no %q in the messages and collectives %.600s", want, d)
				}
			}
		}
		checkComms(t, direct)
		checkComms(t, staged)
		if !reflect.DeepEqual(direct.Locations[0].Comm, staged.Locations[0].Comm) {
			t.Errorf("matrix differs\ndirect: %+v\nstaged: %+v", direct.Locations[0].Comm, staged.Locations[0].Comm)
		}
		if got, want := direct.Locations[0].Comm, matrixOf(t, direct); !reflect.DeepEqual(got, want) {
			t.Errorf("direct: matrix\n%+v\nfrom the records\n%+v", got, want)
		}
		whole = direct.Locations[0].Comm
		inclusiveMatchesEvents(t, direct, devs)
		inclusiveMatchesEvents(t, staged, sevs)
	})
	t.Run("reduced", func(t *testing.T) {
		env := []string{"HMB_BUFFER_SIZE=64K", "HMB_BIN_SIZE=1K"}
		direct, devs := record(t, "direct", env)
		staged, _ := record(t, "staged", env)
		sameCounts(t, direct, staged)
		checkTrace(t, devs, []string{"step"}, nil)
		if direct.Locations[0].Removed().Total() == 0 {
			t.Errorf("direct: nothing removed from a 64 KiB buffer: the test no longer reduces")
		}
		sameMatrix(t, whole, direct, staged, false)
	})
	t.Run("classes", func(t *testing.T) {
		// The class policy closes messages and collectives first.
		env := []string{"HMB_BUFFER_SIZE=64K", "HMB_BIN_SIZE=1K", "HMB_REDUCTION=class"}
		direct, devs := record(t, "direct", env)
		staged, _ := record(t, "staged", env)
		sameCounts(t, direct, staged)
		checkTrace(t, devs, []string{"step"}, nil)
		if byClass := direct.Locations[0].Removed()[tracefile.ByClass]; byClass == 0 {
			t.Errorf("direct: nothing removed by class: the class policy closed nothing")
		}
		sameMatrix(t, whole, direct, staged, true)
	})
}

// sameCounts checks what two runs of paths.c counted: events recorded and
// filtered, usage errors, visits per region, and that each accounts for
// every event it recorded.
func sameCounts(t *testing.T, direct, staged *tracefile.File) {
	t.Helper()
	d, s := &direct.Locations[0], &staged.Locations[0]
	if d.Recorded != s.Recorded || d.FilteredName != s.FilteredName || d.Usage != s.Usage {
		t.Errorf("direct: recorded %d, filtered %d, usage %+v\nstaged: recorded %d, filtered %d, usage %+v",
			d.Recorded, d.FilteredName, d.Usage, s.Recorded, s.FilteredName, s.Usage)
	}
	if d.FilteredName == 0 || d.Usage.LeftImplicitly == 0 || d.Usage.LeaveNothingOpen == 0 || d.Usage.UnknownRegion == 0 {
		t.Errorf("direct: filtered %d, usage %+v: the filter and the misuse of paths.c are not counted", d.FilteredName, d.Usage)
	}
	for _, l := range []*tracefile.Location{d, s} {
		if l.Accounted() != l.Recorded {
			t.Errorf("%s: %d events accounted for, %d recorded", l.Name, l.Accounted(), l.Recorded)
		}
	}
	visits := func(f *tracefile.File) string {
		var out []string
		for _, e := range f.Locations[0].Profile {
			if e.Visits > 0 {
				out = append(out, fmt.Sprintf("%s:%d", f.RegionName(e.Region), e.Visits))
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	if dv, sv := visits(direct), visits(staged); dv != sv {
		t.Errorf("visits per region differ\ndirect: %s\nstaged: %s", dv, sv)
	}
}

// checkComms checks the communicators paths.c defines.
func checkComms(t *testing.T, f *tracefile.File) {
	t.Helper()
	want := []tracefile.Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: []int32{0, 1, 2, 3, 4, 5, 6, 7}},
		{ID: 2, Name: "MPI_COMM_SELF", Members: []int32{0}}, {ID: 3, Parent: 1, Members: []int32{1, 3, 5, 7}},
		{ID: 4, Parent: 3, Members: []int32{0}, Remote: []int32{1, 3, 5, 7}}}
	if !reflect.DeepEqual(f.Comms, want) {
		t.Errorf("%s: communicators %+v", f.Path, f.Comms)
	}
}

// matrixOf counts a trace's messages per peer from its records, as the
// probes count them, for a trace that kept every message.
func matrixOf(t *testing.T, f *tracefile.File) []tracefile.CommCount {
	t.Helper()
	lines := map[uint64]*tracefile.CommCount{}
	var e tracefile.Event
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		var sent bool
		switch e.Kind {
		case encode.KindSend, encode.KindIsend:
			sent = true
		case encode.KindRecv, encode.KindIrecv:
		default:
			continue
		}
		c := lines[e.Peer]
		if c == nil {
			c = &tracefile.CommCount{Peer: e.Peer, PeerRank: e.PeerRank}
			lines[e.Peer] = c
		}
		if sent {
			c.Sent++
			c.SentBytes += e.Bytes
		} else {
			c.Received++
			c.ReceivedBytes += e.Bytes
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	var out []tracefile.CommCount
	for _, c := range lines {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b tracefile.CommCount) int { return int(a.Peer) - int(b.Peer) })
	return out
}

// sameMatrix checks that the reduced runs' matrices are the unreduced
// run's: counted at the probe, whatever the buffer shed (which must be
// messages if shed is set).
func sameMatrix(t *testing.T, whole []tracefile.CommCount, direct, staged *tracefile.File, shed bool) {
	t.Helper()
	if whole == nil {
		t.Fatal("no matrix from the unreduced run")
	}
	for _, f := range []*tracefile.File{direct, staged} {
		if got := f.Locations[0].Comm; !reflect.DeepEqual(got, whole) {
			t.Errorf("%s: matrix\n%+v\nunreduced run's\n%+v", f.Path, got, whole)
		}
	}
	if kept := matrixOf(t, direct); shed && sum(kept) == sum(whole) {
		t.Errorf("%s: the buffer kept every message: the test sheds none", direct.Path)
	}
}

func sum(m []tracefile.CommCount) (n uint64) {
	for _, c := range m {
		n += c.Sent + c.Received
	}
	return n
}

// payloads lists a trace's messages (kind, peer, tag, bytes, comm) and
// collectives (region, root, bytes, received, comm), and the records of
// requests, in order.
func payloads(t *testing.T, f *tracefile.File) string {
	t.Helper()
	var out []string
	var e tracefile.Event
	it := f.Events(f.Locations[0].ID)
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindSend, encode.KindRecv:
			kind := "send"
			if e.Kind == encode.KindRecv {
				kind = "recv"
			}
			rank := ""
			if e.PeerRank {
				rank = " rank"
			}
			if e.Comm != 0 {
				rank += fmt.Sprintf(" comm %d", e.Comm)
			}
			out = append(out, fmt.Sprintf("%s %d %d %d%s", kind, e.Peer, e.Tag, e.Bytes, rank))
		case encode.KindCollective:
			s := fmt.Sprintf("coll %s %d %d", f.RegionName(e.Region), e.Root, e.Bytes)
			if e.Received != 0 || e.Comm != 0 {
				s += fmt.Sprintf(" received %d comm %d", e.Received, e.Comm)
			}
			out = append(out, s)
		case encode.KindIsend, encode.KindIrecv:
			out = append(out, fmt.Sprintf("%v %d %d %d comm %d req %d", e.Kind, e.Peer, e.Tag, e.Bytes, e.Comm, e.Request))
		case encode.KindIsendComplete, encode.KindIrecvRequest, encode.KindRequestCancelled, encode.KindCollRequest:
			out = append(out, fmt.Sprintf("%v req %d", e.Kind, e.Request))
		case encode.KindCollComplete:
			out = append(out, fmt.Sprintf("%v %s %d %d received %d comm %d req %d", e.Kind, f.RegionName(e.Region), e.Root, e.Bytes, e.Received, e.Comm, e.Request))
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "; ")
}

// inclusiveMatchesEvents checks, for a trace that kept every event, that
// each region's inclusive and exclusive times in the exact profile are what
// its enters and leaves span, to the timer's resolution: the profile is
// summed from the clock, the events are the encoded bytes read back.
func inclusiveMatchesEvents(t *testing.T, f *tracefile.File, evs []event) {
	t.Helper()
	tick := float64(uint64(1)<<f.Header.TimerShift) * 1e9 / f.Header.TicksPerSecond
	span, self := map[string]float64{}, map[string]float64{}
	nchildren := map[string]int{}
	type frame struct {
		enter    event
		children float64
		n        int
	}
	var open []frame
	for _, e := range evs {
		switch e.kind {
		case "ENTER":
			open = append(open, frame{enter: e})
		case "LEAVE":
			top := open[len(open)-1]
			open = open[:len(open)-1]
			d := float64(e.ns - top.enter.ns)
			span[e.region] += d
			self[e.region] += d - top.children
			nchildren[e.region] += top.n
			if len(open) > 0 {
				open[len(open)-1].children += d
				open[len(open)-1].n++
			}
		}
	}
	for _, p := range f.Locations[0].Profile {
		name := f.RegionName(p.Region)
		if p.Visits == 0 || name == "skipped" {
			continue
		}
		incl := float64(p.Inclusive) * 1e9 / f.Header.TicksPerSecond
		excl := float64(p.Exclusive) * 1e9 / f.Header.TicksPerSecond
		// Each duration is off by less than two ticks; an exclusive time
		// also by its children's.
		slack := 2*tick*float64(int(p.Visits)+nchildren[name]) + 1
		if diff := incl - span[name]; diff > 2*tick*float64(p.Visits)+1 || -diff > 2*tick*float64(p.Visits)+1 {
			t.Errorf("%s: %s inclusive %.0f ns in the profile, %.0f ns between its events (%d visits, tick %.1f ns)",
				f.Path, name, incl, span[name], p.Visits, tick)
		}
		if diff := excl - self[name]; diff > slack || -diff > slack {
			t.Errorf("%s: %s exclusive %.0f ns in the profile, %.0f ns from its events", f.Path, name, excl, self[name])
		}
	}
}

// wholeLocation opens a trace of one location and checks that every event
// it recorded is accounted for and every one it kept reads back; it
// returns the location.
func wholeLocation(t *testing.T, file string) tracefile.Location {
	t.Helper()
	f, err := tracefile.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Locations) != 1 {
		t.Fatalf("%s: %d locations, want 1", file, len(f.Locations))
	}
	l := f.Locations[0]
	if l.Accounted() != l.Recorded {
		t.Errorf("%d events accounted for, %d recorded", l.Accounted(), l.Recorded)
	}
	var e tracefile.Event
	it := f.Events(l.ID)
	n := uint64(0)
	for it.Next(&e) {
		n++
	}
	if it.Err() != nil || n != l.Kept() {
		t.Errorf("read %d of %d events: %v", n, l.Kept(), it.Err())
	}
	return l
}

// handlerLoss returns how far the probes made are from those in the trace
// or counted as dropped, as a share of those made, and how far they may be
// in probe mode mode: a handler's probe that interrupts a staging append
// can take that probe's place. Measured: none in ten runs direct, up to
// one in a thousand staged, where every probe goes through the array.
func handlerLoss(mode string, made, seen uint64) (off, bound float64) {
	off = float64(max(made, seen)-min(made, seen)) / float64(made)
	if mode == "staged" {
		return off, 1e-2
	}
	return off, 1e-4
}

// TestSignalReentry runs testdata/c/reentry.c: a signal handler probes
// thousands of times, interrupting the probes of the thread it runs on.
// Probes are not async-signal-safe (hmbtrace.h): a handler's probe that
// interrupts a staging append can take that probe's place. But nothing may
// crash, the trace must read back whole with every recorded event
// accounted for, and what is lost must stay that rare race.
func TestSignalReentry(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "reentry", nil, filepath.Join(root, "cshim", "testdata", "c", "reentry.c"))
	for _, mode := range []string{"direct", "staged"} {
		t.Run(mode, func(t *testing.T) {
			q := p
			q.out = filepath.Join(t.TempDir(), "hmb-out")
			// Unthrottled: the test counts every probe into the trace.
			out, _ := q.run(t, []string{"HMB_C_PROBE=" + mode, "HMB_THROTTLE=0"})
			var probes, handler, dropped uint64
			if _, err := fmt.Sscanf(out, "probes %d handler %d dropped %d", &probes, &handler, &dropped); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			l := wholeLocation(t, filepath.Join(q.out, "reentry.0.hmb"))
			made, seen := probes+handler, l.Recorded+dropped
			t.Logf("%d probes made, %d in the trace or dropped (usage %+v)", made, seen, l.Usage)
			if off, bound := handlerLoss(mode, made, seen); handler == 0 || off > bound {
				t.Errorf("%d probes made (%d by the handler), %d in the trace or dropped: off by %.2g", made, handler, seen, off)
			}
		})
	}
}
