package comm_test

import (
	"reflect"
	"testing"
	"time"

	. "github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// fromParts makes the matrix as the ranks make it in-situ: each rank its
// part, through the wire form they travel in, then the archive's.
func fromParts(t *testing.T, files []*tracefile.File) *Matrix {
	t.Helper()
	var parts []Part
	// Gathered in reverse: FromParts puts them in rank order itself.
	for i := len(files) - 1; i >= 0; i-- {
		p, err := Local(files[i])
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	up, err := UnmarshalPartsWire(MarshalPartsWire(parts))
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalParts(up)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := MarshalParts(parts); string(b) != string(want) {
		t.Fatalf("through the wire form:\n%s\nwant\n%s", b, want)
	}
	back, err := UnmarshalParts(b)
	if err != nil {
		t.Fatal(err)
	}
	return FromParts(back)
}

// The ranks' parts make the matrix the files make: the same nodes, cells,
// counts of exact and shed senders, whether the buffer shed messages or not.
func TestPartsMakeTheFilesMatrix(t *testing.T) {
	for _, c := range []struct {
		name        string
		buffer, bin int
	}{{"unreduced", 64 << 20, 0}, {"reduced", 32 << 10, 1 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			files := recordDeep(t, t.TempDir(), c.buffer, c.bin)
			want, err := FromFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			got := fromParts(t, files)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("from the parts\n%+v\nfrom the files\n%+v", got, want)
			}
			if len(got.Cells) != 8 || got.Unmatched != 0 {
				t.Errorf("%d cells, %d unmatched: want 8, 0", len(got.Cells), got.Unmatched)
			}
		})
	}
}

// Sends within a rank, by rank to a location that is not the first, to a
// rank no part has, and from a file without exact matrices.
func TestPartsResolveAsFiles(t *testing.T) {
	file := func(rank int, peers ...int) *tracefile.File {
		b := tracetest.NewBuilder("z", "host", rank, time.Unix(0, 0), "work")
		a, c := b.Location("a"), b.Location("c")
		a.Enter(10, 1)
		a.Message(11, encode.KindSend, 1, false, 0, 8) // a -> c
		a.Leave(20)
		c.Enter(10, 1)
		c.Message(12, encode.KindSend, 0, false, 0, 16) // c -> a
		for _, p := range peers {
			c.Message(13, encode.KindSend, uint64(p), true, 0, 32)
		}
		c.Leave(20)
		return b.Write(t, t.TempDir())
	}
	files := []*tracefile.File{file(0, 1, 7), file(1, 0), file(2)}
	want, err := FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	got := fromParts(t, files)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("from the parts\n%+v\nfrom the files\n%+v", got, want)
	}
	if got.Unmatched != 1 || got.Counted != 6 {
		t.Errorf("unmatched %d, counted %d: want 1 (to rank 7), 6", got.Unmatched, got.Counted)
	}
}

// A part that does not hold together is an error naming its rank.
func TestUnmarshalPartsRefusesBadSends(t *testing.T) {
	b, err := MarshalParts([]Part{{Rank: 3, Nodes: []string{"a"}, IDs: []uint32{1}, Sends: []PartSend{{From: 2, ToRank: 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalParts(b); err == nil {
		t.Error("a send from location 2 of 1 was read")
	}
	if _, err := UnmarshalPartsWire(MarshalPartsWire([]Part{{Rank: 3, Nodes: []string{"a"}, IDs: []uint32{1}, Sends: []PartSend{{From: 2, ToRank: 0}}}})); err == nil {
		t.Error("a send from location 2 of 1 was read from the wire form")
	}
}

// FuzzUnmarshalPartsWire feeds any bytes to the wire form's reader: it
// must not panic, and what it reads writes the same wire form and JSON.
func FuzzUnmarshalPartsWire(f *testing.F) {
	f.Add(MarshalPartsWire([]Part{
		{Rank: 0, Nodes: []string{"rank 0", "rank 0: thread 1"}, IDs: []uint32{1, 2}, RankLoc: 0,
			Sends: []PartSend{{From: 0, ToRank: 1, ToLoc: -1, Messages: 20, Bytes: 10240}, {From: 1, ToRank: -1, ToLoc: 0, Messages: 3, Bytes: 24}}},
		{Rank: 1, Nodes: []string{"rank 1"}, IDs: []uint32{1}, RankLoc: -1, Unmatched: 2, Exact: 1, Counted: 1, Shed: 4, Channel: 5, ChannelUnreceived: 1},
	}))
	f.Add(MarshalPartsWire(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := UnmarshalPartsWire(b)
		if err != nil {
			return
		}
		again := MarshalPartsWire(ps)
		back, err := UnmarshalPartsWire(again)
		if err != nil {
			t.Fatalf("written again, not read: %v", err)
		}
		j1, err1 := MarshalParts(ps)
		j2, err2 := MarshalParts(back)
		if err1 != nil || err2 != nil || string(j1) != string(j2) {
			t.Fatalf("read again as %s (%v), want %s (%v)", j2, err2, j1, err1)
		}
	})
}

// TestPartsWireEmptyPart: a rank's part with no locations and nothing
// counted, its wire form's smallest (11 bytes), reads back; alone and
// among others. The wire reader once wanted 12 bytes a part and refused
// it, so that the run's matrix at the collective end lacked the rank.
func TestPartsWireEmptyPart(t *testing.T) {
	for _, parts := range [][]Part{
		{{Rank: 55, RankLoc: -1}},
		{{Rank: 54, Nodes: []string{"n"}, IDs: []uint32{1}}, {Rank: 55, RankLoc: -1}},
	} {
		b := MarshalPartsWire(parts)
		got, err := UnmarshalPartsWire(b)
		if err != nil {
			t.Fatalf("%d parts, %d bytes: %v", len(parts), len(b), err)
		}
		if !reflect.DeepEqual(got, parts) {
			t.Errorf("read back %+v, want %+v", got, parts)
		}
	}
}
