package encode

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// allTechniqueSets lists every combination of the five switchable techniques.
func allTechniqueSets() []Techniques {
	var s []Techniques
	for t := Techniques(0); t <= All; t++ {
		s = append(s, t)
	}
	return s
}

// randomRecords makes a plausible stream: non-decreasing times with many
// repeats, sequence numbers that follow or break the default, and every kind
// of the first version (the fuzz corpus's first seeds depend on its output).
func randomRecords(rng *rand.Rand, n int) []Record { return randomStream(rng, n, false) }

// randomMPIRecords makes a stream as randomRecords does, with the records
// of communicators and requests mixed in.
func randomMPIRecords(rng *rand.Rand, n int) []Record { return randomStream(rng, n, true) }

func randomStream(rng *rand.Rand, n int, mpi bool) []Record {
	var out []Record
	t := rng.Uint64N(1 << 40)
	var seq uint32
	for i := 0; i < n; i++ {
		switch rng.IntN(4) {
		case 0: // same time
			seq++
		case 1: // small step
			t += 1 + rng.Uint64N(60)
			seq = 0
		case 2:
			t += rng.Uint64N(1 << 20)
			seq = 0
		default: // same or later time with a gap in seq: other streams' records in between
			if rng.IntN(2) == 0 {
				t += 1 + rng.Uint64N(100)
				seq = 0
			}
			seq += 1 + uint32(rng.IntN(40))
		}
		if rng.IntN(50) == 0 {
			seq = uint32(rng.Uint64N(1 << 31))
		}
		r := Record{Time: t, Seq: seq}
		switch k := rng.IntN(10); {
		case k < 4:
			r.Kind = KindEnter
			r.Region = uint32(1 + rng.IntN(80))
			if rng.IntN(20) == 0 {
				r.Region = uint32(rng.Uint32())
			}
		case k < 8:
			r.Kind = KindLeave
		case k == 8 && rng.IntN(4) == 0:
			r.Kind = KindCollective
			r.Root = int64(rng.IntN(100)) - 1
			r.Bytes = rng.Uint64N(1 << 40)
		case k == 8:
			r.Kind = KindSend + Kind(rng.IntN(2))
			r.Peer = rng.Uint64N(1 << uint(rng.IntN(64)))
			r.PeerRank = rng.IntN(2) == 0
			r.Tag = rng.Uint32()
			r.Bytes = rng.Uint64()
		case k == 9 && mpi && rng.IntN(2) == 0:
			randomMPIRecord(rng, &r)
		default:
			r.Kind = KindMetric
			n := rng.IntN(MaxMetrics + 1)
			r.Values = make([]uint64, n)
			for j := range r.Values {
				r.Values[j] = rng.Uint64()
			}
		}
		out = append(out, r)
	}
	return out
}

// randomMPIRecord fills r with a record of a kind added for MPI, or a
// message or collective with a communicator, with values of any size.
func randomMPIRecord(rng *rand.Rand, r *Record) {
	big := func() uint64 { return rng.Uint64N(1 << uint(rng.IntN(64))) }
	comm := uint32(big())
	switch rng.IntN(6) {
	case 0:
		r.Kind = KindSend + Kind(rng.IntN(2))
		r.Peer, r.PeerRank, r.Tag, r.Bytes, r.Comm = big(), rng.IntN(2) == 0, rng.Uint32(), big(), comm
	case 1:
		r.Kind = []Kind{KindIsend, KindIrecv}[rng.IntN(2)]
		r.Peer, r.PeerRank, r.Tag, r.Bytes, r.Comm, r.Request = big(), rng.IntN(2) == 0, rng.Uint32(), big(), comm, big()
	case 2:
		r.Kind = []Kind{KindIsendComplete, KindIrecvRequest, KindRequestCancelled, KindCollRequest}[rng.IntN(4)]
		r.Request = big()
	case 3:
		r.Kind = KindCollective
		r.Root, r.Bytes, r.Received, r.Comm = int64(rng.IntN(100))-1, big(), big(), comm
	default:
		r.Kind = KindCollComplete
		r.Region, r.Root, r.Bytes, r.Received, r.Comm, r.Request = uint32(big()), int64(big()>>2)-1, big(), big(), comm, big()
	}
}

func maxSize(k Kind) int {
	switch k {
	case KindEnter, KindLeave:
		return MaxEnterLeaveSize
	case KindSend, KindRecv, KindIsend, KindIrecv, KindIsendComplete, KindIrecvRequest, KindRequestCancelled:
		return MaxMessageSize
	case KindCollective, KindCollRequest, KindCollComplete:
		return MaxCollectiveSize
	case KindTaskCreate, KindTaskSwitch, KindTaskComplete, KindTaskSuspend:
		return MaxTaskSize
	}
	return MaxMetricSize
}

