package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
)

// sample builds a small trace: two locations, nested calls, a message and
// a metric, and returns its bytes.
func sample(t testing.TB) (*Trace, []Bin) {
	tr := &Trace{
		Header: Header{Name: "sample", Host: "h", PID: 42, Rank: 3, Program: "prog -x", StartWall: time.Unix(1700000000, 5).UTC(),
			GoVersion: "go1.24", CPU: "cpu", Clock: "tsc", TicksPerSecond: 2e9, TimerShift: 2, StartTicks: 1000, EndTicks: 9000,
			ProbeCost: 12.5, Techniques: encode.All, BufferSize: 1 << 20, BinSize: 4096, Policy: "depth", ClassOrder: []string{"metric", "message"}, MinDuration: 2000, FilterFile: "f.filter",
			ClockSync: []ClockSync{{Ticks: 1200, Offset: -40}, {Ticks: 8800, Offset: -36}}, ReferenceStart: 900},
		Regions: []Region{{ID: 1, Name: "main", File: "main.go", Line: 10}, {ID: 2, Name: "solve"}},
		Locations: []Location{
			{ID: 0, Name: "main", Recorded: 6, Profile: []ProfileEntry{{Region: 1, Visits: 1, Inclusive: 100, Exclusive: 60}, {Region: 2, Visits: 1, Inclusive: 40, Exclusive: 40}},
				Levels: []LevelStats{{Depth: 1, Class: ClassRegion, Written: 2}, {Depth: 2, Class: ClassRegion, Written: 2}, {Depth: 1, Class: ClassMessage, Written: 1}, {Depth: 2, Class: ClassMetric, Written: 1, Dropped: [NumReasons]uint64{0, 0, 0, 0, 0}}}},
			{ID: 1, Name: "worker", Recorded: 3, Usage: UsageErrors{LeaveNothingOpen: 1}, Interrupted: true,
				Levels: []LevelStats{{Depth: 1, Class: ClassRegion, Written: 2, Revoked: [NumReasons]uint64{ByDepth: 0}, Dropped: [NumReasons]uint64{ByDepth: 1}}}},
		},
		Reductions: []Reduction{{Reason: ByDepth, Depth: 3, Time: 500, Bins: 2, Records: 77, Steps: 1}},
		Comms: []Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: []int32{0, 1, 2, 3}}, {ID: 2, Name: "MPI_COMM_SELF", Members: []int32{3}},
			{ID: 3, Parent: 1, Members: []int32{3, 1}}, {ID: 4, Parent: 3, Members: []int32{3}, Remote: []int32{0, 2}}},
	}
	tr.Locations[0].Comm = []CommCount{{Peer: 1, Sent: 1, SentBytes: 64}, {Peer: 0, PeerRank: true, Received: 2, ReceivedBytes: 1 << 20}}
	bin := func(loc uint32, depth int, class Class, recs ...encode.Record) Bin {
		e := encode.NewEncoder(encode.All)
		b := make([]byte, 512)
		n := e.StartBin(b, recs[0].Time, 0)
		for _, r := range recs {
			n += e.Put(b[n:], r)
		}
		return Bin{Location: loc, Depth: depth, Class: class, Records: uint32(len(recs)), Data: b[:n]}
	}
	bins := []Bin{
		bin(0, 1, ClassRegion, encode.Record{Kind: encode.KindEnter, Time: 300, Region: 1}, encode.Record{Kind: encode.KindLeave, Time: 325}),
		bin(0, 2, ClassRegion, encode.Record{Kind: encode.KindEnter, Time: 300, Seq: 1, Region: 2}, encode.Record{Kind: encode.KindLeave, Time: 310}),
		bin(0, 1, ClassMessage, encode.Record{Kind: encode.KindSend, Time: 312, Peer: 1, Tag: 7, Bytes: 64}),
		bin(0, 2, ClassMetric, encode.Record{Kind: encode.KindMetric, Time: 300, Seq: 2, Values: []uint64{5, 9}}),
		bin(1, 1, ClassRegion, encode.Record{Kind: encode.KindEnter, Time: 400, Region: 2}, encode.Record{Kind: encode.KindLeave, Time: 500}),
	}
	return tr, bins
}

func encodeSample(t testing.TB) []byte {
	tr, bins := sample(t)
	return encodeTrace(t, tr, bins)
}

