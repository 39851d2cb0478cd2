package encode

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomLoopStream makes the records of one level stream of a loop: enters
// of a few regions in turn (so that the prediction hits every slot and
// misses), each followed by its leave, with deltas of every size the
// predicted forms tell apart, records at the previous record's time, and
// sequence numbers that break the default now and then.
func randomLoopStream(rng *rand.Rand, n int) []Record {
	var out []Record
	t := rng.Uint64N(1 << 40)
	var seq uint32
	regions := rng.IntN(12) + 1
	step := func() {
		switch rng.IntN(8) {
		case 0:
			seq++ // same time
		case 1:
			t += 1 << (9 + rng.IntN(20)) // beyond the two-byte forms
			seq = 0
		case 2:
			t += uint64(rng.IntN(1 << 12))
			seq = 0
		default:
			t += uint64(rng.IntN(1 << (4 + rng.IntN(5))))
			seq = 0
		}
		if rng.IntN(30) == 0 {
			seq += 1 + uint32(rng.IntN(40))
		}
	}
	for len(out) < n {
		region := uint32(1 + rng.IntN(regions))
		if rng.IntN(40) == 0 {
			region = rng.Uint32() // a region id of any size, 0 included now and then
			if rng.IntN(4) == 0 {
				region = 0
			}
		}
		step()
		out = append(out, Record{Kind: KindEnter, Time: t, Seq: seq, Region: region})
		step()
		out = append(out, Record{Kind: KindLeave, Time: t, Seq: seq})
	}
	return out
}

func TestPredictRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tech := range allTechniqueSets() {
		for trial := 0; trial < 10; trial++ {
			recs := randomLoopStream(rng, 2+rng.IntN(400))
			open := uint32(rng.IntN(4))
			b := encodeBin(t, tech, open, recs)
			_, got := decodeBin(t, tech, b)
			if !reflect.DeepEqual(normalize(got), normalize(recs)) {
				t.Fatalf("techniques %s: records differ\n got %+v\nwant %+v", tech, got, recs)
			}
		}
	}
}

