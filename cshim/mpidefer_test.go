package cshim_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIDeferredReceive runs testdata/c/mpidefer.c: a blocking receive
// recorded with hmb_mpi_call is staged and written by its thread's next
// probe (cshim/lib/mpicall.c), off a ping-pong's critical path. Whatever
// that next probe is (a region's enter, another receive, a send recorded
// whole, a message probe, the thread's exit, the process's), the trace
// must be the one written at once: every receive inside its MPI_Recv with
// its fields, in order, counted in the matrix, and with its own times: a
// receive followed by a spin of 200 µs has its leave at least that long
// before the next event. The same holds on the direct path, with bins so
// small that the deferred receive often finds no room and is replayed in
// Go, and with every probe staged; the three traces hold the same
// messages. A send after a receive is written with it in one probe
// (hmb_mpi_pair): every peer's line of the matrix counts what the trace
// holds, and the flat profile is the one the events give (the timer at
// full resolution), so a call's visit, times and its caller's child time
// are those a probe per event would have counted.
func TestMPIDeferredReceive(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "mpidefer", []string{"-I" + filepath.Join(root, "cshim", "lib")},
		filepath.Join(root, "cshim", "testdata", "c", "mpidefer.c"))
	const iterations, gap = 4000, 501 // spun after in iterations of each kind (i%4)
	var first map[string][]deferredMsg
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"direct", []string{"HMB_C_PROBE=direct", "HMB_TIMER_SHIFT=0"}},
		{"small bins", []string{"HMB_C_PROBE=direct", "HMB_BIN_SIZE=1K", "HMB_TIMER_SHIFT=0"}},
		{"staged", []string{"HMB_C_PROBE=staged", "HMB_TIMER_SHIFT=0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := p
			q.out = t.TempDir()
			if _, stderr := q.run(t, c.env, fmt.Sprint(iterations), fmt.Sprint(gap)); stderr != "" {
				t.Errorf("stderr:\n%s", stderr)
			}
			f, err := tracefile.Open(filepath.Join(q.out, "mpidefer.0.hmb"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(f.Locations) != 2 {
				t.Fatalf("%d locations, want 2 (main and worker)", len(f.Locations))
			}
			got := map[string][]deferredMsg{}
			for i := range f.Locations {
				l := &f.Locations[i]
				name := "main"
				if l.Name == "worker" {
					name = "worker"
				}
				msgs := deferredMessages(t, f, l, (iterations+gap-1)/gap)
				got[name] = msgs
				// Per iteration a receive, and in three of four a second
				// receive, a send recorded whole or a message probe's send;
				// the last receive.
				if want := iterations + iterations/4*3 + 1; len(msgs) != want {
					t.Errorf("%s: %d messages, want %d", l.Name, len(msgs), want)
				}
				var recv, sent uint64
				for _, m := range msgs {
					if m.Kind == encode.KindRecv {
						recv++
					} else {
						sent++
					}
				}
				var mrecv, msent uint64
				for _, cc := range l.Comm {
					mrecv += cc.Received
					msent += cc.Sent
				}
				if mrecv != recv || msent != sent {
					t.Errorf("%s: matrix received %d, sent %d; the trace %d and %d", l.Name, mrecv, msent, recv, sent)
				}
				checkDeferredMatrix(t, l, msgs)
				checkDeferredProfile(t, f, l)
				if l.Accounted() != l.Recorded {
					t.Errorf("%s: %d events accounted for, %d recorded", l.Name, l.Accounted(), l.Recorded)
				}
			}
			if first == nil {
				first = got
			} else if !reflect.DeepEqual(first, got) {
				t.Errorf("messages differ from the direct run's")
			}
		})
	}
}

// deferredMsg is a message of mpidefer.c: the region it is in, its kind and fields.
type deferredMsg struct {
	Region string
	Kind   encode.Kind
	Peer   uint64
	Tag    uint32
	Bytes  uint64
}

