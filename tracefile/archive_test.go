package tracefile_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// archiveOf writes files (the ranks of one run, in rank order) into a new
// archive in dir, as the ranks of an MPI run would: the leader creates it,
// each rank copies its trace file into its slot. eventsNone writes each
// trace without its bins instead.
func archiveOf(t testing.TB, dir string, files []*tracefile.File, eventsNone bool) string {
	t.Helper()
	plan := tracefile.ArchivePlan{Name: files[0].Header.Name, World: len(files), Groups: 1, EventsNone: eventsNone,
		Start: time.Now().Add(-time.Hour)}
	var traces [][]byte
	for _, f := range files {
		var b []byte
		if eventsNone {
			var buf bytes.Buffer
			if err := tracefile.Write(&buf, &f.Trace, func(func(tracefile.Bin) error) error { return nil }); err != nil {
				t.Fatal(err)
			}
			b = buf.Bytes()
		} else {
			var err error
			if b, err = os.ReadFile(f.Path); err != nil {
				t.Fatal(err)
			}
		}
		traces = append(traces, b)
		plan.Ranks = append(plan.Ranks, f.Header.Rank)
		plan.Capacity = append(plan.Capacity, tracefile.SlotCapacity(int64(len(b))))
	}
	path := tracefile.ArchiveName(dir, plan.Name, 0, 1)
	offs, err := tracefile.CreateArchive(path, plan)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range traces {
		err := tracefile.WriteSlot(path, offs[i], plan.Capacity[i], plan.Ranks[i], func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// events returns every event of every location of f, one per line.
func events(t testing.TB, f *tracefile.File) string {
	t.Helper()
	s, err := eventsOf(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eventsOf(f *tracefile.File) (string, error) {
	var b strings.Builder
	for _, l := range f.Locations {
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			fmt.Fprintf(&b, "%d %+v\n", l.ID, e)
		}
		if err := it.Err(); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func TestArchiveRoundTrip(t *testing.T) {
	for _, n := range []int{1, 3, 17} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			files := tracetest.Ranks(t, t.TempDir(), n, 2, 20, 0)
			path := archiveOf(t, t.TempDir(), files, false)
			if !tracefile.IsArchive(path) || tracefile.IsArchive(files[0].Path) {
				t.Fatal("IsArchive does not tell an archive from a trace file")
			}
			if _, err := tracefile.Open(path); err == nil || !strings.Contains(err.Error(), "a run archive, not one trace") {
				t.Fatalf("Open of an archive: %v", err)
			}
			a, err := tracefile.OpenArchive(path)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != "ranks" || a.World != n || a.Group != 0 || a.Groups != 1 || a.EventsNone || len(a.Slots) != n {
				t.Fatalf("archive %+v", a)
			}
			if r, err := a.Results(); err != nil || r != nil {
				t.Fatalf("results %q, %v; want none", r, err)
			}
			opened := make([]*tracefile.File, n)
			for i, s := range a.Slots {
				if s.Rank != i || s.State != tracefile.SlotInPlace || s.Off%4096 != 0 {
					t.Fatalf("slot %d: %+v", i, s)
				}
				f, err := a.OpenRank(i)
				if err != nil {
					t.Fatal(err)
				}
				opened[i] = f
				if want := fmt.Sprintf("%s#%d", path, i); f.Path != want {
					t.Errorf("path %q, want %q", f.Path, want)
				}
			}
			// The files outlive the archive: the last Close closes the file.
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			for i, f := range opened {
				g := files[i]
				if f.Header.Rank != i || !slices.EqualFunc(f.Locations, g.Locations, func(a, b tracefile.Location) bool {
					return a.ID == b.ID && a.Name == b.Name && a.Recorded == b.Recorded && len(a.Profile) == len(b.Profile)
				}) {
					t.Fatalf("rank %d: header or locations differ", i)
				}
				if got, want := events(t, f), events(t, g); got != want || got == "" {
					t.Fatalf("rank %d: events differ (%d vs %d bytes)", i, len(got), len(want))
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := a.OpenRank(0); err == nil {
				t.Fatal("OpenRank after Close: no error")
			}
		})
	}
}

func TestArchiveResults(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 2, 1, 3, 0)
	dir := t.TempDir()
	res := tracefile.AppendResult(tracefile.AppendResult(nil, 1, []byte("profile")), 0x7F, nil)
	plan := tracefile.ArchivePlan{Name: "r", World: 4, Group: 1, Groups: 2, Ranks: []int{2, 3},
		Capacity: []int64{5000, tracefile.SlotCapacity(0)}, Results: res}
	path := tracefile.ArchiveName(dir, "r", 1, 2)
	if filepath.Base(path) != "r.1.hmbrun" {
		t.Fatalf("ArchiveName: %s", path)
	}
	offs, err := tracefile.CreateArchive(path, plan)
	if err != nil {
		t.Fatal(err)
	}
	if offs[1]-offs[0] != 8192 {
		t.Errorf("slot offsets %v: capacity 5000 not rounded to 8192", offs)
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Group != 1 || a.Groups != 2 || a.World != 4 || a.Slots[0].Rank != 2 || a.Slots[1].Rank != 3 {
		t.Fatalf("archive %+v", a)
	}
	got, err := a.Results()
	if err != nil || !bytes.Equal(got, res) {
		t.Fatalf("results %q, %v; want %q", got, err, res)
	}
	secs, err := tracefile.ResultSections(got)
	if err != nil || len(secs) != 2 || secs[0].Kind != 1 || string(secs[0].Data) != "profile" || secs[1].Kind != 0x7F || len(secs[1].Data) != 0 {
		t.Fatalf("sections %+v, %v", secs, err)
	}
	_ = files
}

func TestSlotCapacity(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{
		{0, 256<<10 + 4096},
		{1 << 20, 1<<20 + 256<<10 + 4096},
		{8 << 20, 9<<20 + 4096},
		{8<<20 + 1, 9<<20 + 4096},
	} {
		if got := tracefile.SlotCapacity(c.size); got != c.want {
			t.Errorf("SlotCapacity(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// TestArchiveSlotFull writes a trace too large for its slot: ErrSlotFull,
// the slot stays empty, and once moved the reader opens the file beside.
func TestArchiveSlotFull(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 2, 2, 200, 0)
	dir := t.TempDir()
	plan := tracefile.ArchivePlan{Name: "ranks", World: 2, Groups: 1, Ranks: []int{0, 1}, Capacity: []int64{4096, 4096}}
	path := tracefile.ArchiveName(dir, "ranks", 0, 1)
	offs, err := tracefile.CreateArchive(path, plan)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= 4096 {
			t.Fatalf("trace of %d bytes fits a 4096-byte slot", len(b))
		}
		err = tracefile.WriteSlot(path, offs[i], 4096, i, func(w io.Writer) error { _, err := w.Write(b); return err })
		if !errors.Is(err, tracefile.ErrSlotFull) {
			t.Fatalf("WriteSlot of %d bytes in 4096: %v, want ErrSlotFull", len(b), err)
		}
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Slots {
		if s.State != tracefile.SlotEmpty {
			t.Fatalf("slot of rank %d is %v after ErrSlotFull", s.Rank, s.State)
		}
	}
	a.Close()
	// Rank 0 moves its trace beside the archive, under another name than
	// the rank file's; rank 1 dies.
	b, _ := os.ReadFile(files[0].Path)
	if err := os.WriteFile(filepath.Join(dir, "ranks.0.big.hmb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tracefile.MarkSlotMoved(path, offs[0], 0, "ranks.0.big.hmb"); err != nil {
		t.Fatal(err)
	}
	if err := tracefile.MarkSlotMoved(path, offs[0], 0, "x.hmb"); err == nil || !strings.Contains(err.Error(), "already written") {
		t.Fatalf("second MarkSlotMoved: %v", err)
	}
	if err := tracefile.MarkSlotMoved(path, offs[1], 1, "../x.hmb"); err == nil {
		t.Fatal("MarkSlotMoved to ../x.hmb: no error")
	}
	if err := tracefile.WriteSlot(path, offs[1], 4096, 0, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "rank 1's") {
		t.Fatalf("WriteSlot of rank 0 at rank 1's slot: %v", err)
	}
	if err := tracefile.WriteSlot(path, offs[1], 8192, 1, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "a capacity of 8192 bytes for a slot of 4096") {
		t.Fatalf("WriteSlot past its slot: %v", err)
	}
	if err := tracefile.WriteSlot(path, offs[1]+4096, 4096, 1, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "no slot at offset") {
		t.Fatalf("WriteSlot at no slot: %v", err)
	}
	a, err = tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if s := a.Slots[0]; s.State != tracefile.SlotMoved || s.Moved != "ranks.0.big.hmb" {
		t.Fatalf("slot 0: %+v", s)
	}
	f, err := a.OpenRank(0)
	if err != nil {
		t.Fatal(err)
	}
	if events(t, f) != events(t, files[0]) || f.Path != filepath.Join(dir, "ranks.0.big.hmb") {
		t.Fatalf("moved rank 0 read from %s differs", f.Path)
	}
	f.Close()

	// Empty slot, no rank file beside it: the error names the archive, the
	// rank and the reason.
	_, err = a.OpenRank(1)
	want := path + ": rank 1: slot empty: the process did not write its trace (it died, or was killed, after the collective end?); no trace file ranks.1.hmb beside it (with HMB_SURVIVE=1, hmbtrace recover -o " + dir + " writes it from the rank's mapping)"
	if !errors.Is(err, tracefile.ErrSlotEmpty) || err.Error() != want {
		t.Fatalf("empty slot: %v\nwant %s", err, want)
	}
	// With its rank file beside the archive, that file is read.
	b, _ = os.ReadFile(files[1].Path)
	if err := os.WriteFile(a.RankFile(1), b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = a.OpenRank(1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Path != filepath.Join(dir, "ranks.1.hmb") || events(t, f) != events(t, files[1]) {
		t.Fatalf("rank 1 from %s differs", f.Path)
	}
	// A file of another rank there is refused.
	b, _ = os.ReadFile(files[0].Path)
	os.WriteFile(a.RankFile(1), b, 0o644)
	if _, err := a.OpenRank(1); err == nil || !strings.Contains(err.Error(), "holds the trace of rank 0") {
		t.Fatalf("rank file of rank 0 for rank 1: %v", err)
	}
}

func TestArchiveEventsNone(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 3, 2, 20, 0)
	path := archiveOf(t, t.TempDir(), files, true)
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !a.EventsNone {
		t.Fatal("events-none flag not read")
	}
	for i := range a.Slots {
		f, err := a.OpenRank(i)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := f.Bins(); n != 0 || !f.EventsNone {
			t.Fatalf("rank %d: %d bins, EventsNone %v", i, n, f.EventsNone)
		}
		g := files[i]
		if len(f.Locations) != len(g.Locations) || f.Locations[0].Recorded != g.Locations[0].Recorded ||
			!slices.EqualFunc(f.Locations[0].Profile, g.Locations[0].Profile, func(a, b tracefile.ProfileEntry) bool {
				return a.Region == b.Region && a.Visits == b.Visits && a.Inclusive == b.Inclusive && a.Exclusive == b.Exclusive
			}) {
			t.Fatalf("rank %d: statistics differ", i)
		}
		f.Close()
	}
	// A trace with bins in an events-none archive is refused.
	dir := t.TempDir()
	plan := tracefile.ArchivePlan{Name: "ranks", World: 1, Groups: 1, Ranks: []int{0}, EventsNone: true}
	b, _ := os.ReadFile(files[0].Path)
	plan.Capacity = []int64{tracefile.SlotCapacity(int64(len(b)))}
	p := tracefile.ArchiveName(dir, "ranks", 0, 1)
	offs, err := tracefile.CreateArchive(p, plan)
	if err != nil {
		t.Fatal(err)
	}
	tracefile.WriteSlot(p, offs[0], plan.Capacity[0], 0, func(w io.Writer) error { _, err := w.Write(b); return err })
	a2, err := tracefile.OpenArchive(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	if _, err := a2.OpenRank(0); err == nil || !strings.Contains(err.Error(), "BIN section in a trace written without events") {
		t.Fatalf("bins in an events-none archive: %v", err)
	}
}

func TestArchiveCorrupt(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 3, 1, 10, 0)
	path := archiveOf(t, t.TempDir(), files, false)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	slots := a.Slots
	a.Close()
	le := binary.LittleEndian
	ixOff, ixLen := le.Uint64(orig[32:]), le.Uint64(orig[40:])
	for _, c := range []struct {
		name string
		at   int64
		open bool // the error comes from OpenRank(1), not OpenArchive
		want string
	}{
		{"index", int64(ixOff) + 3, false, "index checksum mismatch"},
		{"index checksum", int64(ixOff + ixLen - 1), false, "index checksum mismatch"},
		{"slot header magic", slots[1].Off, false, "rank 1: no slot header"},
		{"slot crc", slots[1].Off + 24, true, "rank 1: slot checksum mismatch"},
		{"slot payload", slots[1].Off + 32 + slots[1].Len/2, true, "rank 1: "},
		{"prelude", 0, false, "not an hmbtrace run archive"},
		{"version", 8, false, "archive version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := slices.Clone(orig)
			b[c.at] ^= 0x40
			p := filepath.Join(t.TempDir(), "ranks.hmbrun")
			os.WriteFile(p, b, 0o644)
			a, err := tracefile.OpenArchive(p)
			if c.open {
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				if _, err := a.OpenRank(0); err != nil {
					t.Fatalf("rank 0 of an archive corrupted in rank 1: %v", err)
				}
				_, err = a.OpenRank(1)
			}
			var fe *tracefile.FormatError
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p+": offset ") || !errors.As(err, &fe) {
				t.Fatalf("got %v, want %s: offset ...%s...", err, p, c.want)
			}
		})
	}
	// An index entry whose slot lies far past the end, the index's
	// checksum made right.
	b := slices.Clone(orig)
	ix := b[ixOff : ixOff+ixLen]
	nameLen := int(ix[0]) + 1 // "ranks": a one-byte length
	le.PutUint64(ix[nameLen+4:], 1<<63-4096)
	le.PutUint32(ix[len(ix)-4:], crc32.Checksum(ix[:len(ix)-4], crc32.MakeTable(crc32.Castagnoli)))
	p0 := filepath.Join(t.TempDir(), "ranks.hmbrun")
	os.WriteFile(p0, b, 0o644)
	if _, err := tracefile.OpenArchive(p0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("file truncated: rank 0's slot of %d bytes at offset %d", slots[0].Cap, int64(1<<63-4096))) {
		t.Fatalf("slot past the end: %v", err)
	}
	// Truncated: a slot past the end.
	p := filepath.Join(t.TempDir(), "ranks.hmbrun")
	os.WriteFile(p, orig[:slots[2].Off+100], 0o644)
	if _, err := tracefile.OpenArchive(p); err == nil || !strings.Contains(err.Error(), "file truncated: rank 2's slot of ") {
		t.Fatalf("truncated: %v", err)
	}
}

// TestCreateArchiveNotOverwritten checks that an archive of the same run
// (modified since it began) is not replaced, and a stale one is.
func TestCreateArchiveNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	path := tracefile.ArchiveName(dir, "r", 0, 1)
	plan := tracefile.ArchivePlan{Name: "r", World: 1, Groups: 1, Ranks: []int{0}, Capacity: []int64{4096}, Start: time.Now().Add(-time.Minute)}
	if _, err := tracefile.CreateArchive(path, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := tracefile.CreateArchive(path, plan); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second CreateArchive of the same run: %v, want ErrExist", err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	plan.World, plan.Ranks, plan.Capacity = 2, []int{0, 1}, []int64{4096, 4096}
	if _, err := tracefile.CreateArchive(path, plan); err != nil {
		t.Fatalf("stale archive not replaced: %v", err)
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.World != 2 {
		t.Fatalf("world %d: the stale archive is still there", a.World)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files left in the directory, want the archive alone", len(ents))
	}
}

func TestArchivePlanChecked(t *testing.T) {
	for _, p := range []tracefile.ArchivePlan{
		{Name: "x", World: 0, Groups: 1, Ranks: []int{0}, Capacity: []int64{4096}},
		{Name: "x", World: 2, Groups: 1, Group: 1, Ranks: []int{0}, Capacity: []int64{4096}},
		{Name: "x", World: 2, Groups: 1, Ranks: []int{1, 0}, Capacity: []int64{4096, 4096}},
		{Name: "x", World: 2, Groups: 1, Ranks: []int{0, 2}, Capacity: []int64{4096, 4096}},
		{Name: "x", World: 2, Groups: 1, Ranks: []int{0}, Capacity: []int64{4096, 4096}},
		{Name: "x", World: 2, Groups: 1, Ranks: []int{0}, Capacity: []int64{16}},
		{Name: "x", World: 2, Groups: 1, Ranks: []int{0}, Capacity: []int64{4096}, Results: []byte{1, 5, 0}},
		{Name: "a/b", World: 1, Groups: 1, Ranks: []int{0}, Capacity: []int64{4096}},
	} {
		if _, err := tracefile.CreateArchive(filepath.Join(t.TempDir(), "x.hmbrun"), p); err == nil {
			t.Errorf("plan %+v: no error", p)
		}
	}
	ok := tracefile.ArchivePlan{Name: "x", World: 2, Groups: 1, Ranks: []int{1}, Capacity: []int64{4096}}
	if _, err := tracefile.CreateArchive(filepath.Join(t.TempDir(), "x.hmbrun"), ok); err != nil {
		t.Errorf("plan %+v: %v", ok, err)
	}
}

// ExampleCreateArchive writes a run archive of two ranks, as the ranks of
// an MPI run do at its end, and reads rank 1 back.
func ExampleCreateArchive() {
	dir, _ := os.MkdirTemp("", "archive")
	defer os.RemoveAll(dir)
	traces := make([]*tracefile.Trace, 2)
	plan := tracefile.ArchivePlan{Name: "run", World: 2, Groups: 1, Start: time.Now()}
	for r := range traces {
		traces[r] = &tracefile.Trace{Header: tracefile.Header{Name: "run", Rank: r, TicksPerSecond: 1e9, StartWall: time.Now()}}
		plan.Ranks = append(plan.Ranks, r)
		plan.Capacity = append(plan.Capacity, tracefile.SlotCapacity(1<<10))
	}
	path := tracefile.ArchiveName(dir, "run", 0, 1)
	offs, err := tracefile.CreateArchive(path, plan) // by the group's leader
	if err != nil {
		panic(err)
	}
	for r, t := range traces { // by each rank, at its exit
		err := tracefile.WriteSlot(path, offs[r], plan.Capacity[r], r, func(w io.Writer) error {
			return tracefile.Write(w, t, func(func(tracefile.Bin) error) error { return nil })
		})
		if err != nil {
			panic(err)
		}
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		panic(err)
	}
	defer a.Close()
	f, err := a.OpenRank(1)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Println(filepath.Base(path), len(a.Slots), a.Slots[1].State, f.Header.Rank)
	// Output: run.hmbrun 2 in place 1
}

// TestArchiveConcurrentRanks opens and reads the ranks of an archive on
// several goroutines, closing the archive while they do (run with -race):
// the shared file stays open until the last rank is closed.
func TestArchiveConcurrentRanks(t *testing.T) {
	files := tracetest.Ranks(t, t.TempDir(), 6, 2, 30, 0)
	path := archiveOf(t, t.TempDir(), files, false)
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	opened := make([]*tracefile.File, len(a.Slots))
	for i := range opened {
		if opened[i], err = a.OpenRank(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.Close() // a second Close releases nothing more
	errs := make(chan error, len(opened))
	for i, f := range opened {
		want := events(t, files[i])
		go func() {
			got, err := eventsOf(f)
			if err != nil || got != want {
				errs <- fmt.Errorf("rank %d: events differ (%v)", i, err)
				return
			}
			errs <- f.Close()
		}()
	}
	for range opened {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