// Every form of the predicted table, with the bytes it must take.
func TestPredictForms(t *testing.T) {
	const t0 = 1000
	cases := []struct {
		name  string
		tech  Techniques
		open  uint32
		recs  []Record // after the bin's start at t0
		bytes []byte   // of the last record
	}{
		{"short leave", All, 3, []Record{{Kind: KindLeave, Time: t0 + 127}}, []byte{0x7F}},
		{"12-bit leave", All, 3, []Record{{Kind: KindLeave, Time: t0 + 0x123}}, []byte{0x81, 0x23}},
		{"long leave", All, 3, []Record{{Kind: KindLeave, Time: t0 + 4096}}, []byte{0xB4, 0x80, 0x20}},
		{"leave at the same time", All, 3, []Record{{Kind: KindLeave, Time: t0}}, []byte{0x00}},
		{"enter of the open region", All, 3, []Record{{Kind: KindLeave, Time: t0 + 1}, {Kind: KindEnter, Time: t0 + 17, Region: 3}},
			[]byte{0xA0, 16}},
		{"short enter of slot 0", All, 3, []Record{{Kind: KindLeave, Time: t0 + 1}, {Kind: KindEnter, Time: t0 + 16, Region: 3}, {Kind: KindLeave, Time: t0 + 20}, {Kind: KindEnter, Time: t0 + 35, Region: 3}},
			[]byte{0x9F}},
		{"enter of slot 1, 9-bit delta", All, 3, []Record{{Kind: KindLeave, Time: t0 + 1}, {Kind: KindEnter, Time: t0 + 2, Region: 9}, {Kind: KindLeave, Time: t0 + 3}, {Kind: KindEnter, Time: t0 + 3 + 0x1FF, Region: 3}},
			[]byte{0xA3, 0xFF}},
		{"long enter of slot 1", All, 3, []Record{{Kind: KindLeave, Time: t0 + 1}, {Kind: KindEnter, Time: t0 + 2, Region: 9}, {Kind: KindLeave, Time: t0 + 3}, {Kind: KindEnter, Time: t0 + 3 + 512, Region: 3}},
			[]byte{0xB1, 0x80, 0x04}},
		{"enter of slot 1 at the same time", All, 3, []Record{{Kind: KindLeave, Time: t0 + 1}, {Kind: KindEnter, Time: t0 + 2, Region: 9}, {Kind: KindLeave, Time: t0 + 3}, {Kind: KindEnter, Time: t0 + 3, Seq: 1, Region: 3}},
			[]byte{0xB9}},
		{"same time without split timing", All &^ SplitTiming, 3, []Record{{Kind: KindLeave, Time: t0 + 1}, {Kind: KindEnter, Time: t0 + 2, Region: 9}, {Kind: KindLeave, Time: t0 + 3}, {Kind: KindEnter, Time: t0 + 3, Seq: 1, Region: 3}},
			[]byte{0xA2, 0x00}},
		{"region not predicted", All, 3, []Record{{Kind: KindEnter, Time: t0 + 5, Region: 200}}, []byte{0xB5, 0xC8, 0x01, 5}},
		{"region not predicted, same time", All, 3, []Record{{Kind: KindEnter, Time: t0, Region: 7}}, []byte{0xB6, 7}},
		{"region 0 is never predicted", All, 0, []Record{{Kind: KindEnter, Time: t0 + 1, Region: 0}}, []byte{0xB5, 0, 1}},
		{"slot 4 has no long form", All, 1, []Record{
			{Kind: KindEnter, Time: t0 + 1, Region: 2}, {Kind: KindEnter, Time: t0 + 2, Region: 3}, {Kind: KindEnter, Time: t0 + 3, Region: 4},
			{Kind: KindEnter, Time: t0 + 4, Region: 5}, {Kind: KindEnter, Time: t0 + 1000, Region: 1}},
			[]byte{0xB5, 1, 0xE4, 0x07}},
		{"the ninth region pushes the first out", All, 1, []Record{
			{Kind: KindEnter, Time: t0 + 1, Region: 2}, {Kind: KindEnter, Time: t0 + 2, Region: 3}, {Kind: KindEnter, Time: t0 + 3, Region: 4},
			{Kind: KindEnter, Time: t0 + 4, Region: 5}, {Kind: KindEnter, Time: t0 + 5, Region: 6}, {Kind: KindEnter, Time: t0 + 6, Region: 7},
			{Kind: KindEnter, Time: t0 + 7, Region: 8}, {Kind: KindEnter, Time: t0 + 8, Region: 9}, {Kind: KindEnter, Time: t0 + 9, Region: 1}},
			[]byte{0xB5, 1, 1}},
		{"slot 7", All, 1, []Record{
			{Kind: KindEnter, Time: t0 + 1, Region: 2}, {Kind: KindEnter, Time: t0 + 2, Region: 3}, {Kind: KindEnter, Time: t0 + 3, Region: 4},
			{Kind: KindEnter, Time: t0 + 4, Region: 5}, {Kind: KindEnter, Time: t0 + 5, Region: 6}, {Kind: KindEnter, Time: t0 + 6, Region: 7},
			{Kind: KindEnter, Time: t0 + 7, Region: 8}, {Kind: KindEnter, Time: t0 + 8, Region: 1}},
			[]byte{0xAE, 1}},
		{"seq prefix", All, 3, []Record{{Kind: KindLeave, Time: t0 + 3, Seq: 2}}, []byte{0xC2, 0x03}},
		{"without predict: the first table", All &^ Predict, 3, []Record{{Kind: KindEnter, Time: t0 + 200, Region: 3}}, []byte{0x43, 0xC8, 0x01}},
	}
	for _, c := range cases {
		e := NewEncoder(c.tech)
		b := make([]byte, 64)
		e.StartBin(b, t0, c.open)
		var last []byte
		for _, r := range c.recs {
			n := e.Put(b, r)
			last = append(last[:0], b[:n]...)
		}
		if !bytes.Equal(last, c.bytes) {
			t.Errorf("%s: % x, want % x", c.name, last, c.bytes)
		}
		_, got := decodeBin(t, c.tech, encodeBin(t, c.tech, c.open, append([]Record{{Kind: KindLeave, Time: t0}}, c.recs...)))
		if want := append([]Record{{Kind: KindLeave, Time: t0}}, c.recs...); !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("%s: decoded %+v, want %+v", c.name, got, want)
		}
	}
}

// The fast paths of Enter and Leave write what the general path writes.
func TestPredictFastPathMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	recs := randomLoopStream(rng, 20000)
	fast, slow := NewEncoder(All), NewEncoder(All)
	bf, bs := make([]byte, 64), make([]byte, 64)
	fast.StartBin(bf, recs[0].Time, 1)
	slow.StartBin(bs, recs[0].Time, 1)
	for i, r := range recs {
		var nf, ns int
		if r.Kind == KindEnter {
			nf, ns = fast.Enter(bf, r.Time, r.Seq, r.Region), slow.enterSlow(bs, r.Time, r.Seq, r.Region)
		} else {
			nf, ns = fast.Leave(bf, r.Time, r.Seq), slow.leaveSlow(bs, r.Time, r.Seq)
		}
		if !bytes.Equal(bf[:nf], bs[:ns]) || fast != slow {
			t.Fatalf("record %d %+v: fast % x, slow % x", i, r, bf[:nf], bs[:ns])
		}
	}
}

