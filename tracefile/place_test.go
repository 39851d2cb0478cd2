package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// runTrace returns the sample trace of a process pid whose measurement
// started at start and lasted d.
func runTrace(t *testing.T, pid int, start time.Time, d time.Duration) (*Trace, func(put func(Bin) error) error) {
	tr, bins := sample(t)
	tr.Header.PID = pid
	tr.Header.StartWall = start
	tr.Header.StartTicks = 1000
	tr.Header.EndTicks = 1000 + uint64(d.Seconds()*tr.Header.TicksPerSecond)
	return tr, func(put func(Bin) error) error {
		for _, b := range bins {
			if err := put(b); err != nil {
				return err
			}
		}
		return nil
	}
}

func writeNew(t *testing.T, path string, pid int, start time.Time, d time.Duration) Placement {
	t.Helper()
	tr, bins := runTrace(t, pid, start, d)
	pl, err := WriteNew(path, tr, bins)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// writeStale writes the trace of an earlier run, which started at start
// and lasted d, with the modification time its writing at the end of that
// run gave it. Written now, its modification time would be about the
// tests' own start, which the kernel's coarse file clock puts before or
// after time.Now() by chance: a file modified after a run started is
// concurrent to it, so the tests failed or passed by that chance.
func writeStale(t *testing.T, path string, pid int, start time.Time, d time.Duration) {
	t.Helper()
	writeNew(t, path, pid, start, d)
	if err := os.Chtimes(path, start.Add(d), start.Add(d)); err != nil {
		t.Fatal(err)
	}
}

func headerPID(t *testing.T, path string) int {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Header.PID
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestWriteNewReplacesStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.0.hmb")
	now := time.Now()
	// An earlier run: ended an hour before this one started.
	writeStale(t, path, 100, now.Add(-2*time.Hour), time.Hour)
	pl := writeNew(t, path, 200, now, time.Second)
	if pl.Path != path || !pl.Replaced || pl.Kept {
		t.Errorf("placement %+v, want the stale file replaced at %s", pl, path)
	}
	if pid := headerPID(t, path); pid != 200 {
		t.Errorf("%s holds pid %d's trace, want 200's", path, pid)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only run.0.hmb", names)
	}
}

func TestWriteNewKeepsConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.0.hmb")
	start := time.Now()
	// Started a second earlier and ended after this one started.
	writeNew(t, path, 100, start.Add(-time.Second), 1500*time.Millisecond)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pl := writeNew(t, path, 200, start, time.Second)
	want := filepath.Join(dir, "run.0.pid200.hmb")
	if pl.Path != want || !pl.Kept || pl.KeptHeader == nil || pl.KeptHeader.PID != 100 || pl.Replaced {
		t.Errorf("placement %+v, want %s with pid 100's trace kept", pl, want)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, first) {
		t.Errorf("%s changed", path)
	}
	if pid := headerPID(t, want); pid != 200 {
		t.Errorf("%s holds pid %d's trace, want 200's", want, pid)
	}
	// The same process again (a second measurement running alongside):
	// the next distinct name.
	pl = writeNew(t, path, 200, start.Add(time.Millisecond), time.Second)
	if want := filepath.Join(dir, "run.0.pid200-2.hmb"); pl.Path != want {
		t.Errorf("third trace at %s, want %s", pl.Path, want)
	}
}

func TestWriteNewUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.0.hmb")
	start := time.Now()
	if err := os.WriteFile(path, []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Modified after this measurement started: taken to be concurrent.
	pl := writeNew(t, path, 200, start.Add(-time.Minute), time.Second)
	if pl.Path == path || !pl.Kept || pl.KeptHeader != nil {
		t.Errorf("placement %+v: a file modified during the run was not kept", pl)
	}
	// Modified before: stale.
	old := start.Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	pl = writeNew(t, path, 300, start, time.Second)
	if pl.Path != path || !pl.Replaced {
		t.Errorf("placement %+v: an old unreadable file was not replaced", pl)
	}
}

// Processes finishing at once, all of one name, some finding a stale file:
// each trace lands at a name of its own and none is lost.
func TestWriteNewConcurrentWriters(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale=%v", stale), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.0.hmb")
			start := time.Now()
			if stale {
				writeStale(t, path, 1, start.Add(-2*time.Hour), time.Hour)
			}
			const writers = 8
			var wg sync.WaitGroup
			paths := make([]string, writers)
			errs := make([]error, writers)
			for i := 0; i < writers; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					tr, bins := runTrace(t, 1000+i, start, time.Second)
					pl, err := WriteNew(path, tr, bins)
					paths[i], errs[i] = pl.Path, err
				}(i)
			}
			wg.Wait()
			seen := map[string]bool{}
			for i := 0; i < writers; i++ {
				if errs[i] != nil {
					t.Fatalf("writer %d: %v", i, errs[i])
				}
				if seen[paths[i]] {
					t.Errorf("two writers report %s", paths[i])
				}
				seen[paths[i]] = true
				if pid := headerPID(t, paths[i]); pid != 1000+i {
					t.Errorf("%s holds pid %d's trace, want %d's", paths[i], pid, 1000+i)
				}
			}
			if names := dirNames(t, dir); len(names) != writers {
				t.Errorf("directory holds %d files %v, want %d traces", len(names), names, writers)
			}
		})
	}
}

func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.0.hmb")
	writeNew(t, path, 77, time.Unix(1700000000, 0), time.Second)
	h, err := ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	end, ok := h.EndWall()
	if h.PID != 77 || !ok || !end.Equal(time.Unix(1700000001, 0)) {
		t.Errorf("header pid %d, end %v %v; want pid 77, end a second after the start", h.PID, end, ok)
	}
	data, _ := os.ReadFile(path)
	for _, n := range []int{0, 5, 10, 11, 12, 40} {
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadHeader(path); err == nil {
			t.Errorf("a file cut at %d bytes: no error", n)
		}
	}
}

// The hard-link path, taken where the file system has no RENAME_NOREPLACE.
func TestLinkNoReplace(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	os.WriteFile(src, []byte("new"), 0o644)
	os.WriteFile(dst, []byte("old"), 0o644)
	if err := linkNoReplace(src, dst); !errors.Is(err, fs.ErrExist) {
		t.Errorf("onto an existing file: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("dst holds %q after a refused move", b)
	}
	os.Remove(dst)
	if err := linkNoReplace(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "new" {
		t.Errorf("dst holds %q, want the moved file", b)
	}
	if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("src still there: %v", err)
	}
}
