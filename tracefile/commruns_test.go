package tracefile

import (
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// encodeComms writes communicators as the COMMS section (0x22) holds them:
// every member, one varint each. Writers no longer put it; the tests use it
// to write the files earlier writers made.
func encodeComms(cs []Comm) []byte {
	var p wirecodec.Writer
	p.Uvarint(uint64(len(cs)))
	for _, c := range cs {
		p.Uvarint(uint64(c.ID))
		p.String(c.Name)
		p.Uvarint(uint64(c.Parent))
		encodeRanks(&p, c.Members)
		p.Bool(c.Remote != nil)
		if c.Remote != nil {
			encodeRanks(&p, c.Remote)
		}
	}
	return p
}

func iota32(from, n, stride int) []int32 {
	rs := make([]int32, n)
	for i := range rs {
		rs[i] = int32(from + i*stride)
	}
	return rs
}

// haloComms are the communicators of rank of a halo code on a grid of px
// columns: world (the list given, shared by the caller), self, a
// cartesian communicator of world's members, and the rank's row and
// column, as the MPI wrappers record them.
func haloComms(world []int32, rank, px int) []Comm {
	py := len(world) / px
	return []Comm{
		{ID: 1, Name: "MPI_COMM_WORLD", Members: world},
		{ID: 2, Name: "MPI_COMM_SELF", Members: []int32{int32(rank)}},
		{ID: 3, Parent: 1, Members: world},
		{ID: 4, Parent: 3, Members: iota32(rank/px*px, px, 1)},
		{ID: 5, Parent: 3, Members: iota32(rank%px, py, px)},
	}
}

// readComms reads a file of one location whose only definitions are cs;
// old writes them as COMMS, else as COMM RUNS.
func readComms(t testing.TB, cs []Comm, old bool) *File {
	t.Helper()
	tr := &Trace{Header: Header{Name: "comms", StartWall: time.Unix(1700000000, 0), Clock: "monotonic", TicksPerSecond: 1e9, Policy: "depth"},
		Locations: []Location{{ID: 0, Name: "main"}}}
	if !old {
		tr.Comms = cs
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, tr)
	if err != nil {
		t.Fatal(err)
	}
	if old {
		w.section(secComms, encodeComms(cs))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Communicators come back as they were written, from COMM RUNS and from
// the COMMS of older files: regular and irregular groups, strides up and
// down, repeated ranks, inter-communicators with and without a remote
// group, a communicator with its parent's members.
func TestCommRunsRoundTrip(t *testing.T) {
	cs := []Comm{
		{ID: 1, Name: "MPI_COMM_WORLD", Members: iota32(0, 64, 1)},
		{ID: 2, Name: "MPI_COMM_SELF", Members: []int32{5}},
		{ID: 3, Parent: 1, Members: iota32(0, 64, 1)},
		{ID: 4, Parent: 3, Members: iota32(63, 32, -2)},
		{ID: 5, Parent: 3, Members: []int32{7, 3, 3, 3, 9, 1 << 30, 0, 2, 4, 6, 8, 11}},
		{ID: 6, Parent: 4, Members: []int32{1, 3}, Remote: []int32{}},
		{ID: 7, Parent: 4, Members: iota32(0, 20, 3), Remote: append(iota32(1, 20, 3), 2, 4)},
		{ID: 9, Parent: 7, Members: iota32(0, 20, 3)},
		{ID: 8, Name: "empty", Members: nil},
	}
	for _, old := range []bool{false, true} {
		f := readComms(t, cs, old)
		if !reflect.DeepEqual(f.Comms, cs) {
			t.Errorf("old %v: read %+v\nwant %+v", old, f.Comms, cs)
		}
	}
	f := readComms(t, cs, false)
	if &f.Comms[2].Members[0] != &f.Comms[0].Members[0] || &f.Comms[7].Members[0] != &f.Comms[6].Members[0] {
		t.Error("a communicator with its parent's members does not share them")
	}
}

// The bytes of MPI_COMM_WORLD in a file do not grow with the ranks (up
// to 16383 ranks, whose count fits two varint bytes, and by a byte or two
// beyond): a run, not a list.
func TestCommRunsWorldBytes(t *testing.T) {
	size := func(ranks int) int {
		return len(encodeCommRuns([]Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: iota32(0, ranks, 1)}}))
	}
	// count 1 | id 1 | name 1+14 | parent 1 | flags 1 | total 2 | runs 1 | first 1 | length 2 | stride 1
	const want = 26
	for _, p := range []int{1000, 10000} {
		if n := size(p); n != want {
			t.Errorf("world of %d ranks: %d bytes, want %d", p, n, want)
		}
	}
	if n := size(1 << 20); n != want+2 {
		t.Errorf("world of 2^20 ranks: %d bytes, want %d", n, want+2)
	}
	// The whole table of a halo code's rank: a few bytes more per
	// communicator, none per rank.
	for _, p := range []int{100, 10000} {
		px := 10
		if p == 10000 {
			px = 100
		}
		if n := len(encodeCommRuns(haloComms(iota32(0, p, 1), p/2, px))); n > 80 {
			t.Errorf("halo communicators of %d ranks: %d bytes, want at most 80", p, n)
		}
	}
	if old := len(encodeComms([]Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: iota32(0, 10000, 1)}})); old < 19000 {
		t.Errorf("COMMS wrote world of 10^4 ranks in %d bytes: the comparison above means nothing", old)
	}
}

