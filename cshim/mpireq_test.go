package cshim_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIRequestCalls runs testdata/c/mpireq.c, whose non-blocking calls
// are recorded whole when they return (hmb_mpi_req_call, mpicall.c): with
// the probes written in place (HMB_C_PROBE=direct), with bins so small that
// the fused probe often finds no room and goes event by event, and
// replayed in Go (staged). The three traces must hold the same events in
// the same order, times aside; on the direct path each request's record
// lies in its call, in the tick of the leave; every peer's matrix line
// counts what the trace holds, and the flat profile is the one the events
// give.
func TestMPIRequestCalls(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "mpireq", []string{"-I" + filepath.Join(root, "cshim", "lib")},
		filepath.Join(root, "cshim", "testdata", "c", "mpireq.c"))
	const calls = 20000
	var first []reqEvent
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
			// The runs are compared event by event: no throttling, which
			// the load decides for regions of a few thousand short calls.
			if _, stderr := q.run(t, append(c.env, "HMB_THROTTLE=0"), fmt.Sprint(calls)); stderr != "" {
				t.Errorf("stderr:\n%s", stderr)
			}
			f, err := tracefile.Open(filepath.Join(q.out, "mpireq.0.hmb"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(f.Locations) != 1 {
				t.Fatalf("%d locations, want 1", len(f.Locations))
			}
			l := &f.Locations[0]
			evs, msgs := reqEvents(t, f, l, c.name == "direct")
			// Per call an IrecvRequest and an Irecv; an Isend but in every
			// 97th, and one more in work every 100th.
			var want int
			for i := 0; i < calls; i++ {
				want += 2
				if i%97 != 3 {
					want++
					if i%100 == 1 {
						want++
					}
				}
			}
			var recs int
			for _, e := range evs {
				if e.Kind == encode.KindIsend || e.Kind == encode.KindIrecvRequest || e.Kind == encode.KindIrecv {
					recs++
				}
			}
			if recs != want {
				t.Errorf("%d request records, want %d", recs, want)
			}
			if l.Accounted() != l.Recorded {
				t.Errorf("%d events accounted for, %d recorded", l.Accounted(), l.Recorded)
			}
			checkDeferredMatrix(t, l, msgs)
			checkDeferredProfile(t, f, l)
			if first == nil {
				first = evs
			} else if !reflect.DeepEqual(first, evs) {
				n := 0
				for n < min(len(first), len(evs)) && first[n] == evs[n] {
					n++
				}
				t.Errorf("%d events, the direct run's %d; they differ from event %d on", len(evs), len(first), n)
			}
		})
	}
}

// reqEvent is an event of mpireq.c without its time: its kind, region
// name (a record's: the region open at its depth) and a record's fields.
type reqEvent struct {
	Kind           encode.Kind
	Region         string
	Peer           uint64
	Tag            uint32
	Bytes, Request uint64
}

// reqEvents reads location l's events and its messages. Each request
// record of MPI_Isend or MPI_Irecv must come right before its call's
// leave; with fused, nearly all in its tick, as the fused probe writes
// them.
func reqEvents(t *testing.T, f *tracefile.File, l *tracefile.Location, fused bool) ([]reqEvent, []deferredMsg) {
	t.Helper()
	var (
		e, last, rec  tracefile.Event
		out           []reqEvent
		msgs          []deferredMsg
		held          bool
		shared, apart int
	)
	it := f.Events(l.ID)
	for n := 0; it.Next(&e); n++ {
		if n > 0 && (e.Time < last.Time || (e.Time == last.Time && e.Seq <= last.Seq)) {
			t.Fatalf("event %d (%v) at %d.%d after %d.%d", n, e.Kind, e.Time, e.Seq, last.Time, last.Seq)
		}
		last = e
		name := f.RegionName(e.Region)
		if held {
			// A peer's first message goes event by event (Go adds its
			// matrix line), its record then at a clock read of its own.
			if e.Kind != encode.KindLeave {
				t.Fatalf("event %d (%v in %s): want the leave of the %v record's call", n, e.Kind, name, rec.Kind)
			}
			if e.Time == rec.Time {
				shared++
			} else {
				apart++
			}
		}
		held = false
		switch e.Kind {
		case encode.KindEnter, encode.KindLeave:
			out = append(out, reqEvent{Kind: e.Kind, Region: name})
		case encode.KindIsend, encode.KindIrecvRequest, encode.KindIrecv, encode.KindRecv:
			out = append(out, reqEvent{Kind: e.Kind, Region: name, Peer: e.Peer, Tag: e.Tag, Bytes: e.Bytes, Request: e.Request})
			if e.Kind != encode.KindIrecvRequest {
				msgs = append(msgs, deferredMsg{Region: name, Kind: e.Kind, Peer: e.Peer, Tag: e.Tag, Bytes: e.Bytes})
			}
			held = name == "MPI_Isend" || name == "MPI_Irecv"
			rec = e
		default:
			t.Fatalf("event %d: %v, not one mpireq.c makes", n, e.Kind)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if fused && apart > shared/100 {
		t.Errorf("%d request records in their leave's tick, %d not: the fused probe declined too many", shared, apart)
	}
	return out, msgs
}
