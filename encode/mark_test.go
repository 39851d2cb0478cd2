package encode

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomAnnotationRecords makes a stream as randomRecords does, with
// marks, parameters and channel messages mixed in, their values at every
// magnitude (negative ints among them).
func randomAnnotationRecords(rng *rand.Rand, n int) []Record {
	recs := randomRecords(rng, n)
	for i := range recs {
		if rng.IntN(3) != 0 {
			continue
		}
		r := Record{Time: recs[i].Time, Seq: recs[i].Seq, Kind: KindMark + Kind(rng.IntN(5)),
			Key: uint32(rng.Uint64N(1 << uint(rng.IntN(33))))}
		switch r.Kind {
		case KindParamInt:
			r.Value = int64(rng.Uint64N(1<<uint(rng.IntN(64)))) - int64(rng.IntN(2))<<62
		case KindParamString:
			r.Value = int64(rng.Uint64N(1 << uint(rng.IntN(33))))
		case KindChanSend, KindChanRecv:
			r.Token, r.Bytes = rng.Uint64N(1<<uint(rng.IntN(64))), rng.Uint64N(1<<uint(rng.IntN(64)))
			if r.Kind == KindChanRecv {
				r.Peer = rng.Uint64N(1 << uint(rng.IntN(64)))
			}
		}
		recs[i] = r
	}
	return recs
}

func TestAnnotationRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tech := range allTechniqueSets() {
		recs := randomAnnotationRecords(rng, 300)
		recs = append(recs,
			Record{Kind: KindParamInt, Time: recs[len(recs)-1].Time + 1, Key: 1, Value: math.MinInt64},
			Record{Kind: KindParamInt, Time: recs[len(recs)-1].Time + 2, Key: math.MaxUint32, Value: math.MaxInt64},
			Record{Kind: KindChanRecv, Time: recs[len(recs)-1].Time + 3, Key: 7, Token: math.MaxUint64, Peer: math.MaxUint64, Bytes: math.MaxUint64})
		_, got := decodeBin(t, tech, encodeBin(t, tech, 5, recs))
		if !reflect.DeepEqual(normalize(got), normalize(recs)) {
			t.Fatalf("techniques %s:\n got %+v\nwant %+v", tech, got, recs)
		}
	}
}

// TestAnnotationSize pins the common sizes: a mark or a small parameter
// is 4-5 bytes, a channel message 6, with every technique on.
func TestAnnotationSize(t *testing.T) {
	e := NewEncoder(All)
	b := make([]byte, MaxAnnotationSize)
	e.StartBin(b, 10, 0)
	for _, c := range []struct {
		r    Record
		want int
	}{
		{Record{Kind: KindMark, Time: 11, Key: 3}, 4},                                   // token, kind, delta, key
		{Record{Kind: KindParamInt, Time: 11, Seq: 1, Key: 3, Value: -5}, 5},            // ..., zigzag value
		{Record{Kind: KindParamString, Time: 12, Key: 3, Value: 9}, 5},                  // ..., string id
		{Record{Kind: KindChanSend, Time: 13, Key: 2, Token: 40, Bytes: 8}, 6},          // ..., token, bytes
		{Record{Kind: KindChanRecv, Time: 14, Key: 2, Token: 40, Peer: 3, Bytes: 8}, 7}, // ..., token, sender, bytes
	} {
		if n := e.Put(b, c.r); n != c.want {
			t.Errorf("%v: %d bytes, want %d", c.r.Kind, n, c.want)
		}
	}
	if n := e.Annotation(b, &Record{Kind: KindEnter, Time: 14}); n != 0 {
		t.Errorf("Annotation of an enter wrote %d bytes", n)
	}
	if n := e.Annotation(b, &Record{Kind: KindParamString, Time: 14, Value: -1}); n != 0 {
		t.Errorf("a string parameter with string id -1 wrote %d bytes", n)
	}
	// The largest record fits MaxAnnotationSize under every technique set.
	for _, tech := range allTechniqueSets() {
		e := NewEncoder(tech)
		e.StartBin(b, 0, 0)
		r := Record{Kind: KindChanRecv, Time: math.MaxUint64 >> 1, Seq: math.MaxUint32, Key: math.MaxUint32, Token: math.MaxUint64, Peer: math.MaxUint64, Bytes: math.MaxUint64}
		if n := e.Annotation(b, &r); n > MaxAnnotationSize {
			t.Errorf("techniques %s: %d bytes, more than MaxAnnotationSize %d", tech, n, MaxAnnotationSize)
		}
	}
}

func TestAnnotationKindNames(t *testing.T) {
	for k, want := range map[Kind]string{KindMark: "MARK", KindParamInt: "PARAM_INT", KindParamString: "PARAM_STRING",
		KindChanSend: "CHAN_SEND", KindChanRecv: "CHAN_RECV", 43: "Kind(43)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

// TestAnnotationMalformed: a kind byte outside 38..42, a missing kind, a
// string id past 32 bits are errors naming what is wrong.
func TestAnnotationMalformed(t *testing.T) {
	for _, c := range []struct {
		bin  []byte
		want string
	}{
		{[]byte{TokBin, 0, 0, TokAnnotation}, "without its kind"},
		{[]byte{TokBin, 0, 0, TokAnnotation, 37, 0, 1}, "annotation record of kind 37"},
		{[]byte{TokBin, 0, 0, TokAnnotation, 43, 0, 1}, "annotation record of kind 43"},
		{[]byte{TokBin, 0, 0, TokAnnotation, byte(KindParamString), 0, 1, 0x80, 0x80, 0x80, 0x80, 0x10}, "parameter string out of range"},
		{[]byte{TokBin, 0, 0, TokAnnotation, byte(KindChanSend), 0, 1, 5}, "truncated varint"},
	} {
		d := NewDecoder(All)
		if err := d.Reset(c.bin); err != nil {
			t.Fatal(err)
		}
		var r Record
		for d.Next(&r) {
		}
		if d.Err() == nil || !strings.Contains(d.Err().Error(), c.want) {
			t.Errorf("% x: error %v, want one containing %q", c.bin, d.Err(), c.want)
		}
	}
}
