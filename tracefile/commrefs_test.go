package tracefile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// openRun opens every rank of a run's archive files, in rank order.
func openRun(t testing.TB, paths []string) []*tracefile.File {
	t.Helper()
	var files []*tracefile.File
	for _, p := range paths {
		a, err := tracefile.OpenArchive(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Slots {
			f, err := a.OpenRank(i)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		a.Close()
	}
	return files
}

// rawSlot reads the trace bytes of slot i of the archive at path as they
// are, without the archive's help.
func rawSlot(t *testing.T, path string, i int) (*tracefile.File, error) {
	t.Helper()
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := a.Slots[i]
	return tracefile.Read(io.NewSectionReader(f, s.Off+32, s.Len), s.Len)
}

// someRanks is rank r of a run of p ranks where only some ranks enter a
// region (MPI_Bcast: ranks divisible by 3) and only the even ranks make a
// communicator, of an irregular half of them (HaloSplit's colour), and
// the odd ranks an inter-communicator between irregular groups.
func someRanks(r, p int) *tracetest.Builder {
	b := tracetest.HaloRank("some", r, p, 2)
	tracetest.HaloSplit(b, r, p)
	if r%2 == 0 {
		var evens []int32
		for q := 0; q < p; q += 2 {
			if (q/2)%3 != 1 {
				evens = append(evens, int32(q))
			}
		}
		if (r/2)%3 != 1 {
			b.Comm("", 3, evens, nil)
		}
	} else {
		var a, c []int32
		for q := 1; q < p; q += 2 {
			if q%3 == 0 || q%7 == 0 {
				a = append(a, int32(q))
			} else {
				c = append(c, int32(q))
			}
		}
		if slices.Contains(a, int32(r)) {
			b.Comm("", 1, a, c)
		} else {
			b.Comm("", 1, c, a)
		}
	}
	if r%3 == 0 {
		b.Trace.Regions = append(b.Trace.Regions, tracefile.Region{ID: uint32(len(b.Trace.Regions) + 1), Name: "MPI_Bcast", Paradigm: tracefile.ParadigmMPI})
	}
	return b
}

// TestCommRefs writes a run of 40 ranks into three archive files whose
// slots refer to the run's groups (COMM REFS), and reads every rank back
// with the communicators its measurement defined, resolved from group 0's
// definitions; the run's definitions read from the archives are those of
// its rank files, unified by name.
func TestCommRefs(t *testing.T) {
	const p = 40
	dir, rankDir := t.TempDir(), t.TempDir()
	paths, err := tracetest.WriteArchive(dir, "some", p, 16, func(r int) *tracetest.Builder { return someRanks(r, p) })
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Fatalf("%d archive files, want 3", len(paths))
	}
	// The slots hold references: read alone, a slot says so.
	for _, path := range paths {
		if _, err := rawSlot(t, path, 0); err == nil || !strings.Contains(err.Error(), "COMM REFS") {
			t.Errorf("%s: slot 0 read alone: %v, want an error naming COMM REFS", path, err)
		}
	}
	files := openRun(t, paths)
	var byName []*tracefile.File
	for r, f := range files {
		want := someRanks(r, p)
		if len(f.Comms) != len(want.Trace.Comms) {
			t.Fatalf("rank %d: %d communicators, want %d", r, len(f.Comms), len(want.Trace.Comms))
		}
		for i, c := range f.Comms {
			w := want.Trace.Comms[i]
			if c.ID != w.ID || c.Parent != w.Parent || !slices.Equal(c.Members, w.Members) || !slices.Equal(c.Remote, w.Remote) || (c.Remote == nil) != (w.Remote == nil) {
				t.Errorf("rank %d: communicator %d = %+v, want %+v", r, i, c, w)
			}
		}
		path, err := want.WriteFile(rankDir)
		if err != nil {
			t.Fatal(err)
		}
		byName = append(byName, tracetest.Open(t, path))
	}
	run, fromRun, err := tracefile.ReadRunDefinitions(files)
	if err != nil || !fromRun {
		t.Fatalf("ReadRunDefinitions of the archives: from the run %v, %v", fromRun, err)
	}
	ref, fromRun, err := tracefile.ReadRunDefinitions(byName)
	if err != nil || fromRun {
		t.Fatalf("ReadRunDefinitions of the rank files: from the run %v, %v", fromRun, err)
	}
	if !run.Equal(ref) {
		t.Errorf("the archives' definitions differ from the rank files' unified by name:\n%+v\n%+v", run, ref)
	}
	if !slices.ContainsFunc(run.Regions, func(r tracefile.Region) bool { return r.Name == "MPI_Bcast" }) {
		t.Errorf("the run's regions lack MPI_Bcast, which ranks 0, 3, ... defined: %v", run.Regions)
	}

	// Each rank's ids map to the same unified ones both ways, the files
	// given in any order; a region a rank defined after the run's tables
	// were made is appended to them.
	extra := files[7].Regions
	files[7].Regions = append(slices.Clone(extra), tracefile.Region{ID: uint32(len(extra) + 1), Name: "after_finalize"})
	byName[7].Regions = files[7].Regions
	rev := slices.Clone(files)
	slices.Reverse(rev)
	u, err := tracefile.ReadUnified(rev)
	if err != nil || !u.FromRun {
		t.Fatalf("ReadUnified of the archives: from the run %v, %v", u != nil && u.FromRun, err)
	}
	v, err := tracefile.ReadUnified(byName)
	if err != nil || v.FromRun {
		t.Fatalf("ReadUnified of the rank files: %v", err)
	}
	if !u.Defs.Equal(v.Defs) {
		t.Errorf("with a region defined after the run's tables: the archives' definitions differ from the rank files'")
	}
	if last := u.Defs.Regions[len(u.Defs.Regions)-1]; last.Name != "after_finalize" {
		t.Errorf("the run's last region is %q, want after_finalize appended", last.Name)
	}
	for r := range files {
		a, b := u.Maps[len(files)-1-r], v.Maps[r]
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("rank %d: maps to the run's ids\n%v from the archive\n%v from the rank files", r, a, b)
		}
		if len(a.Regions) != len(files[r].Regions) || len(a.Comms) != len(files[r].Comms) {
			t.Errorf("rank %d: %d regions and %d communicators mapped of %d and %d", r, len(a.Regions), len(a.Comms), len(files[r].Regions), len(files[r].Comms))
		}
		for id, to := range a.Comms {
			// MPI_COMM_SELF is one for the run, with no members; the two
			// sides of an inter-communicator one, in the first side's view.
			c, mine := u.Defs.Comms[to-1], files[r].Comms[id-1]
			same := slices.Equal(c.Members, mine.Members) && slices.Equal(c.Remote, mine.Remote) ||
				slices.Equal(c.Members, mine.Remote) && slices.Equal(c.Remote, mine.Members) && mine.Remote != nil ||
				mine.Name == "MPI_COMM_SELF" && c.Members == nil
			if to == 0 || !same {
				t.Errorf("rank %d: communicator %d maps to %d of other members", r, id, to)
			}
		}
	}
	for _, f := range files {
		f.Close()
	}
}

