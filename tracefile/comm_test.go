package tracefile

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
)

// The records of communicators and requests come back from the reader with
// their fields, and a non-blocking collective's completion names the call
// that started it, not the region it completes in.
func TestMPIEvents(t *testing.T) {
	tr, _ := sample(t)
	tr.Locations = tr.Locations[:1]
	recs := []encode.Record{
		{Kind: encode.KindSend, Time: 301, Peer: 2, PeerRank: true, Tag: 5, Bytes: 16, Comm: 3},
		{Kind: encode.KindIsend, Time: 302, Peer: 1, PeerRank: true, Tag: 6, Bytes: 32, Comm: 1, Request: 1},
		{Kind: encode.KindIrecvRequest, Time: 302, Seq: 1, Request: 2},
		{Kind: encode.KindIsendComplete, Time: 303, Request: 1},
		{Kind: encode.KindIrecv, Time: 304, Peer: 0, PeerRank: true, Tag: 6, Bytes: 8, Comm: 1, Request: 2},
		{Kind: encode.KindRequestCancelled, Time: 305, Request: 3},
	}
	coll := []encode.Record{
		{Kind: encode.KindCollective, Time: 306, Root: 0, Bytes: 8, Received: 32, Comm: 1},
		{Kind: encode.KindCollRequest, Time: 307, Request: 4},
		{Kind: encode.KindCollComplete, Time: 308, Region: 2, Root: -1, Bytes: 8, Received: 8, Comm: 4, Request: 4},
	}
	bin := func(depth int, class Class, rs []encode.Record) Bin {
		e := encode.NewEncoder(encode.All)
		b := make([]byte, 1024)
		n := e.StartBin(b, rs[0].Time, 0)
		for _, r := range rs {
			n += e.Put(b[n:], r)
		}
		return Bin{Location: 0, Depth: depth, Class: class, Records: uint32(len(rs)), Data: b[:n]}
	}
	bins := []Bin{
		bin(1, ClassRegion, []encode.Record{{Kind: encode.KindEnter, Time: 300, Region: 1}, {Kind: encode.KindLeave, Time: 400}}),
		bin(1, ClassMessage, recs),
		bin(1, ClassCollective, coll),
	}
	tr.Locations[0].Levels = levelsOf(bins)
	data := encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Comms, tr.Comms) || !reflect.DeepEqual(f.Locations[0].Comm, tr.Locations[0].Comm) {
		t.Errorf("comms %+v, matrix %+v", f.Comms, f.Locations[0].Comm)
	}
	if c := f.Comm(4); c == nil || c.Parent != 3 || !reflect.DeepEqual(c.Remote, []int32{0, 2}) {
		t.Errorf("Comm(4) = %+v", c)
	}
	if f.Comm(9) != nil {
		t.Error("Comm(9) found")
	}
	evs, err := readAll(t, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%v %d r%d peer%d comm%d req%d b%d rcv%d", e.Kind, e.Time, e.Region, e.Peer, e.Comm, e.Request, e.Bytes, e.Received))
	}
	want := []string{
		"ENTER 300 r1 peer0 comm0 req0 b0 rcv0",
		"SEND 301 r1 peer2 comm3 req0 b16 rcv0",
		"ISEND 302 r1 peer1 comm1 req1 b32 rcv0",
		"IRECV_REQUEST 302 r1 peer0 comm0 req2 b0 rcv0",
		"ISEND_COMPLETE 303 r1 peer0 comm0 req1 b0 rcv0",
		"IRECV 304 r1 peer0 comm1 req2 b8 rcv0",
		"REQUEST_CANCELLED 305 r1 peer0 comm0 req3 b0 rcv0",
		"COLLECTIVE 306 r1 peer0 comm1 req0 b8 rcv32",
		"COLL_REQUEST 307 r1 peer0 comm0 req4 b0 rcv0",
		"COLL_COMPLETE 308 r2 peer0 comm4 req4 b8 rcv8",
		"LEAVE 400 r1 peer0 comm0 req0 b0 rcv0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A file without communicators and matrices is the first version's file:
// no new section is written, and the reader gives nil.
func TestNoCommSections(t *testing.T) {
	tr, bins := sample(t)
	tr.Comms = nil
	tr.Locations[0].Comm = nil
	data := encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if f.Comms != nil || f.Locations[0].Comm != nil {
		t.Errorf("comms %+v, matrix %+v", f.Comms, f.Locations[0].Comm)
	}
	with := encodeTrace(t, func() *Trace { tr, _ := sample(t); return tr }(), bins)
	if len(with) <= len(data) {
		t.Errorf("a trace with communicators is %d bytes, without %d", len(with), len(data))
	}
}

// Communicators and matrices that contradict themselves or the file are
// errors naming the offset and the reason.
func TestCommSectionErrors(t *testing.T) {
	// encode writes tr's head with the matrices of locs, which may name
	// locations tr does not define.
	encode := func(tr *Trace, locs []Location) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, tr)
		if err != nil {
			t.Fatal(err)
		}
		w.section(secCommMatrix, encodeCommMatrix(locs))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cases := []struct {
		name string
		mod  func(*Trace) []Location
		want string
	}{
		{"id 0", func(tr *Trace) []Location { tr.Comms[1].ID = 0; return nil }, "COMM RUNS: communicator id: 0 is not a valid communicator id"},
		{"duplicate id", func(tr *Trace) []Location { tr.Comms[1].ID = 1; return nil }, "COMM RUNS: communicator id: id 1 defined twice"},
		{"parent after", func(tr *Trace) []Location { tr.Comms[2].Parent = 4; return nil }, "communicator 3 names parent 4, which is not defined before it"},
		{"negative rank", func(tr *Trace) []Location { tr.Comms[0].Members[2] = -1; return nil }, "COMM RUNS: communicator members: a run of 2 ranks from -1 by 4 leaves 0..2147483647"},
		{"undefined location", func(tr *Trace) []Location {
			locs := append([]Location(nil), tr.Locations...)
			locs[0].ID = 7
			return locs
		}, "COMM MATRIX: matrix location: location 7 is not defined"},
		{"second matrix", func(tr *Trace) []Location { return tr.Locations }, "COMM MATRIX: matrix location: location 0 has a second matrix"},
		{"order", func(tr *Trace) []Location {
			c := tr.Locations[0].Comm
			c[0], c[1] = c[1], c[0]
			return nil
		}, "COMM MATRIX: matrix peer: location 0: peer 1 (rank false) out of order"},
	}
	for _, c := range cases {
		tr, bins := sample(t)
		var data []byte
		if locs := c.mod(tr); locs != nil {
			data = encode(tr, locs)
		} else {
			data = encodeTrace(t, tr, bins)
		}
		_, err := Read(bytes.NewReader(data), int64(len(data)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
