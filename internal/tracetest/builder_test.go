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

// Communicators, records of requests and collectives, and the matrix Write
// counts from the messages come back from the reader.
func TestBuilderMPI(t *testing.T) {
	b := tracetest.NewBuilder("mpi", "node", 1, time.Unix(1700000000, 0), "main", "MPI_Iallreduce", "MPI_Wait")
	b.Matrix = true
	world := b.Comm("MPI_COMM_WORLD", 0, []int32{0, 1, 2}, nil)
	b.Comm("MPI_COMM_SELF", 0, []int32{1}, nil)
	split := b.Comm("", world, []int32{2, 1}, nil)
	l := b.Location("rank 1")
	l.Enter(10, 1)
	l.MessageComm(11, encode.KindSend, 2, 5, 100, split)
	l.Isend(12, 0, 6, 40, world, 1)
	l.Request(12, encode.KindIrecvRequest, 2)
	l.Request(13, encode.KindIsendComplete, 1)
	l.Irecv(14, 0, 6, 8, world, 2)
	l.Enter(15, 2)
	l.Request(15, encode.KindCollRequest, 3)
	l.Leave(16)
	l.Enter(17, 3)
	l.CollComplete(18, 2, -1, 8, 24, world, 3)
	l.Leave(19)
	l.Message(20, encode.KindSend, 2, true, 5, 1)
	l.Leave(30)
	f := b.Write(t, t.TempDir())

	if len(f.Comms) != 3 || f.Comms[2].Parent != world || f.Comms[0].Name != "MPI_COMM_WORLD" {
		t.Errorf("comms %+v", f.Comms)
	}
	wantMatrix := []tracefile.CommCount{{Peer: 0, PeerRank: true, Sent: 1, SentBytes: 40, Received: 1, ReceivedBytes: 8},
		{Peer: 2, PeerRank: true, Sent: 2, SentBytes: 101}}
	if got := f.Locations[0].Comm; fmt.Sprint(got) != fmt.Sprint(wantMatrix) {
		t.Errorf("matrix %+v, want %+v", got, wantMatrix)
	}
	var got []string
	it := f.Events(0)
	var e tracefile.Event
	for it.Next(&e) {
		got = append(got, fmt.Sprintf("%v %d r%d c%d q%d", e.Kind, e.Time, e.Region, e.Comm, e.Request))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	want := "ENTER 10 r1 c0 q0,SEND 11 r1 c3 q0,ISEND 12 r1 c1 q1,IRECV_REQUEST 12 r1 c0 q2,ISEND_COMPLETE 13 r1 c0 q1," +
		"IRECV 14 r1 c1 q2,ENTER 15 r2 c0 q0,COLL_REQUEST 15 r2 c0 q3,LEAVE 16 r2 c0 q0,ENTER 17 r3 c0 q0," +
		"COLL_COMPLETE 18 r2 c1 q3,LEAVE 19 r3 c0 q0,SEND 20 r1 c0 q0,LEAVE 30 r1 c0 q0"
	if strings.Join(got, ",") != want {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
}
