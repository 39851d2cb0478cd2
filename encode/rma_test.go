package encode

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomRmaRecords makes a stream of every RMA kind with random fields,
// each field set only where the kind stores it (a remote of -1 where it
// stores none, as the decoder gives it).
func randomRmaRecords(rng *rand.Rand, n int) []Record {
	var out []Record
	t := rng.Uint64N(1 << 40)
	for i := 0; i < n; i++ {
		if rng.IntN(3) > 0 {
			t += rng.Uint64N(1 << uint(rng.IntN(40)))
		}
		k := firstRma + Kind(rng.IntN(int(lastRma-firstRma)+1))
		if i < int(lastRma-firstRma)+1 {
			k = firstRma + Kind(i) // every kind at least once
		}
		r := Record{Kind: k, Time: t, Remote: -1}
		m := rmaFields[k-firstRma]
		big := func() uint64 { return rng.Uint64() >> uint(rng.IntN(64)) }
		if m&rmaWin != 0 {
			r.Win = uint32(big())
		}
		if m&rmaRemote != 0 {
			r.Remote = int64(rng.IntN(1<<31-1)) >> uint(rng.IntN(31))
			if rng.IntN(5) == 0 {
				r.Remote = -1
			}
		}
		if m&rmaBytes != 0 {
			r.Bytes = big()
		}
		if m&rmaReceived != 0 {
			r.Received = big()
		}
		if m&rmaRequest != 0 {
			r.Request = big()
		}
		if m&rmaAux != 0 {
			r.Aux = uint32(big())
		}
		if m&rmaLevel != 0 {
			r.Level = uint32(big())
		}
		if m&rmaGroup != 0 {
			r.Group = uint32(big())
		}
		out = append(out, r)
	}
	return out
}

func TestRmaRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := randomRmaRecords(rng, 200)
	for _, tech := range allTechniqueSets() {
		_, got := decodeBin(t, tech, encodeBin(t, tech, 0, recs))
		for i := range got {
			got[i].Seq = recs[i].Seq // the stream's seqs are inferred; compare the rest
		}
		if !reflect.DeepEqual(normalize(got), normalize(recs)) {
			t.Fatalf("techniques %s:\n got %+v\nwant %+v", tech, got, recs)
		}
	}
}

// TestRmaMaxSize puts the largest record of every kind with every technique
// set: none may exceed MaxRmaSize.
func TestRmaMaxSize(t *testing.T) {
	for _, tech := range allTechniqueSets() {
		for k := firstRma; k <= lastRma; k++ {
			e := NewEncoder(tech)
			b := make([]byte, 2*MaxRmaSize)
			e.StartBin(b, 0, 0)
			r := Record{Kind: k, Time: 1<<64 - 1, Seq: 1<<32 - 1, Win: 1<<32 - 1, Remote: 1<<31 - 2,
				Bytes: 1<<64 - 1, Received: 1<<64 - 1, Request: 1<<64 - 1, Aux: 1<<32 - 1, Level: 1<<32 - 1, Group: 1<<32 - 1}
			if n := e.Put(b, r); n == 0 || n > MaxRmaSize {
				t.Errorf("techniques %s, %v: %d bytes, MaxRmaSize %d", tech, k, n, MaxRmaSize)
			}
		}
	}
}

func TestRmaEncoding(t *testing.T) {
	e := NewEncoder(All)
	b := make([]byte, MaxRmaSize)
	e.StartBin(b, 10, 0)
	for _, c := range []struct {
		r    Record
		want int
	}{
		{Record{Kind: KindRmaWinCreate, Time: 11, Win: 1}, 4}, // token, delta, kind, window
		{Record{Kind: KindRmaPut, Time: 12, Win: 1, Remote: 3, Bytes: 64, Request: 5}, 7},
		{Record{Kind: KindRmaOpCompleteRemote, Time: 13, Win: 1, Request: 5}, 5},
		{Record{Kind: KindRmaCollectiveBegin, Time: 13, Seq: 1}, 3},
	} {
		if n := e.Put(b, c.r); n != c.want {
			t.Errorf("%v: %d bytes, want %d", c.r.Kind, n, c.want)
		}
	}
	if n := e.Rma(b, &Record{Kind: KindSend}); n != 0 {
		t.Errorf("Rma of a send wrote %d bytes", n)
	}
	// A remote out of an MPI rank's range is stored as none.
	d := NewDecoder(All)
	bin := encodeBin(t, All, 0, []Record{{Kind: KindRmaGet, Time: 1, Remote: 1 << 40}, {Kind: KindRmaGet, Time: 2, Remote: -7}})
	if err := d.Reset(bin); err != nil {
		t.Fatal(err)
	}
	var r Record
	for d.Next(&r) {
		if r.Remote != -1 {
			t.Errorf("remote %d, want -1", r.Remote)
		}
	}
	if d.Err() != nil {
		t.Fatal(d.Err())
	}
}

func TestRmaDecoderErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"no kind", []byte{TokBin, 0, 0, TokRma}, "RMA record without its kind"},
		{"kind out of range", []byte{TokBin, 0, 0, TokRma, 13, 0}, "RMA record of kind 13"},
		{"kind above", []byte{TokBin, 0, 0, TokRma, 38, 0}, "RMA record of kind 38"},
		{"no time", []byte{TokBin, 0, 0, TokRma, byte(KindRmaPut)}, "truncated varint"},
		{"truncated field", []byte{TokBin, 0, 0, TokRma, byte(KindRmaPut), 0, 1}, "truncated varint"},
		{"target out of range", []byte{TokBin, 0, 0, TokRma, byte(KindRmaSync), 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0}, "RMA target"},
	} {
		d := NewDecoder(All)
		if err := d.Reset(c.b); err != nil {
			t.Fatal(err)
		}
		var r Record
		for d.Next(&r) {
		}
		if d.Err() == nil || !strings.Contains(d.Err().Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, d.Err(), c.want)
		}
	}
	if s := KindRmaAtomic.String(); s != "RMA_ATOMIC" {
		t.Errorf("KindRmaAtomic.String() = %q", s)
	}
	// 14..19 are the task kinds (task.go), 38..42 the annotations
	// (mark.go): 50 is nobody's.
	if s := Kind(50).String(); s != "Kind(50)" {
		t.Errorf("Kind(50).String() = %q", s)
	}
}
