package tracefile

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
)

// rmaSample is sample with two windows, an RMA group and a location whose
// message level holds RMA records.
func rmaSample(t testing.TB) (*Trace, []Bin) {
	tr, _ := sample(t)
	tr.Locations = tr.Locations[:1]
	tr.Wins = []Win{{ID: 1, Comm: 1, Name: "halo"}, {ID: 2, Comm: 3}}
	tr.RmaGroups = []RmaGroup{{ID: 1, Members: []int32{0, 2}}}
	recs := []encode.Record{
		{Kind: encode.KindRmaCollectiveBegin, Time: 301, Remote: -1},
		{Kind: encode.KindRmaWinCreate, Time: 302, Win: 1, Remote: -1},
		{Kind: encode.KindRmaCollectiveEnd, Time: 303, Win: 1, Remote: -1, Aux: 3, Level: 1},
		{Kind: encode.KindRmaPut, Time: 304, Win: 1, Remote: 2, Bytes: 80, Request: 7},
		{Kind: encode.KindRmaAtomic, Time: 305, Win: 2, Remote: 1, Aux: 5, Bytes: 8, Received: 8, Request: 8},
		{Kind: encode.KindRmaRequestLock, Time: 306, Win: 2, Remote: -1, Request: 1, Aux: 1},
		{Kind: encode.KindRmaGroupSync, Time: 307, Win: 1, Remote: -1, Level: 3, Group: 1},
		{Kind: encode.KindRmaOpCompleteRemote, Time: 308, Win: 1, Remote: -1, Request: 7},
	}
	e := encode.NewEncoder(encode.All)
	b := make([]byte, 1024)
	n := e.StartBin(b, recs[0].Time, 0)
	for _, r := range recs {
		n += e.Put(b[n:], r)
	}
	reg := encode.NewEncoder(encode.All)
	rb := make([]byte, 64)
	m := reg.StartBin(rb, 300, 0)
	m += reg.Enter(rb[m:], 300, 0, 1)
	m += reg.Leave(rb[m:], 400, 0)
	bins := []Bin{
		{Location: 0, Depth: 1, Class: ClassRegion, Records: 2, Data: rb[:m]},
		{Location: 0, Depth: 1, Class: ClassMessage, Records: uint32(len(recs)), Data: b[:n]},
	}
	tr.Locations[0].Levels = levelsOf(bins)
	return tr, bins
}

func TestRmaSection(t *testing.T) {
	tr, bins := rmaSample(t)
	data := encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Wins, tr.Wins) || !reflect.DeepEqual(f.RmaGroups, tr.RmaGroups) {
		t.Errorf("windows %+v, groups %+v", f.Wins, f.RmaGroups)
	}
	if w := f.Win(2); w == nil || w.Comm != 3 {
		t.Errorf("Win(2) = %+v", w)
	}
	if f.Win(3) != nil || f.RmaGroup(2) != nil || f.RmaGroup(1) == nil {
		t.Error("Win(3) or RmaGroup(2) found, or RmaGroup(1) not")
	}
	evs, err := readAll(t, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%v %d r%d w%d to%d b%d rcv%d id%d aux%d lv%d g%d", e.Kind, e.Time, e.Region, e.Win, e.Remote,
			e.Bytes, e.Received, e.Request, e.Aux, e.Level, e.Group))
	}
	want := []string{
		"ENTER 300 r1 w0 to0 b0 rcv0 id0 aux0 lv0 g0",
		"RMA_COLLECTIVE_BEGIN 301 r1 w0 to-1 b0 rcv0 id0 aux0 lv0 g0",
		"RMA_WIN_CREATE 302 r1 w1 to-1 b0 rcv0 id0 aux0 lv0 g0",
		"RMA_COLLECTIVE_END 303 r1 w1 to-1 b0 rcv0 id0 aux3 lv1 g0",
		"RMA_PUT 304 r1 w1 to2 b80 rcv0 id7 aux0 lv0 g0",
		"RMA_ATOMIC 305 r1 w2 to1 b8 rcv8 id8 aux5 lv0 g0",
		"RMA_REQUEST_LOCK 306 r1 w2 to-1 b0 rcv0 id1 aux1 lv0 g0",
		"RMA_GROUP_SYNC 307 r1 w1 to-1 b0 rcv0 id0 aux0 lv3 g1",
		"RMA_OP_COMPLETE_REMOTE 308 r1 w1 to-1 b0 rcv0 id7 aux0 lv0 g0",
		"LEAVE 400 r1 w0 to0 b0 rcv0 id0 aux0 lv0 g0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A trace without windows writes no RMA section: the file is as before.
	plain, pbins := sample(t)
	before := encodeTrace(t, plain, pbins)
	plain.Wins, plain.RmaGroups = []Win{}, nil
	if after := encodeTrace(t, plain, pbins); !bytes.Equal(before, after) {
		t.Error("an empty window list changed the file")
	}
}

func TestRmaSectionErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Trace)
		want string
	}{
		{"id 0", func(tr *Trace) { tr.Wins[0].ID = 0 }, "RMA: window id: 0 is not a valid window id"},
		{"duplicate", func(tr *Trace) { tr.Wins[1].ID = 1 }, "RMA: window id: id 1 defined twice"},
		{"no comm", func(tr *Trace) { tr.Wins[1].Comm = 9 }, "window 2 names communicator 9, which is not defined"},
		{"group 0", func(tr *Trace) { tr.RmaGroups[0].ID = 0 }, "RMA: RMA group id: 0 is not a valid group id"},
		{"group twice", func(tr *Trace) { tr.RmaGroups = append(tr.RmaGroups, tr.RmaGroups[0]) }, "RMA group id: id 1 defined twice"},
		{"negative rank", func(tr *Trace) { tr.RmaGroups[0].Members[1] = -3 }, "RMA group members: value -3 out of range"},
	}
	for _, c := range cases {
		tr, bins := rmaSample(t)
		c.mod(tr)
		data := encodeTrace(t, tr, bins)
		_, err := Read(bytes.NewReader(data), int64(len(data)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