// TestCommRefsNeedRunDefinitions: an archive without the run's unified
// definitions gets slots with their own groups (COMM RUNS), readable
// alone; one whose group 0 lost them reads its ranks with an error that
// names the reason.
func TestCommRefsNeedRunDefinitions(t *testing.T) {
	const p = 40
	dir := t.TempDir()
	plan := tracefile.ArchivePlan{Name: "some", World: p, Group: 0, Groups: 1}
	for r := 0; r < p; r++ {
		plan.Ranks = append(plan.Ranks, r)
		plan.Capacity = append(plan.Capacity, 64<<10)
	}
	path := tracefile.ArchiveName(dir, "some", 0, 1)
	if _, err := tracefile.CreateArchive(path, plan); err != nil {
		t.Fatal(err)
	}
	a, err := tracefile.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Slots {
		if err := tracefile.WriteSlot(path, s.Off, s.Cap, s.Rank, someRanks(s.Rank, p).WriteTrace); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	f, err := rawSlot(t, path, 2)
	if err != nil {
		t.Fatalf("a slot of an archive without the run's definitions: %v", err)
	}
	if len(f.Comms) != len(someRanks(2, p).Trace.Comms) {
		t.Errorf("rank 2 read alone: %d communicators", len(f.Comms))
	}

	// Group 1 of two whose group 0 holds no definitions: written while
	// group 0 had them, read after it lost them.
	dir = t.TempDir()
	paths, err := tracetest.WriteArchive(dir, "some", p, 20, func(r int) *tracetest.Builder { return someRanks(r, p) })
	if err != nil {
		t.Fatal(err)
	}
	plan = tracefile.ArchivePlan{Name: "some", World: p, Group: 0, Groups: 2}
	for r := 0; r < 20; r++ {
		plan.Ranks = append(plan.Ranks, r)
		plan.Capacity = append(plan.Capacity, 64<<10)
	}
	os.Remove(paths[0])
	if _, err := tracefile.CreateArchive(paths[0], plan); err != nil {
		t.Fatal(err)
	}
	a, err = tracefile.OpenArchive(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.OpenRank(0)
	if err == nil || !strings.Contains(err.Error(), "no unified definitions") || !strings.Contains(err.Error(), filepath.Base(paths[0])) {
		t.Errorf("a rank whose run lost its definitions: %v, want an error naming group 0's file and the reason", err)
	}
}

// slotBytes returns the bytes of the ranks' traces in a run's archives,
// and the bytes the reader allocated to open every rank.
func slotBytes(t *testing.T, paths []string) (traces int64, ranks int, alloc uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	files := openRun(t, paths)
	runtime.ReadMemStats(&after)
	for _, p := range paths {
		a, err := tracefile.OpenArchive(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range a.Slots {
			traces += s.Len
		}
		a.Close()
	}
	for _, f := range files {
		f.Close()
	}
	return traces, len(files), after.TotalAlloc - before.TotalAlloc
}

// TestSlotBytesFlat is the size regression test of a run archive: a halo
// code whose ranks also split an irregular half of the run off
// (tracetest.HaloSplit) takes as many bytes per rank in its slots at 10^3
// ranks as at 10^2, where its rank files grow by a byte per rank of the
// run; the reader allocates no more per rank either.
func TestSlotBytesFlat(t *testing.T) {
	type size struct {
		slot, file float64 // bytes per rank
		alloc      float64 // bytes the reader allocated per rank
	}
	measure := func(p int) size {
		dir := t.TempDir()
		paths, err := tracetest.WriteHaloArchive(dir, "halo", p, 1024, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		traces, n, alloc := slotBytes(t, paths)
		if n != p {
			t.Fatalf("%d ranks read of %d", n, p)
		}
		// The same ranks as files of their own.
		var files int64
		for r := 0; r < p; r += p / 10 {
			b := tracetest.HaloRank("halo", r, p, 1)
			tracetest.HaloSplit(b, r, p)
			path, err := b.WriteFile(dir)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			files += fi.Size()
		}
		return size{slot: float64(traces) / float64(p), file: float64(files) / 10, alloc: float64(alloc) / float64(p)}
	}
	small, large := measure(100), measure(1000)
	t.Logf("bytes per rank at 10^2 and 10^3 ranks: slots %.0f, %.0f; rank files %.0f, %.0f; read %.0f, %.0f",
		small.slot, large.slot, small.file, large.file, small.alloc, large.alloc)
	// The file form grows with the run: the test could tell.
	if large.file < small.file+300 {
		t.Fatalf("rank files: %.0f bytes per rank at 10^2 ranks, %.0f at 10^3: the irregular group should grow them", small.file, large.file)
	}
	// Varints of the ranks and times may take a byte more at 10^3.
	if large.slot > small.slot+24 {
		t.Errorf("slots: %.0f bytes per rank at 10^2 ranks, %.0f at 10^3: they grow with the run", small.slot, large.slot)
	}
	if large.alloc > small.alloc*1.25+1024 {
		t.Errorf("reading: %.0f bytes allocated per rank at 10^2 ranks, %.0f at 10^3: it grows with the run", small.alloc, large.alloc)
	}
}

// The tools open a run's ranks on several workers at once: the run's
// groups are loaded once and shared (run with -race).
func TestCommRefsConcurrent(t *testing.T) {
	const p = 40
	paths, err := tracetest.WriteArchive(t.TempDir(), "some", p, 9, func(r int) *tracetest.Builder { return someRanks(r, p) })
	if err != nil {
		t.Fatal(err)
	}
	type slot struct {
		a *tracefile.Archive
		i int
	}
	var slots []slot
	for _, path := range paths {
		a, err := tracefile.OpenArchive(path)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		for i := range a.Slots {
			slots = append(slots, slot{a, i})
		}
	}
	errs := make(chan error, len(slots))
	for _, s := range slots {
		go func() {
			f, err := s.a.OpenRank(s.i)
			if err == nil {
				want := someRanks(f.Header.Rank, p).Trace.Comms
				if len(f.Comms) != len(want) || !slices.Equal(f.Comms[len(want)-1].Members, want[len(want)-1].Members) {
					err = fmt.Errorf("rank %d: communicators %v, want %v", f.Header.Rank, f.Comms, want)
				}
				f.Close()
			}
			errs <- err
		}()
	}
	for range slots {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
