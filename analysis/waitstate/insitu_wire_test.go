package waitstate

import (
	"reflect"
	"strings"
	"testing"
)

// wirePart is a part with every field of InSitu set, a wait's delay with
// work and one without.
func wirePart() *InSitu {
	work := int64(0)
	return &InSitu{
		Locations: []Location{{File: 0, Loc: 0, ID: 7, Rank: 3, Name: "rank 3"}, {Loc: 1, ID: 8, Rank: 3, Name: "rank 3: thread 1"}},
		Paths:     []CallPath{{Parent: -1, Region: "main"}, {Parent: 0, Region: "MPI_Recv"}},
		Values:    []Value{{Pattern: 1, Region: "MPI_Recv", Path: 1, Loc: 1, Time: 1500, Count: 2}},
		Total:     -5, Synced: true, Sends: 1, Matched: 2, UnmatchedRecvs: 3, UnmatchedCollectives: 4, Unresolved: 5, ClockViolations: 6,
		Delays:      []Value{{Pattern: 1, Region: "compute", Path: -1, Loc: 0, Time: 1400, Count: 1}},
		DelayCosts:  []inSituCost{{Pattern: 1, DelayCost: DelayCost{LongTerm: true, Region: "compute", Path: 0, Loc: 0, Time: 9}}},
		Unexplained: []float64{0.25, 100},
		Worst: []inSituWait{
			{Instance: Instance{Pattern: 1, Region: "MPI_Recv", Path: 1, Loc: 1, Start: 1 << 40, Time: 1500, Peer: -1,
				Delay: &Delay{Loc: 2, Region: "compute", Time: 1400, Interval: 1500, Since: -1, Work: &work, WorkRegion: "compute"}},
				PeerRank: 2, PeerLoc: 0, DelayRank: 2, Since: true},
			{Instance: Instance{Pattern: 2, Region: "MPI_Recv", Path: 1, Loc: 0, Peer: 4}},
		},
		Path:            &inSituPath{Values: []PathTime{{Region: "compute", Path: 0, Loc: 0, Time: 77}}, HasEnd: true, End: 99, LastRank: 3, LastLoc: 1, HasStart: true, Start: 1, Hops: 4},
		Exclusive:       []RegionNs{{Region: "compute", Ns: 3}},
		DelayIncomplete: 2,
		OriginWall:      -12,
		OriginSync:      1e18,
	}
}

func TestInSituWireRoundTrip(t *testing.T) {
	q := wireTrip(t, wirePart())
	if q.Worst[0].Delay.Work == nil || *q.Worst[0].Delay.Work != 0 {
		t.Errorf("a delay's work of 0 read back as %v, want 0", q.Worst[0].Delay.Work)
	}
	if q.Worst[1].Delay != nil {
		t.Errorf("a wait without a delay read back with %+v", q.Worst[1].Delay)
	}
	wireTrip(t, &InSitu{})
	json, _ := EncodeInSitu(wirePart())
	if wire := EncodeInSituWire(wirePart()); len(wire) >= len(json) {
		t.Errorf("the wire form takes %d bytes, the JSON form %d", len(wire), len(json))
	}
}

// TestInSituWireBad checks that a cut or damaged wire form is an error,
// never a panic, and that bad indices are refused as in the JSON form.
func TestInSituWireBad(t *testing.T) {
	b := EncodeInSituWire(wirePart())
	for n := range len(b) {
		if _, err := DecodeInSituWire(b[:n]); err == nil {
			t.Fatalf("the wire form cut to %d of %d bytes read without an error", n, len(b))
		}
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0xff
		DecodeInSituWire(c) // an error or another part, not a panic
	}
	p := wirePart()
	p.Values[0].Loc = 5
	_, err := DecodeInSituWire(EncodeInSituWire(p))
	if err == nil || !strings.Contains(err.Error(), "a value") {
		t.Errorf("a value's location out of range: %v", err)
	}
	if _, err := DecodeInSituWire(append(b, 0)); err == nil {
		t.Error("a byte after the end read without an error")
	}
}

// widePart is wirePart over 64 locations, the size of a merge near the
// root of a 64-rank run.
func widePart() *InSitu {
	p := wirePart()
	for r := 1; r < 32; r++ {
		q := wirePart() // a part of its own: Merge keeps o's slices
		for i := range q.Locations {
			q.Locations[i].Rank += r
		}
		q.Path.HasEnd, q.Path.HasStart = false, false
		p.Merge(q)
	}
	return p
}

// BenchmarkInSituMerge measures one merge of the gathering (two parts
// decoded, merged and encoded), in the wire form and in the JSON form it
// replaced, with the bytes of the parts.
func BenchmarkInSituMerge(b *testing.B) {
	p := widePart()
	for _, form := range []struct {
		name   string
		encode func(*InSitu) ([]byte, error)
		decode func([]byte) (*InSitu, error)
	}{
		{"wire", func(s *InSitu) ([]byte, error) { return EncodeInSituWire(s), nil }, DecodeInSituWire},
		{"json", EncodeInSitu, DecodeInSitu},
	} {
		b.Run(form.name, func(b *testing.B) {
			enc, err := form.encode(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				x, err := form.decode(enc)
				if err != nil {
					b.Fatal(err)
				}
				y, err := form.decode(enc)
				if err != nil {
					b.Fatal(err)
				}
				x.Merge(y)
				if _, err := form.encode(x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(enc)), "bytes/part")
		})
	}
}

// FuzzDecodeInSituWire: any bytes give a part or an error, never a panic,
// and a part read back encodes to a form that reads to the same part.
func FuzzDecodeInSituWire(f *testing.F) {
	f.Add(EncodeInSituWire(wirePart()))
	f.Add(EncodeInSituWire(&InSitu{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeInSituWire(b)
		if err != nil {
			return
		}
		q, err := DecodeInSituWire(EncodeInSituWire(p))
		if err != nil {
			t.Fatalf("a part read from the wire form does not read back: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("read back differently:\n%+v\n%+v", p, q)
		}
	})
}
