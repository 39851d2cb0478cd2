package tracetest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The reader gives back what was built: every event with its depth,
// region, sequence number at equal times, counter values and message
// fields, and the level statistics and end time Write fills in.
func TestBuilderRoundTrip(t *testing.T) {
	b := tracetest.NewBuilder("run", "node", 2, time.Unix(1700000000, 0), "main", "solve")
	b.Trace.Header.Metrics = []string{"cycles"}
	idle := b.Location("idle")
	idle.Enter(5, 1)
	l := b.Location("worker")
	l.Enter(10, 1, 100)
	l.Enter(10, 2)
	l.Message(15, encode.KindSend, 3, true, 7, 64)
	l.Leave(20, 150)
	l.Message(25, encode.KindRecv, 0, false, 1, 8)
	l.Leave(30)
	b.Trace.Locations[0].Interrupted = true
	f := b.Write(t, t.TempDir())

	if !strings.HasSuffix(f.Path, "run.2.hmb") || f.Header.Host != "node" || f.Header.EndTicks != 30 {
		t.Errorf("path %s, host %q, end %d", f.Path, f.Header.Host, f.Header.EndTicks)
	}
	if !f.Locations[0].Interrupted || f.Locations[1].Recorded != 8 || len(f.Locations[1].Levels) != 6 {
		t.Errorf("locations %+v", f.Locations)
	}
	want := map[uint32][]string{
		0: {"ENTER 5.0 d1 r1"},
		1: {
			"ENTER 10.0 d1 r1",
			"METRIC 10.1 d1 r1 [100]",
			"ENTER 10.2 d2 r2",
			"SEND 15.0 d2 r2 peer 3 rank true tag 7 bytes 64",
			"LEAVE 20.0 d2 r2",
			"METRIC 20.1 d2 r2 [150]",
			"RECV 25.0 d1 r1 peer 0 rank false tag 1 bytes 8",
			"LEAVE 30.0 d1 r1",
		},
	}
	for id, w := range want {
		var got []string
		it := f.Events(id)
		var e tracefile.Event
		for it.Next(&e) {
			s := fmt.Sprintf("%v %d.%d d%d r%d", e.Kind, e.Time, e.Seq, e.Depth, e.Region)
			switch e.Kind {
			case encode.KindMetric:
				s += fmt.Sprint(" ", e.Values)
			case encode.KindSend, encode.KindRecv:
				s += fmt.Sprintf(" peer %d rank %v tag %d bytes %d", e.Peer, e.PeerRank, e.Tag, e.Bytes)
			}
			got = append(got, s)
		}
		if err := it.Err(); err != nil {
			t.Fatalf("location %d: %v", id, err)
		}
		if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("location %d:\n%s\nwant\n%s", id, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
}