// deferredMessages reads location l's messages, checking that each
// receive lies in an MPI_Recv right before its leave, that the events'
// times never go back, that the location's last event is an MPI_Recv's
// leave, and that each receive of tag 77 (spun after, spins of them) ends
// its call at least 150 µs before the next event.
func deferredMessages(t *testing.T, f *tracefile.File, l *tracefile.Location, spins int) []deferredMsg {
	t.Helper()
	var (
		e, last    tracefile.Event
		stack      []string
		out        []deferredMsg
		spunLeave  int64 = -1 // the time of the leave of a receive of tag 77, until the next event
		spun, n    int
		pending    bool
		lastRegion string
	)
	it := f.Events(l.ID)
	for ; it.Next(&e); n++ {
		if n > 0 && (e.Time < last.Time || (e.Time == last.Time && e.Seq <= last.Seq)) {
			t.Fatalf("%s: event %d (%v) at %d.%d after %d.%d", l.Name, n, e.Kind, e.Time, e.Seq, last.Time, last.Seq)
		}
		last = e
		if spunLeave >= 0 {
			if d := f.Nanos(e.Time) - spunLeave; d < 150_000 {
				t.Errorf("%s: event %d (%v) %d ns after the leave of a receive the thread spun 200 µs after", l.Name, n, e.Kind, d)
			}
			spunLeave = -1
			spun++
		}
		switch e.Kind {
		case encode.KindEnter:
			if pending {
				t.Fatalf("%s: event %d: an enter between a receive and its leave", l.Name, n)
			}
			stack = append(stack, f.RegionName(e.Region))
		case encode.KindLeave:
			if len(stack) == 0 {
				t.Fatalf("%s: event %d: a leave with no region open", l.Name, n)
			}
			lastRegion = stack[len(stack)-1]
			if pending && out[len(out)-1].Tag == 77 {
				spunLeave = f.Nanos(e.Time)
			}
			pending = false
			stack = stack[:len(stack)-1]
		case encode.KindSend, encode.KindRecv:
			m := deferredMsg{Kind: e.Kind, Peer: e.Peer, Tag: e.Tag, Bytes: e.Bytes}
			if len(stack) > 0 {
				m.Region = stack[len(stack)-1]
			}
			if pending || (e.Kind == encode.KindRecv && m.Region != "MPI_Recv") {
				t.Fatalf("%s: event %d: %+v (a receive pending: %v), want a receive inside its MPI_Recv", l.Name, n, m, pending)
			}
			pending = e.Kind == encode.KindRecv
			out = append(out, m)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", l.Name, err)
	}
	if last.Kind != encode.KindLeave || lastRegion != "MPI_Recv" || len(stack) != 0 {
		t.Errorf("%s: last event %v of %q, %d regions open; want the leave of the last MPI_Recv", l.Name, last.Kind, lastRegion, len(stack))
	}
	if spun != spins {
		t.Errorf("%s: %d receives of tag 77 followed by an event, want %d", l.Name, spun, spins)
	}
	return out
}

// checkDeferredMatrix checks that each peer's line of location l's
// communication matrix counts the messages msgs of the trace with it.
func checkDeferredMatrix(t *testing.T, l *tracefile.Location, msgs []deferredMsg) {
	t.Helper()
	type counts struct{ sent, sentBytes, recv, recvBytes uint64 }
	want := map[uint64]counts{}
	for _, m := range msgs {
		c := want[m.Peer]
		if m.Kind == encode.KindRecv || m.Kind == encode.KindIrecv {
			c.recv++
			c.recvBytes += m.Bytes
		} else {
			c.sent++
			c.sentBytes += m.Bytes
		}
		want[m.Peer] = c
	}
	got := map[uint64]counts{}
	for _, cc := range l.Comm {
		if cc.PeerRank {
			got[cc.Peer] = counts{cc.Sent, cc.SentBytes, cc.Received, cc.ReceivedBytes}
		}
	}
	for peer, w := range want {
		if got[peer] != w {
			t.Errorf("%s: peer %d: matrix %+v, the trace's %+v", l.Name, peer, got[peer], w)
		}
	}
	for peer, g := range got {
		if _, ok := want[peer]; !ok {
			t.Errorf("%s: peer %d: matrix %+v, no message in the trace", l.Name, peer, g)
		}
	}
}

// checkDeferredProfile checks location l's flat profile against the one
// its events give: visits, inclusive time (recursion counted once) and
// exclusive time per region, in ticks. It needs every event kept and the
// timer at full resolution.
func checkDeferredProfile(t *testing.T, f *tracefile.File, l *tracefile.Location) {
	t.Helper()
	type open struct {
		region       uint32
		start, child uint64
	}
	want := map[uint32]*tracefile.ProfileEntry{}
	var stack []open
	var e tracefile.Event
	it := f.Events(l.ID)
	for it.Next(&e) {
		switch e.Kind {
		case encode.KindEnter:
			stack = append(stack, open{region: e.Region, start: e.Time})
			p := want[e.Region]
			if p == nil {
				p = &tracefile.ProfileEntry{Region: e.Region}
				want[e.Region] = p
			}
			p.Visits++
		case encode.KindLeave:
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			dur := e.Time - o.start
			p := want[o.region]
			recursive := false
			for _, q := range stack {
				recursive = recursive || q.region == o.region
			}
			if !recursive {
				p.Inclusive += dur
			}
			p.Exclusive += dur - o.child
			if len(stack) > 0 {
				stack[len(stack)-1].child += dur
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", l.Name, err)
	}
	for _, p := range l.Profile {
		w := want[p.Region]
		if p.Visits == 0 && w == nil {
			continue
		}
		if w == nil || p.Visits != w.Visits || p.Inclusive != w.Inclusive || p.Exclusive != w.Exclusive {
			t.Errorf("%s: profile of %s: %d visits, %d ticks inclusive, %d exclusive; the events give %+v",
				l.Name, f.RegionName(p.Region), p.Visits, p.Inclusive, p.Exclusive, w)
		}
		delete(want, p.Region)
	}
	for r, w := range want {
		t.Errorf("%s: region %s has %d visits in the events, none in the profile", l.Name, f.RegionName(r), w.Visits)
	}
}