// The Comm tables of a 10^4-rank run's files share their groups: every
// file's MPI_COMM_WORLD (and the cartesian communicator with its members)
// is one list, every row and column one list per row and column, so the
// tables hold 10^4 + 2*10^4 ranks, not 10^4 * (2*10^4 + 200). Reading one
// more file allocates as much at 10^4 ranks as at 100.
func TestCommTablesShared(t *testing.T) {
	const ranks, px = 10000, 100
	world := iota32(0, ranks, 1)
	files := make([]*File, ranks)
	for r := range files {
		files[r] = readComms(t, haloComms(world, r, px), false)
	}
	lists := map[*int32]int{}
	for r, f := range files {
		// Lists at one address hold the same ranks: checking some files
		// checks them all.
		if r%101 == 0 && !reflect.DeepEqual(f.Comms, haloComms(world, r, px)) {
			t.Fatalf("rank %d: read %+v", r, f.Comms)
		}
		for _, c := range f.Comms {
			if len(c.Members) >= minShared {
				lists[&c.Members[0]] = len(c.Members)
			}
		}
	}
	held := 0
	for _, n := range lists {
		held += n
	}
	if len(lists) != 1+2*px || held != ranks+2*ranks {
		t.Errorf("%d distinct lists of %d ranks in all, want %d of %d", len(lists), held, 1+2*px, 3*ranks)
	}
	// Decoding a rank's table once more allocates as many bytes at any
	// size: the groups are found, not built.
	allocated := func(ranks, px int) uint64 {
		world := iota32(0, ranks, 1)
		p := encodeCommRuns(haloComms(world, 1, px))
		keep := decodeCommRuns(sectionFields(p, 0, "COMM RUNS"))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const n = 20
		for range n {
			if cs := decodeCommRuns(sectionFields(p, 0, "COMM RUNS")); len(cs) != 5 {
				t.Fatal("communicators lost")
			}
		}
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(keep)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	if small, large := allocated(400, 20), allocated(ranks, px); large > small+256 {
		t.Errorf("decoding a rank's communicators allocates %d bytes at %d ranks, %d at 400", large, ranks, small)
	}
	// The same at COMMS of older files.
	old := []*File{readComms(t, haloComms(world, 0, px), true), readComms(t, haloComms(world, 1, px), true)}
	if unsafe.SliceData(old[0].Comms[0].Members) != unsafe.SliceData(old[1].Comms[0].Members) {
		t.Error("MPI_COMM_WORLD of two files with COMMS is two lists")
	}
	runtime.KeepAlive(files)
}

// A list no file holds any more leaves the table.
func TestCommListsCollected(t *testing.T) {
	// Other tests' files are collected at any GC, so the test follows its
	// own list, found by its address, rather than counting the table.
	f := readComms(t, []Comm{{ID: 1, Name: "MPI_COMM_WORLD", Members: iota32(7, 777, 1)}}, false)
	key, ok := rankLists.keyOf(&f.Comms[0].Members[0])
	if !ok {
		t.Fatal("the world's members are not shared")
	}
	runtime.KeepAlive(f)
	f = nil
	for i := 0; i < 20 && rankLists.holds(key); i++ {
		runtime.GC()
	}
	if rankLists.holds(key) {
		t.Error("the shared list is still held after the file went")
	}
}

// Groups and flags that contradict themselves are errors naming the
// reason; the reader never allocates more ranks than maxGroup.
func TestCommRunsErrors(t *testing.T) {
	world := func(p *wirecodec.Writer, flags uint64) {
		p.Uvarint(1)
		p.String("MPI_COMM_WORLD")
		p.Uvarint(0)
		p.Uvarint(flags)
	}
	cases := []struct {
		name string
		p    func(*wirecodec.Writer)
		want string
	}{
		{"unknown flags", func(p *wirecodec.Writer) { p.Uvarint(1); world(p, 4) }, "unknown flags 0x4"},
		{"parent's members without a parent", func(p *wirecodec.Writer) { p.Uvarint(1); world(p, commParentMembers) }, "has its parent's members but no parent"},
		{"runs short", func(p *wirecodec.Writer) {
			p.Uvarint(1)
			world(p, 0)
			p.Uvarint(10)
			p.Uvarint(1)
			p.Varint(0)
			p.Uvarint(4)
			p.Varint(1)
		}, "runs hold 5 ranks, not the 10 said"},
		{"runs long", func(p *wirecodec.Writer) {
			p.Uvarint(1)
			world(p, 0)
			p.Uvarint(3)
			p.Uvarint(1)
			p.Varint(0)
			p.Uvarint(4)
			p.Varint(1)
		}, "runs hold more than the 3 ranks said"},
		{"huge", func(p *wirecodec.Writer) {
			p.Uvarint(1)
			world(p, 0)
			p.Uvarint(maxGroup + 1)
			p.Uvarint(1)
			p.Varint(0)
			p.Uvarint(maxGroup)
			p.Varint(1)
		}, "exceed 67108864"},
		{"beyond int32", func(p *wirecodec.Writer) {
			p.Uvarint(1)
			world(p, 0)
			p.Uvarint(3)
			p.Uvarint(1)
			p.Varint(maxRank - 1)
			p.Uvarint(2)
			p.Varint(1)
		}, "a run of 3 ranks from 2147483646 by 1 leaves"},
	}
	for _, c := range cases {
		var p wirecodec.Writer
		c.p(&p)
		p = append(p, 0, 0, 0, 0) // room for the runs the counts promise
		f := sectionFields(p, 0, "COMM RUNS")
		decodeCommRuns(f)
		if f.OK() || !strings.Contains(f.formatError().Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, f.Err(), c.want)
		}
	}
	// A file with both sections is refused.
	tr := &Trace{Header: Header{Name: "comms", StartWall: time.Unix(1700000000, 0), Clock: "monotonic", TicksPerSecond: 1e9, Policy: "depth"},
		Locations: []Location{{ID: 0, Name: "main"}}, Comms: []Comm{{ID: 1, Name: "x"}}}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, tr)
	if err != nil {
		t.Fatal(err)
	}
	w.section(secComms, encodeComms(tr.Comms))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil || !strings.Contains(err.Error(), "a second section of communicators") {
		t.Errorf("COMMS and COMM RUNS: error %v", err)
	}
}