// encodeTrace writes tr and its bins and returns the file's bytes.
func encodeTrace(t testing.TB, tr *Trace, bins []Bin) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bins {
		if err := w.Bin(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(t testing.TB, f *File, id uint32) ([]Event, error) {
	var out []Event
	it := f.Events(id)
	var e Event
	for it.Next(&e) {
		if e.Values != nil {
			e.Values = append([]uint64(nil), e.Values...)
		}
		out = append(out, e)
	}
	return out, it.Err()
}

func TestRoundTrip(t *testing.T) {
	data := encodeSample(t)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sample(t)
	if !reflect.DeepEqual(f.Trace, *want) {
		t.Errorf("definitions differ:\n got %+v\nwant %+v", f.Trace, *want)
	}
	evs, err := readAll(t, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%v %d.%d d%d r%d %v", e.Kind, e.Time, e.Seq, e.Depth, e.Region, e.Values))
	}
	wantEvents := []string{
		"ENTER 300.0 d1 r1 []",
		"ENTER 300.1 d2 r2 []",
		"METRIC 300.2 d2 r2 [5 9]",
		"LEAVE 310.0 d2 r2 []",
		"SEND 312.0 d1 r1 []",
		"LEAVE 325.0 d1 r1 []",
	}
	if !reflect.DeepEqual(got, wantEvents) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEvents, "\n"))
	}
	if n, b := f.Bins(); n != 5 || b == 0 {
		t.Errorf("Bins() = %d, %d", n, b)
	}
	if ns := f.Nanos(300); ns != (300<<2-1000)/2 {
		t.Errorf("Nanos(300) = %d", ns)
	}
	// 1200 ticks, offset -40 at that point, reference start 900: 260 ticks at 2e9/s.
	if ns := f.GlobalNanos(300); ns != 130 {
		t.Errorf("GlobalNanos(300) = %d, want 130", ns)
	}
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.hmb")
	tr, bins := sample(t)
	boom := errors.New("boom")
	err := WriteFile(path, tr, func(put func(Bin) error) error { put(bins[0]); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile error %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed write left %v", ents)
	}
	if err := WriteFile(path, tr, func(put func(Bin) error) error {
		for _, b := range bins {
			if err := put(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Every truncation of a file is an error that names an offset, never a
// panic and never a file that reads as valid.
func TestTruncatedFiles(t *testing.T) {
	data := encodeSample(t)
	for n := 0; n < len(data); n++ {
		_, err := Read(bytes.NewReader(data[:n]), int64(n))
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("truncated at %d: error %v, want a FormatError", n, err)
		}
		if fe.Offset < 0 || fe.Offset > int64(n) {
			t.Fatalf("truncated at %d: offset %d out of the file", n, fe.Offset)
		}
	}
}

// Flipping any byte is caught: by the structure checks or the checksum.
func TestCorruptedFiles(t *testing.T) {
	data := encodeSample(t)
	for i := range data {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x55
		f, err := Read(bytes.NewReader(bad), int64(len(bad)))
		if err == nil {
			t.Fatalf("byte %d flipped: file reads as valid (%d locations)", i, len(f.Locations))
		}
		if !strings.Contains(err.Error(), "offset") {
			t.Fatalf("byte %d flipped: error %q names no offset", i, err)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	data := encodeSample(t)
	cases := []struct {
		name string
		mod  func([]byte) []byte
		want string
	}{
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, `offset 0: not an hmbtrace file (magic "XMBTRACE")`},
		{"version", func(b []byte) []byte { b[8] = 9; return b }, "offset 8: format version 9; this reader reads versions 1 to 2"},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, "checksum mismatch"},
		{"trailing", func(b []byte) []byte { return append(b, 0) }, "bytes after the END section"},
	}
	for _, c := range cases {
		b := c.mod(append([]byte(nil), data...))
		_, err := Read(bytes.NewReader(b), int64(len(b)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// A bin whose content is damaged but whose checksum was recomputed (a bug
// in a writer) fails when read, naming the offset within the file.
func TestBadBinContent(t *testing.T) {
	tr, bins := sample(t)
	bins[0].Data = append([]byte(nil), bins[0].Data...)
	bins[0].Data[len(bins[0].Data)-1] = 0xFF // a reserved token
	data := encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, f, 0)
	if err == nil || !strings.Contains(err.Error(), "token 0xFF is not valid") || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("error %v", err)
	}
}

// Streams that do not nest are reported, not silently merged.
func TestInconsistentStreams(t *testing.T) {
	tr, bins := sample(t)
	// Move location 0's depth-1 calls to depth 3: its depth-2 enter then
	// comes while depth 3 is open. (A missing parent alone is a shape the
	// buffer makes: see TestKeptBelowRemoved.)
	bins[0].Depth = 3
	data := encodeTrace(t, tr, bins)
	// Its statistics no longer match the bins' levels, which Read sees;
	// with the statistics moved too, the events do not nest.
	if _, err := Read(bytes.NewReader(data), int64(len(data))); err == nil || !strings.Contains(err.Error(), "a bin missing") {
		t.Fatalf("Read: error %v, want the level's bins missing", err)
	}
	for i := range tr.Locations[0].Levels {
		if st := &tr.Locations[0].Levels[i]; st.Depth == 1 && st.Class == ClassRegion {
			st.Depth = 3
		}
	}
	data = encodeTrace(t, tr, bins)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, f, 0)
	if err == nil || !strings.Contains(err.Error(), "do not nest") {
		t.Fatalf("error %v", err)
	}
}

// A bin removed from a file whose checksum was made anew, or a section
// that comes once given twice, is refused at Read: a trace missing a bin
// would read as a run that kept everything.
func TestMissingBinAndSecondSection(t *testing.T) {
	tr, bins := sample(t)
	data := encodeTrace(t, tr, bins[1:])
	if _, err := Read(bytes.NewReader(data), int64(len(data))); err == nil || !strings.Contains(err.Error(), "a bin missing") {
		t.Errorf("a bin removed: error %v", err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, tr)
	if err != nil {
		t.Fatal(err)
	}
	w.section(secReductions, encodeReductions(tr.Reductions))
	for _, b := range bins {
		w.Bin(b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil || !strings.Contains(err.Error(), "a second REDUCTIONS section") {
		t.Errorf("a second REDUCTIONS section: error %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(encodeSample(f))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		tf, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, l := range tf.Locations {
			it := tf.Events(l.ID)
			var e Event
			n := 0
			for it.Next(&e) {
				n++
				if n > len(data)*2 {
					t.Fatal("more events than the file can hold")
				}
			}
		}
	})
}

// FuzzReadSealed mutates a file's content and seals it with a valid
// checksum, so that the fuzzer reaches the section parser and the bin
// decoder instead of stopping at the checksum.
func FuzzReadSealed(f *testing.F) {
	data := encodeSample(f)
	f.Add(data[:len(data)-6]) // without END and checksum
	f.Fuzz(func(t *testing.T, body []byte) {
		sealed := seal(body)
		tf, err := Read(bytes.NewReader(sealed), int64(len(sealed)))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FormatError", err)
			}
			return
		}
		for _, l := range tf.Locations {
			if _, err := readAll(t, tf, l.ID); err != nil && !strings.Contains(err.Error(), "offset") && !strings.Contains(err.Error(), "do not nest") {
				t.Fatalf("event error names no offset: %v", err)
			}
		}
	})
}

func seal(body []byte) []byte {
	out := append(append([]byte(nil), body...), secEnd, 4)
	sum := crc32c(out)
	return append(out, byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24))
}

// TestWriteFuzzCorpus regenerates the committed seed corpora when
// HMB_WRITE_FUZZ_CORPUS=1.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("HMB_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set HMB_WRITE_FUZZ_CORPUS=1 to regenerate the committed seed corpus")
	}
	data := encodeSample(t)
	write := func(name string, seeds [][]byte) {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr, bins := rmaSample(t)
	rma := encodeTrace(t, tr, bins)
	tr, bins = annotated(t)
	annot := encodeTrace(t, tr, bins)
	write("FuzzRead", [][]byte{data, data[:len(data)/2], data[:11], rma, annot})
	write("FuzzReadSealed", [][]byte{data[:len(data)-6], data[:len(data)-40], rma[:len(rma)-6], annot[:len(annot)-6]})
}

func TestAxis(t *testing.T) {
	mk := func(rank int, wall int64, start uint64, sync []ClockSync) *File {
		return &File{Trace: Trace{Header: Header{Rank: rank, StartWall: time.Unix(0, wall), TicksPerSecond: 1e9, StartTicks: start, EndTicks: start + 1000, ClockSync: sync, ReferenceStart: 5000}}}
	}
	// Wall-clock starts 300 ns apart.
	a, b := mk(0, 1000, 5000, nil), mk(1, 1300, 9000, nil)
	ax := NewAxis([]*File{a, b})
	if ax.Synced() || ax.Nanos(0, a, 5100) != 100 || ax.Nanos(1, b, 9100) != 400 {
		t.Errorf("wall-clock axis: %v %d %d", ax.Synced(), ax.Nanos(0, a, 5100), ax.Nanos(1, b, 9100))
	}
	// Clock sync: rank 1's clock reads 4000 ticks more than rank 0's.
	a, b = mk(0, 1000, 5000, []ClockSync{{5000, 0}}), mk(1, 9999, 9000, []ClockSync{{9000, -4000}})
	ax = NewAxis([]*File{a, b})
	if !ax.Synced() || ax.Nanos(0, a, 5100) != 100 || ax.Nanos(1, b, 9100) != 100 {
		t.Errorf("synced axis: %v %d %d", ax.Synced(), ax.Nanos(0, a, 5100), ax.Nanos(1, b, 9100))
	}
	if ax.End != 1000 {
		t.Errorf("end %d", ax.End)
	}
	// Rank 0 holds events from 200 ns before its measurement started (the
	// origin moved back to them): the axis starts there, the clock sync
	// still measured from the reference's start.
	a = mk(0, 1000, 4800, []ClockSync{{5000, 0}})
	a.Header.EndTicks = 6000
	ax = NewAxis([]*File{a, b})
	if !ax.Synced() || ax.Nanos(0, a, 4800) != 0 || ax.Nanos(0, a, 5100) != 300 || ax.Nanos(1, b, 9100) != 300 || ax.End != 1200 {
		t.Errorf("synced axis with an early origin: %d %d %d, end %d; want 0 300 300, end 1200", ax.Nanos(0, a, 4800), ax.Nanos(0, a, 5100), ax.Nanos(1, b, 9100), ax.End)
	}
}

// TestEventFieldsAllSet: Events.Next sets an Event field by field, so a
// field added to Event must be added there too (or it keeps the previous
// event's value).
func TestEventFieldsAllSet(t *testing.T) {
	if n := reflect.TypeFor[Event]().NumField(); n != 25 {
		t.Errorf("Event has %d fields, Events.Next sets 25: set the new ones there and update this count", n)
	}
}

// An enter at the depth of the call open there, and a leave of a depth
// not open, fail as not nesting (the reader checks enters and leaves on a
// path of their own, apart from nest).
func TestEnterAtOpenDepth(t *testing.T) {
	enter := func(tm uint64, r uint32) encode.Record {
		return encode.Record{Kind: encode.KindEnter, Time: tm, Region: r}
	}
	leave := func(tm uint64) encode.Record { return encode.Record{Kind: encode.KindLeave, Time: tm} }
	for _, c := range []struct {
		name   string
		levels [][]encode.Record // by depth from 1
	}{
		{"enter", [][]encode.Record{{enter(300, 1), enter(305, 2), leave(310), leave(325)}}},
		{"leave", [][]encode.Record{{enter(300, 1), leave(400)}, {enter(301, 2), leave(310)}, {enter(302, 3), leave(320)}}},
	} {
		tr, bins := sample(t)
		// Location 0 has these streams alone, so that no other stream's
		// record comes between and fails first.
		bins = bins[4:]
		tr.Locations[0].Levels, tr.Locations[0].Recorded = nil, 0
		for d, recs := range c.levels {
			e := encode.NewEncoder(encode.All)
			b := make([]byte, 512)
			n := e.StartBin(b, recs[0].Time, 0)
			for _, r := range recs {
				n += e.Put(b[n:], r)
			}
			bins = append(bins, Bin{Location: 0, Depth: d + 1, Class: ClassRegion, Records: uint32(len(recs)), Data: b[:n]})
			tr.Locations[0].Levels = append(tr.Locations[0].Levels, LevelStats{Depth: d + 1, Class: ClassRegion, Written: uint64(len(recs))})
			tr.Locations[0].Recorded += uint64(len(recs))
		}
		data := encodeTrace(t, tr, bins)
		f, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err = readAll(t, f, 0); err == nil || !strings.Contains(err.Error(), "do not nest") {
			t.Errorf("%s: error %v, want the streams not nesting", c.name, err)
		}
	}
}