// encodeBin writes records into one bin and checks each stays in its bound.
func encodeBin(t testing.TB, tech Techniques, open uint32, recs []Record) []byte {
	t.Helper()
	e := NewEncoder(tech)
	var b []byte
	scratch := make([]byte, 1024)
	first := uint64(0)
	if len(recs) > 0 {
		first = recs[0].Time
	}
	n := e.StartBin(scratch, first, open)
	if n > MaxBinHeaderSize {
		t.Fatalf("bin header %d bytes > MaxBinHeaderSize", n)
	}
	b = append(b, scratch[:n]...)
	for _, r := range recs {
		n := e.Put(scratch, r)
		if n > maxSize(r.Kind) {
			t.Fatalf("%v record took %d bytes > bound %d (techniques %s)", r.Kind, n, maxSize(r.Kind), tech)
		}
		b = append(b, scratch[:n]...)
	}
	return b
}

func decodeBin(t *testing.T, tech Techniques, b []byte) (uint32, []Record) {
	t.Helper()
	d := NewDecoder(tech)
	if err := d.Reset(b); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	var out []Record
	var r Record
	for d.Next(&r) {
		if r.Values != nil {
			r.Values = append([]uint64(nil), r.Values...)
		}
		out = append(out, r)
	}
	if err := d.Err(); err != nil {
		t.Fatalf("decode (techniques %s): %v", tech, err)
	}
	return d.OpenRegion(), out
}

func normalize(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		if r.Kind == KindMetric && r.Values == nil {
			r.Values = []uint64{}
		}
		if r.Kind != KindMetric {
			r.Values = nil
		}
		out[i] = r
	}
	return out
}

func TestRoundTripEveryTechniqueSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tech := range allTechniqueSets() {
		for trial := 0; trial < 20; trial++ {
			recs := randomMPIRecords(rng, 1+rng.IntN(300))
			open := uint32(rng.IntN(200))
			b := encodeBin(t, tech, open, recs)
			gotOpen, got := decodeBin(t, tech, b)
			if gotOpen != open {
				t.Fatalf("open region %d, want %d", gotOpen, open)
			}
			want := normalize(recs)
			got = normalize(got)
			if !reflect.DeepEqual(got, want) {
				for i := range want {
					if i >= len(got) || !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("techniques %s: record %d = %+v, want %+v", tech, i, got[min(i, len(got)-1)], want[i])
					}
				}
				t.Fatalf("techniques %s: %d records, want %d", tech, len(got), len(want))
			}
		}
	}
}

// Each technique must pay for itself on a typical enter/leave stream.
func TestEachTechniqueSaves(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []Record
	tm := uint64(1 << 30)
	var seq uint32
	depth := 0
	for i := 0; i < 5000; i++ {
		if rng.IntN(3) == 0 {
			tm += uint64(rng.IntN(200))
			seq = 0
		} else {
			seq++
		}
		if depth == 0 || (depth < 4 && rng.IntN(2) == 0) {
			recs = append(recs, Record{Kind: KindEnter, Time: tm, Seq: seq, Region: uint32(1 + rng.IntN(10))})
			depth++
		} else {
			recs = append(recs, Record{Kind: KindLeave, Time: tm, Seq: seq})
			depth--
		}
	}
	// Within one stream consecutive records follow the default sequence
	// rule most of the time; the test stream above does too.
	size := func(tech Techniques) int { return len(encodeBin(t, tech, 0, recs)) }
	all := size(All)
	for _, tech := range []Techniques{SplitTiming, LEB128, Delta, Tokens, Predict} {
		without := size(All &^ tech)
		t.Logf("without %-12s %6d bytes (all: %d)", tech, without, all)
		if without <= all {
			t.Errorf("switching off %s does not grow the stream: %d <= %d bytes", tech, without, all)
		}
	}
}

func TestSeqInference(t *testing.T) {
	// A leaf call at one timestamp, then a record that skips sequence numbers.
	recs := []Record{
		{Kind: KindEnter, Time: 100, Seq: 0, Region: 3},
		{Kind: KindLeave, Time: 100, Seq: 1},
		{Kind: KindEnter, Time: 100, Seq: 5, Region: 3},
		{Kind: KindLeave, Time: 120, Seq: 0},
		{Kind: KindEnter, Time: 130, Seq: 2, Region: 3},
	}
	b := encodeBin(t, All, 0, recs)
	// BIN(3) + enter-now(1) + leave(1) + seq(1)+enter-now(1) + leave(1) + seq(1)+enter(2)
	if want := 3 + 1 + 1 + 2 + 1 + 3; len(b) != want {
		t.Errorf("encoded %d bytes, want %d: % x", len(b), want, b)
	}
	_, got := decodeBin(t, All, b)
	if !reflect.DeepEqual(normalize(got), normalize(recs)) {
		t.Errorf("got %+v", got)
	}
}