// Whatever COMM RUNS holds, the reader fails cleanly or reads
// communicators that come back the same when written again.
func FuzzCommRuns(f *testing.F) {
	f.Add([]byte(encodeCommRuns(haloComms(iota32(0, 64, 1), 9, 8))))
	f.Add([]byte(encodeCommRuns([]Comm{{ID: 1, Members: []int32{4, 2, 2, 9}}, {ID: 2, Parent: 1, Members: iota32(30, 20, -1), Remote: []int32{}}})))
	f.Fuzz(func(t *testing.T, p []byte) {
		fl := sectionFields(p, 0, "COMM RUNS")
		cs := decodeCommRuns(fl)
		if !fl.OK() {
			return
		}
		q := encodeCommRuns(cs)
		g := sectionFields(q, 0, "COMM RUNS")
		if back := decodeCommRuns(g); !g.OK() || !reflect.DeepEqual(back, cs) {
			t.Fatalf("read %+v, written again and read %+v (%v)", cs, back, g.Err())
		}
	})
}

// Files read at once by several goroutines, as the tools' workers read
// them, share their groups too (run with -race).
func TestCommListsConcurrent(t *testing.T) {
	world := iota32(0, 256, 1)
	data := encodeCommRuns(haloComms(world, 3, 16))
	const workers = 8
	got := make([][]Comm, workers*50)
	done := make(chan bool)
	for w := 0; w < workers; w++ {
		go func() {
			for i := w; i < len(got); i += workers {
				got[i] = decodeCommRuns(sectionFields(data, 0, "COMM RUNS"))
			}
			done <- true
		}()
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	for i, cs := range got {
		if !reflect.DeepEqual(cs, haloComms(world, 3, 16)) {
			t.Fatalf("read %d: %+v", i, cs)
		}
		if unsafe.SliceData(cs[0].Members) != unsafe.SliceData(got[0][0].Members) ||
			unsafe.SliceData(cs[3].Members) != unsafe.SliceData(got[0][3].Members) {
			t.Fatalf("read %d holds its own lists", i)
		}
	}
}

// keyOf returns the key of the shared list starting at p.
func (t *rankInterner) keyOf(p *int32) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, wp := range t.m {
		if wp.Value() == p {
			return k, true
		}
	}
	return "", false
}

// holds reports whether key still has an entry.
func (t *rankInterner) holds(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.m[key]
	return ok
}
