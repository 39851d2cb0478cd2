package tracefile

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
)

// annotated is sample with marks, parameters and a channel message between
// its two locations.
func annotated(t testing.TB) (*Trace, []Bin) {
	tr, bins := sample(t)
	tr.Annotations = Annotations{Marks: []string{"go"}, Params: []Param{{"n", ParamInt}, {"mode", ParamString}},
		Strings: []string{"fast"}, Channels: []string{"jobs"}}
	tr.Locations[0].Levels[3].Written = 3 // the metric level at depth 2: two parameters more
	tr.Locations[0].Levels[2].Written = 3 // the message level: a mark and a channel send more
	tr.Locations[1].Levels = append(tr.Locations[1].Levels, LevelStats{Depth: 1, Class: ClassMessage, Written: 1})
	bin := func(loc uint32, depth int, class Class, recs ...encode.Record) Bin {
		e := encode.NewEncoder(encode.All)
		b := make([]byte, 512)
		n := e.StartBin(b, recs[0].Time, 0)
		for _, r := range recs {
			n += e.Put(b[n:], r)
		}
		return Bin{Location: loc, Depth: depth, Class: class, Records: uint32(len(recs)), Data: b[:n]}
	}
	bins[2] = bin(0, 1, ClassMessage,
		encode.Record{Kind: encode.KindMark, Time: 311, Key: 1},
		encode.Record{Kind: encode.KindSend, Time: 312, Peer: 1, Tag: 7, Bytes: 64},
		encode.Record{Kind: encode.KindChanSend, Time: 313, Key: 1, Token: 1, Bytes: 32})
	bins[3] = bin(0, 2, ClassMetric, encode.Record{Kind: encode.KindMetric, Time: 300, Seq: 2, Values: []uint64{5, 9}},
		encode.Record{Kind: encode.KindParamInt, Time: 300, Seq: 3, Key: 1, Value: -3},
		encode.Record{Kind: encode.KindParamString, Time: 301, Key: 2, Value: 1})
	bins = append(bins,
		bin(1, 1, ClassMessage, encode.Record{Kind: encode.KindChanRecv, Time: 450, Key: 1, Token: 1, Peer: 0, Bytes: 32}))
	return tr, bins
}

func TestAnnotationsFile(t *testing.T) {
	tr, bins := annotated(t)
	b := encodeTrace(t, tr, bins)
	if v := binary.LittleEndian.Uint16(b[8:]); v != versionAnnotations {
		t.Fatalf("version %d, want %d", v, versionAnnotations)
	}
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Annotations, tr.Annotations) {
		t.Errorf("annotations %+v, want %+v", f.Annotations, tr.Annotations)
	}
	evs, err := readAll(t, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range evs {
		if d := f.Describe(&evs[i]); d != "" {
			got = append(got, f.RegionName(evs[i].Region)+": "+d)
		}
	}
	want := []string{`solve: param n = -3`, `solve: param mode = "fast"`, `main: mark "go"`, `main: chan "jobs" send #1, 32 bytes`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("annotations of location 0:\n%q\nwant\n%q", got, want)
	}
	msgs, err := f.ChannelMessages()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0] != (ChanMessage{Channel: 1, Token: 1, From: 0, To: 1, Bytes: 32, SendTime: 313, RecvTime: 450, Sent: true, Received: true}) {
		t.Errorf("channel messages %+v", msgs)
	}
}

// TestFileVersions: a file without annotations is version 1, as before;
// this reader reads 1 and 2 and names the version it does not read, which
// is also what a version-1 reader says of a file with annotations.
func TestFileVersions(t *testing.T) {
	tr, bins := sample(t)
	b := encodeTrace(t, tr, bins)
	if v := binary.LittleEndian.Uint16(b[8:]); v != 1 {
		t.Errorf("a trace without annotations has version %d, want 1", v)
	}
	tr, bins = annotated(t)
	b = encodeTrace(t, tr, bins)
	binary.LittleEndian.PutUint16(b[8:], versionAnnotations+1)
	_, err := Read(bytes.NewReader(b), int64(len(b)))
	if err == nil || !strings.Contains(err.Error(), "format version 3; this reader reads versions 1 to 2") {
		t.Errorf("a version 3 file: error %v", err)
	}
}

// TestAnnotationsMalformed: a bad parameter type names itself.
func TestAnnotationsMalformed(t *testing.T) {
	tr, bins := annotated(t)
	tr.Params[1].Type = 7
	b := encodeTrace(t, tr, bins)
	_, err := Read(bytes.NewReader(b), int64(len(b)))
	if err == nil || !strings.Contains(err.Error(), `ANNOTATIONS: parameter type: 7 of parameter "mode" is not int (0) or string (1)`) {
		t.Errorf("error %v", err)
	}
	// Two receives of one token: the second is a message of its own,
	// without a send; a receive naming another sender than the send is
	// corruption.
	tr, bins = annotated(t)
	bins[len(bins)-1].Data = append(bins[len(bins)-1].Data[:0:0], bins[len(bins)-1].Data...)
	tr.Locations[1].Levels[len(tr.Locations[1].Levels)-1].Written = 2
	e := encode.NewEncoder(encode.All)
	buf := make([]byte, 128)
	n := e.StartBin(buf, 450, 0)
	n += e.Put(buf[n:], encode.Record{Kind: encode.KindChanRecv, Time: 450, Key: 1, Token: 1, Peer: 0, Bytes: 32})
	n += e.Put(buf[n:], encode.Record{Kind: encode.KindChanRecv, Time: 460, Key: 1, Token: 1, Peer: 0, Bytes: 32})
	bins[len(bins)-1] = Bin{Location: 1, Depth: 1, Class: ClassMessage, Records: 2, Data: buf[:n]}
	b = encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := f.ChannelMessages()
	if err != nil || len(msgs) != 2 || !msgs[0].Sent || msgs[1].Sent || !msgs[1].Received {
		t.Errorf("two receives of one token: %+v, %v", msgs, err)
	}
}
