package otf2

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// minimalArchive defines one location with one region and the clock.
func minimalArchive(t *testing.T, dir string) (*Archive, *EventWriter) {
	t.Helper()
	a, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := a.SystemTreeNode("n", "machine", NoParent)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := a.LocationGroup("p", node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Region(RegionDef{Name: "main", Role: RoleFunction, Paradigm: ParadigmUser}); err != nil {
		t.Fatal(err)
	}
	w, err := a.Location("thread", proc)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ClockProperties(1e9, 0, 10); err != nil {
		t.Fatal(err)
	}
	return a, w
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names
}

func TestCreateRefusesExistingArchive(t *testing.T) {
	for _, existing := range []string{"traces.otf2", "traces.def", "traces"} {
		dir := t.TempDir()
		if existing == "traces" {
			if err := os.Mkdir(filepath.Join(dir, existing), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(filepath.Join(dir, existing), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Create(dir, Options{}); err == nil || !strings.Contains(err.Error(), existing) {
			t.Errorf("Create over an existing %s: %v", existing, err)
		}
		if got := listFiles(t, dir); len(got) != 1 {
			t.Errorf("after refusing, dir holds %v", got)
		}
	}
	// A second writer into the same directory fails while the first runs.
	dir := t.TempDir()
	a, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	if _, err := Create(dir, Options{}); err == nil {
		t.Error("two archives in one directory")
	}
}

func TestCreateOptions(t *testing.T) {
	for _, opt := range []Options{
		{EventChunkSize: MinChunkSize - 1},
		{EventChunkSize: MaxChunkSize + 1},
		{DefChunkSize: 1000},
		{Creator: "a\x00b"},
	} {
		dir := filepath.Join(t.TempDir(), "new")
		if _, err := Create(dir, opt); err == nil {
			t.Errorf("Create with %+v succeeded", opt)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Create with %+v left %s behind", opt, dir)
		}
	}
	a, err := Create(t.TempDir(), Options{EventChunkSize: MinChunkSize, DefChunkSize: MaxChunkSize, TraceID: 42})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	if a.traceID != 42 || a.evtChunkSize != MinChunkSize || a.defChunkSize != MaxChunkSize {
		t.Errorf("options not applied: %+v", a)
	}
}

func TestAbortRemovesWhatItWrote(t *testing.T) {
	// Create made the directory: Abort removes it.
	dir := filepath.Join(t.TempDir(), "new", "trace")
	a, w := minimalArchive(t, dir)
	if err := w.Enter(1, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Abort left %s: %v", dir, listFiles(t, dir))
	}
	if err := w.Leave(2, 0); !errors.Is(err, errAborted) {
		t.Errorf("writer after Abort: %v", err)
	}
	if err := a.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	// The directory existed with other files: they stay.
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ = minimalArchive(t, dir)
	if err := a.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, dir); len(got) != 1 || got[0] != "keep" {
		t.Errorf("after Abort the directory holds %v, want [keep]", got)
	}
}

func TestCloseWritesTheArchive(t *testing.T) {
	dir := t.TempDir()
	a, w := minimalArchive(t, dir)
	if err := w.Enter(3, 0); err != nil {
		t.Fatal(err)
	}
	// w is left open: Close closes it.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"traces", "traces/0.def", "traces/0.evt", "traces.def", "traces.otf2"}
	if got := listFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if n := a.locations[0].events; n != 1 {
		t.Errorf("location defined with %d events, want 1", n)
	}
	if err := a.Abort(); err != nil || len(listFiles(t, dir)) != len(want) {
		t.Errorf("Abort after Close: %v, files %v", err, listFiles(t, dir))
	}
	if _, err := a.Region(RegionDef{Name: "late"}); err == nil {
		t.Error("definition after Close accepted")
	}
	if _, err := a.Location("late", 0); err == nil {
		t.Error("location after Close accepted")
	}
}

func TestCloseWithoutClockAborts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	a, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Close()
	if err == nil || !strings.Contains(err.Error(), "ClockProperties") {
		t.Fatalf("Close without clock: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed Close left %v", listFiles(t, dir))
	}
}

func TestDefinitionErrors(t *testing.T) {
	a, err := Create(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	node, _ := a.SystemTreeNode("n", "machine", NoParent)
	_, err1 := a.SystemTreeNode("child", "node", 5)
	_, err2 := a.LocationGroup("p", 3)
	_, err3 := a.Location("l", 0)
	_, err4 := a.Region(RegionDef{Name: "bad\x00name"})
	_, err5 := a.Region(RegionDef{Name: "huge", File: strings.Repeat("f", DefaultDefChunkSize)})
	_, err6 := a.Group(GroupDef{Name: "g", Type: GroupTypeCommGroup, Paradigm: ParadigmMPI})
	_, err7 := a.Comm("c", 0, NoComm)
	_, err8 := a.MetricMember(MetricMemberDef{Name: "m", ValueType: 3})
	_, err9 := a.MetricClass(nil, MetricSynchronous, RecorderCPU)
	_, err10 := a.MetricClass([]MetricMemberRef{4}, MetricSynchronous, RecorderCPU)
	err11 := a.ClockProperties(0, 0, 0)
	err12 := a.ClockOffset(9, 0, 0, 0)
	_, err13 := a.MPICommWorld("w", []LocationRef{0})
	g, _ := a.Group(GroupDef{Name: "regions", Type: GroupTypeRegions})
	_, err14 := a.Comm("c", g, NoComm)
	_, err15 := a.Group(GroupDef{Name: "big", Type: GroupTypeLocations, Members: make([]uint64, DefaultDefChunkSize/9)})
	for i, c := range []struct {
		err  error
		want string
	}{
		{err1, `system tree node "child": parent 5 is not defined`},
		{err2, `location group "p": system tree node 3 is not defined`},
		{err3, `location "l": location group 0 is not defined`},
		{err4, `NUL byte at offset 3`},
		{err5, `region file of 4194304 bytes does not fit`},
		{err6, `CommLocations group of paradigm 4 to be defined first`},
		{err7, `communicator "c": group 0 is not defined`},
		{err8, `value type 3 is not`},
		{err9, `0 members, want 1 to 255`},
		{err10, `member 4 is not defined`},
		{err11, `0 ticks per second`},
		{err12, `location 9 is not defined`},
		{err13, `rank 0 is location 0, which is not defined`},
		{err14, `group 0 has type 2`},
		{err15, `more than a definition chunk`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("case %d: error %v, want %q", i+1, c.err, c.want)
		}
	}
	// Failed definitions define nothing: the next references stay dense.
	proc, err := a.LocationGroup("p", node)
	if err != nil || proc != 0 {
		t.Errorf("first location group: %d, %v", proc, err)
	}
	w, err := a.Location("t", proc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.MPICommWorld("MPI_COMM_WORLD", []LocationRef{w.Ref()}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MPICommWorld("again", []LocationRef{w.Ref()}); err == nil || !strings.Contains(err.Error(), "allows one") {
		t.Errorf("second MPICommWorld: %v", err)
	}
	if len(a.groups) != 3 || len(a.comms) != 1 {
		t.Errorf("%d groups and %d comms, want 3 and 1", len(a.groups), len(a.comms))
	}
}

// TestConcurrentWriters runs writers and definitions from several
// goroutines (meaningful under -race).
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	a, err := Create(dir, Options{EventChunkSize: MinChunkSize})
	if err != nil {
		t.Fatal(err)
	}
	node, _ := a.SystemTreeNode("n", "machine", NoParent)
	proc, _ := a.LocationGroup("p", node)
	m, _ := a.MetricMember(MetricMemberDef{Name: "m", ValueType: TypeUint64})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := a.Location(fmt.Sprint("thread ", g), proc)
			if err != nil {
				errs <- err
				return
			}
			c, err := a.MetricClass([]MetricMemberRef{m}, MetricSynchronous, RecorderCPU)
			if err != nil {
				errs <- err
				return
			}
			for i := uint64(0); i < 20000; i++ {
				r, err := a.Region(RegionDef{Name: fmt.Sprint("r", i%50)})
				if err == nil {
					err = w.Enter(i, r)
				}
				if err == nil {
					err = w.Metric(i, c, []MetricValue{MetricValue(i)})
				}
				if err == nil {
					err = w.Leave(i, r)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- w.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := a.ClockProperties(1, 0, 20000); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for i, l := range a.locations {
		if l.events != 60000 {
			t.Errorf("location %d: %d events, want 60000", i, l.events)
		}
	}
}

// TestCommDefinitionErrors checks that communicators refuse groups that
// cannot describe ranks and that MPI_COMM_SELF's group is defined once.
func TestCommDefinitionErrors(t *testing.T) {
	a, err := Create(filepath.Join(t.TempDir(), "a"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	regions, err := a.Group(GroupDef{Type: GroupTypeRegions})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.InterComm("x", regions, regions, NoComm); err == nil || !strings.Contains(err.Error(), "want GroupTypeCommGroup") {
		t.Errorf("InterComm on a region group: %v", err)
	}
	if _, err := a.InterComm("x", 7, 7, NoComm); err == nil || !strings.Contains(err.Error(), "not defined") {
		t.Errorf("InterComm on an undefined group: %v", err)
	}
	self, err := a.MPICommSelf("MPI_COMM_SELF")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.MPICommSelf("MPI_COMM_SELF"); err == nil {
		t.Error("a second MPICommSelf succeeded")
	}
	g, err := a.Group(GroupDef{Type: GroupTypeCommSelf, Paradigm: ParadigmOpenMP})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.InterComm("x", g, g, self+5); err == nil || !strings.Contains(err.Error(), "parent communicator") {
		t.Errorf("InterComm with an undefined common communicator: %v", err)
	}
	if c, err := a.InterComm("x", g, g, self); err != nil || c != self+1 {
		t.Errorf("InterComm = %d, %v; want %d (after MPI_COMM_SELF), nil", c, err, self+1)
	}
}