func TestOff(t *testing.T) {
	for _, c := range []struct{ set, off Techniques }{
		{All, 0},
		{All &^ Predict, 0}, // a file of the first table
		{All &^ Delta, Delta},
		{All &^ Delta &^ Predict, Delta | Predict},
		{0, All},
	} {
		if got := c.set.Off(); got != c.off {
			t.Errorf("(%v).Off() = %v, want %v", c.set, got, c.off)
		}
	}
}

// decodeAll decodes bin b with techniques tech, the short path on or off,
// and returns the records, the offset where decoding stopped and the error.
func decodeAll(b []byte, tech Techniques, short bool) ([]Record, int, error) {
	d := NewDecoder(tech)
	d.short = short && d.short
	if err := d.Reset(b); err != nil {
		return nil, d.Offset(), err
	}
	d.short = short && d.short
	var recs []Record
	var r Record
	for d.Next(&r) {
		if r.Values != nil {
			r.Values = append([]uint64(nil), r.Values...)
		}
		recs = append(recs, r)
	}
	return recs, d.Offset(), d.Err()
}

// FuzzDecodeShort checks that nextShort is only a faster path: with it or
// without, any bytes decode to the same records and the same error.
func FuzzDecodeShort(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.bin, byte(s.tech))
	}
	// Truncated short records, an empty slot and an overflowing delta.
	f.Add([]byte{TokBin, 0, 3, 0x85}, byte(All))
	f.Add([]byte{TokBin, 0, 3, 0xA3}, byte(All))
	f.Add([]byte{TokBin, 0, 0, 0x90}, byte(All))
	f.Add([]byte{TokBin, 0, 3, 0xA4, 7, 0x92, 0}, byte(All))
	f.Add([]byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 3, 0x05}, byte(All))
	// Enters of unpredicted regions: good, the region out of range, the
	// delta truncated.
	f.Add([]byte{TokBin, 0, 3, TokPredEnterRegion, 0x85, 0x01, 7, TokPredEnterRegion, 3, 0x80, 0x01}, byte(All))
	f.Add([]byte{TokBin, 0, 3, TokPredEnterRegion, 0x80, 0x80, 0x80, 0x80, 0x10, 1}, byte(All))
	f.Add([]byte{TokBin, 0, 3, TokPredEnterRegion, 5, 0x80}, byte(All))
	f.Fuzz(func(t *testing.T, b []byte, techByte byte) {
		tech := Techniques(techByte) & All
		fast, foff, ferr := decodeAll(b, tech, true)
		slow, soff, serr := decodeAll(b, tech, false)
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("records differ:\nshort path %+v\nwithout    %+v", fast, slow)
		}
		if !reflect.DeepEqual(ferr, serr) || foff != soff {
			t.Fatalf("errors differ: short path %v at %d, without %v at %d", ferr, foff, serr, soff)
		}
	})
}

// TestDecodeShortLoops decodes random loop streams with the short path on
// and off: the same records, those that were put.
func TestDecodeShortLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 50; i++ {
		recs := randomLoopStream(rng, 400)
		bin := encodeBin(t, All, 0, recs)
		fast, _, ferr := decodeAll(bin, All, true)
		slow, _, serr := decodeAll(bin, All, false)
		if ferr != nil || serr != nil {
			t.Fatalf("stream %d: errors %v, %v", i, ferr, serr)
		}
		if !reflect.DeepEqual(fast, slow) || len(fast) != len(recs) {
			t.Fatalf("stream %d: %d records with the short path, %d without, %d put", i, len(fast), len(slow), len(recs))
		}
	}
}

// predict is a move-to-front list of predSlots regions: compared with one
// written plainly, over sequences that hit every slot and miss.
func TestPredictMoveToFront(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	var p [predSlots]uint32
	var want []uint32 // the list, front first, at most predSlots long
	for i := 0; i < 100000; i++ {
		region := uint32(rng.IntN(predSlots + 4))
		slot := predict(&p, region)
		wantSlot := -1
		if region != 0 {
			for j, r := range want {
				if r == region {
					wantSlot = j
					want = append(want[:j], want[j+1:]...)
					break
				}
			}
			want = append([]uint32{region}, want...)
			if len(want) > predSlots {
				want = want[:predSlots]
			}
		}
		var got []uint32
		for _, r := range p {
			if r != 0 {
				got = append(got, r)
			}
		}
		if slot != wantSlot || !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d, region %d: slot %d, slots %v; want %d, %v", i, region, slot, got, wantSlot, want)
		}
	}
}