func TestEncodeAllocatesNothing(t *testing.T) {
	e := NewEncoder(All)
	b := make([]byte, 1<<16)
	vals := []uint64{1, 2, 3}
	var tm uint64
	allocs := testing.AllocsPerRun(1000, func() {
		n := e.StartBin(b, tm, 0)
		tm += 7
		n += e.Enter(b[n:], tm, 0, 5)
		n += e.Metric(b[n:], tm, 1, vals)
		n += e.Message(b[n:], KindSend, tm, 2, 7, false, 1, 100)
		tm += 100
		e.Leave(b[n:], tm, 0)
	})
	if allocs != 0 {
		t.Errorf("encoding allocates %v times per run", allocs)
	}
	d := NewDecoder(All)
	var r Record
	allocs = testing.AllocsPerRun(100, func() {
		_ = d.Reset(b)
		for d.Next(&r) {
		}
	})
	if allocs != 0 {
		t.Errorf("decoding allocates %v times per run", allocs)
	}
}

func TestDecoderErrors(t *testing.T) {
	const v1 = All &^ Predict // the first token table
	cases := []struct {
		name string
		tech Techniques
		b    []byte
		want string
	}{
		{"empty", All, nil, "offset 0: bin does not start with a BIN record"},
		{"no bin", All, []byte{0x41, 0}, "offset 0: bin does not start with a BIN record"},
		{"truncated bin time", All, []byte{TokBin, 0x80}, "offset 1: truncated varint"},
		{"truncated enter", v1, []byte{TokBin, 5, 0, 0x41}, "offset 4: truncated varint"},
		{"reserved token", All, []byte{TokBin, 5, 0, 0xFF}, "offset 3: token 0xFF is not valid with techniques split-timing,leb128,delta,tokens,predict"},
		{"inline leave without tokens", All &^ Tokens, []byte{TokBin, 5, 0, 0x01}, "offset 3: token 0x01 is not valid with techniques split-timing,leb128,delta,predict"},
		{"truncated predicted leave", All, []byte{TokBin, 5, 0, TokPredLeave12 | 3}, "offset 4: truncated delta"},
		{"truncated predicted enter", All, []byte{TokBin, 5, 0, TokPredEnterSlot | 1<<1}, "offset 4: truncated delta"},
		{"truncated long leave", All, []byte{TokBin, 5, 0, TokPredLeaveLong, 0x80}, "offset 4: truncated varint"},
		{"empty prediction slot", All, []byte{TokBin, 5, 0, TokPredEnter | 2}, "offset 3: enter of an empty prediction slot"},
		{"empty later slot", All, []byte{TokBin, 5, 7, TokPredLeave | 1, TokPredEnterSlotNow | 1}, "offset 4: enter of an empty prediction slot"},
		{"unused predicted token", All, []byte{TokBin, 5, 0, 0xB7}, "offset 3: token 0xB7 is not valid with techniques split-timing,leb128,delta,tokens,predict"},
		{"predicted enter-now without split timing", All &^ SplitTiming, []byte{TokBin, 5, 0, TokPredEnterNow, 3}, "offset 3: token 0xB6 is not valid with techniques leb128,delta,tokens,predict"},
		{"predicted enter overflows time", All, []byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 7, TokPredEnterSlot, 2}, "offset 12: time overflows"},
		{"seq at end", All, []byte{TokBin, 5, 0, 0xC3}, "offset 4: SEQ prefix at the end of the bin"},
		{"double seq", All, []byte{TokBin, 5, 0, 0xC3, 0xC4, 0x00}, "offset 4: two SEQ prefixes in a row"},
		{"too many metrics", All, []byte{TokBin, 5, 0, TokMetric, 0, 17}, "offset 6: metric record with 17 values (at most 16)"},
		{"varint overflow", All, []byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, "offset 1: varint overflows 64 bits"},
		{"time overflow", All, []byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, TokLeave, 2}, "offset 13: time overflows"},
		{"absolute time backwards", All &^ Delta, []byte{TokBin, 5, 0, TokLeave, 4}, "offset 4: time goes backwards"},
		{"fixed width truncated", All &^ LEB128, []byte{TokBin, 1, 2, 3}, "offset 1: truncated 8-byte field"},
		{"isend without request", All, []byte{TokBin, 5, 0, TokIsendRank, 0, 1, 7, 64, 1}, "offset 9: truncated varint"},
		{"comm out of range", All, []byte{TokBin, 5, 0, TokSendRankComm, 0, 1, 7, 64, 0x80, 0x80, 0x80, 0x80, 0x10}, "offset 13: comm out of range"},
		{"collective root out of range", All, []byte{TokBin, 5, 0, TokCollComplete, 0, 3, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40}, "offset 15: collective root 4611686018427387905 out of range"},
		{"request-only truncated", All &^ LEB128, []byte{TokBin, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, TokCollRequest, 0, 0, 0, 0, 0, 0, 0, 0, 9}, "offset 22: truncated 8-byte field"},
	}
	for _, c := range cases {
		d := NewDecoder(c.tech)
		err := d.Reset(c.b)
		var r Record
		for err == nil && d.Next(&r) {
		}
		if err == nil {
			err = d.Err()
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// The MPI records decode to what was put, with the sizes the format
// promises: no communicator costs nothing, and a message on a small
// communicator one byte more.
func TestMPIRecords(t *testing.T) {
	recs := []Record{
		{Kind: KindSend, Time: 10, Peer: 3, PeerRank: true, Tag: 7, Bytes: 64},
		{Kind: KindSend, Time: 11, Peer: 3, PeerRank: true, Tag: 7, Bytes: 64, Comm: 2},
		{Kind: KindRecv, Time: 12, Peer: 4, Tag: 1, Bytes: 8, Comm: 5},
		{Kind: KindIsend, Time: 13, Peer: 1, PeerRank: true, Tag: 9, Bytes: 1 << 20, Comm: 1, Request: 17},
		{Kind: KindIrecvRequest, Time: 13, Seq: 1, Request: 18},
		{Kind: KindIsendComplete, Time: 20, Request: 17},
		{Kind: KindIrecv, Time: 21, Peer: 0, PeerRank: true, Tag: 9, Bytes: 100, Comm: 3, Request: 18},
		{Kind: KindRequestCancelled, Time: 22, Request: 19},
		{Kind: KindCollective, Time: 30, Root: -1, Bytes: 8},
		{Kind: KindCollective, Time: 31, Root: 0, Bytes: 8, Received: 32, Comm: 1},
		{Kind: KindCollRequest, Time: 32, Request: 20},
		{Kind: KindCollComplete, Time: 40, Region: 70, Root: -1, Bytes: 8, Received: 8, Comm: 4, Request: 20},
	}
	for _, tech := range allTechniqueSets() {
		_, got := decodeBin(t, tech, encodeBin(t, tech, 0, recs))
		if !reflect.DeepEqual(normalize(got), normalize(recs)) {
			t.Fatalf("techniques %s:\n got %+v\nwant %+v", tech, got, recs)
		}
	}
	e := NewEncoder(All)
	b := make([]byte, MaxCollectiveSize)
	e.StartBin(b, 10, 0)
	for _, c := range []struct {
		r    Record
		want int
	}{
		{Record{Kind: KindSend, Time: 11, Peer: 3, PeerRank: true, Tag: 7, Bytes: 64}, 5}, // token, delta, peer, tag, bytes
		{Record{Kind: KindSend, Time: 12, Peer: 3, PeerRank: true, Tag: 7, Bytes: 64, Comm: 2}, 6},
		{Record{Kind: KindIsend, Time: 13, Peer: 1, PeerRank: true, Tag: 9, Bytes: 64, Comm: 1, Request: 17}, 7},
		{Record{Kind: KindIsendComplete, Time: 14, Request: 17}, 3},
		{Record{Kind: KindCollective, Time: 15, Root: 0, Bytes: 8}, 4},
		{Record{Kind: KindCollective, Time: 16, Root: 0, Bytes: 8, Received: 8, Comm: 1}, 6},
	} {
		if n := e.Put(b, c.r); n != c.want {
			t.Errorf("%v %+v: %d bytes, want %d", c.r.Kind, c.r, n, c.want)
		}
	}
}

// The records of several fields are read by Decoder.fields, which takes
// the one- and two-byte varints itself: every field at each length's
// bounds decodes to what was put, and a field out of its range fails with
// the field-by-field reader's error and offset.
func TestFieldLengths(t *testing.T) {
	vals := []uint64{0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1FFFFF, 0x200000, 1<<32 - 1, 1 << 40, 1<<64 - 1}
	var recs []Record
	tm := uint64(0)
	for i, v := range vals {
		w := vals[(i+3)%len(vals)]
		v32 := uint32(min(v, 1<<32-1))
		tm += min(v, 1<<20) + 1 // the delta takes each length up to three bytes
		recs = append(recs,
			Record{Kind: KindSend, Time: tm, Peer: v, PeerRank: true, Tag: v32, Bytes: w},
			Record{Kind: KindRecv, Time: tm, Seq: 1, Peer: w, Tag: uint32(min(w, 1<<32-1)), Bytes: v, Comm: v32},
			Record{Kind: KindIsend, Time: tm, Seq: 2, Peer: v, Tag: v32, Bytes: w, Comm: v32, Request: w},
			Record{Kind: KindCollective, Time: tm, Seq: 3, Root: int64(min(v, 1<<62)) - 1, Bytes: w},
			Record{Kind: KindCollective, Time: tm, Seq: 4, Root: int64(min(w, 1<<62)) - 1, Bytes: v, Received: w, Comm: v32})
	}
	// Enters of regions the prediction misses, and leaves, at the lengths'
	// bounds, with and without a new time.
	regions := uint32(0)
	for _, v := range vals {
		for _, dt := range []uint64{0, min(v, 1<<20) + 1} {
			tm += dt
			regions++
			region := uint32(min(v, 1<<32-1)) | 1<<31 | regions // not in a slot
			recs = append(recs, Record{Kind: KindEnter, Time: tm, Region: region},
				Record{Kind: KindLeave, Time: tm + 200 + min(v, 1<<20)})
			tm = recs[len(recs)-1].Time
		}
	}
	for i := range recs {
		if i > 0 && recs[i].Time == recs[i-1].Time {
			recs[i].Seq = recs[i-1].Seq + 1
		} else {
			recs[i].Seq = 0
		}
	}
	for _, tech := range allTechniqueSets() {
		_, got := decodeBin(t, tech, encodeBin(t, tech, 0, recs))
		if !reflect.DeepEqual(normalize(got), normalize(recs)) {
			t.Fatalf("techniques %s:\n got %+v\nwant %+v", tech, got, recs)
		}
	}
	over32 := []byte{0x80, 0x80, 0x80, 0x80, 0x10} // 1<<32
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"tag out of range", append([]byte{TokBin, 5, 0, TokSendRank, 1, 2}, over32...), "offset 11: tag out of range"},
		{"tag out of range, comm", append([]byte{TokBin, 5, 0, TokRecvComm, 1, 2}, append(over32, 1, 1)...), "offset 11: tag out of range"},
		{"comm out of range, isend", append([]byte{TokBin, 5, 0, TokIsendRank, 1, 2, 3, 4}, append(over32, 1)...), "offset 13: comm out of range"},
		{"root out of range", []byte{TokBin, 5, 0, TokColl, 1, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 8}, "offset 14: collective root 4611686018427387905 out of range"},
		{"comm out of range, collective", append([]byte{TokBin, 5, 0, TokCollComm, 1, 0, 8, 8}, over32...), "offset 13: comm out of range"},
		{"message time overflows", []byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, TokSend, 2, 1, 1, 1}, "offset 13: time overflows"},
		{"collective time overflows", []byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, TokColl, 0x82, 0x01, 0, 8}, "offset 13: time overflows"},
		{"two-byte field truncated", []byte{TokBin, 5, 0, TokSend, 1, 2, 3, 0x80}, "offset 7: truncated varint"},
		{"last field truncated", []byte{TokBin, 5, 0, TokSendComm, 1, 2, 3, 4}, "offset 8: truncated varint"},
		{"field overflows", []byte{TokBin, 5, 0, TokSend, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 1, 1}, "offset 5: varint overflows 64 bits"},
		{"enter region out of range", append([]byte{TokBin, 5, 0, TokPredEnterRegion}, append(over32, 1)...), "offset 9: region out of range"},
		{"enter-now region out of range", append([]byte{TokBin, 5, 0, TokPredEnterNow}, over32...), "offset 9: region out of range"},
		{"enter delta truncated", []byte{TokBin, 5, 0, TokPredEnterRegion, 0x81, 0x01, 0x80}, "offset 6: truncated varint"},
		{"enter delta overflows time", []byte{TokBin, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, TokPredEnterRegion, 7, 2}, "offset 12: time overflows"},
		{"long leave truncated", []byte{TokBin, 5, 0, TokPredLeaveLong, 0x80, 0x80}, "offset 4: truncated varint"},
	}
	for _, c := range cases {
		d := NewDecoder(All)
		err := d.Reset(c.b)
		var r Record
		for err == nil && d.Next(&r) {
		}
		if err == nil {
			err = d.Err()
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
