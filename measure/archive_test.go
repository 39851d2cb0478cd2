package measure

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

func TestOutputConfig(t *testing.T) {
	lookup, environ := envFrom(map[string]string{"HMB_OUTPUT_LAYOUT": "rank-files", "HMB_AGGREGATE": "16",
		"HMB_OUTPUT_EVENTS": "none", "HMB_COLLECTIVE_TIMEOUT": "5s"})
	c, err := configFromLookup(lookup, environ, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.OutputLayout != LayoutRankFiles || c.Aggregate != 16 || !c.NoEvents || c.CollectiveTimeout != 5*time.Second {
		t.Errorf("config %+v", c)
	}
	for _, bad := range []struct{ name, value, want string }{
		{"HMB_OUTPUT_LAYOUT", "files", `HMB_OUTPUT_LAYOUT="files": want archive or rank-files`},
		{"HMB_AGGREGATE", "0", `HMB_AGGREGATE="0": want a number of ranks per archive file, 1 or more`},
		{"HMB_AGGREGATE", "x", `HMB_AGGREGATE="x"`},
		{"HMB_OUTPUT_EVENTS", "some", `HMB_OUTPUT_EVENTS="some": want all or none`},
		{"HMB_COLLECTIVE_TIMEOUT", "0s", `HMB_COLLECTIVE_TIMEOUT="0s": want a duration`},
		{"HMB_COLLECTIVE_TIMEOUT", "soon", `HMB_COLLECTIVE_TIMEOUT="soon"`},
	} {
		lookup, environ := envFrom(map[string]string{bad.name: bad.value})
		if _, err := configFromLookup(lookup, environ, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s=%s: error %v, want it to contain %q", bad.name, bad.value, err, bad.want)
		}
	}
	for _, c := range []Config{{OutputLayout: "x"}, {Aggregate: -1}, {CollectiveTimeout: -time.Second}} {
		if err := c.validate(); err == nil {
			t.Errorf("%+v: valid", c)
		}
	}
	m := startTest(t, Config{IgnoreEnv: true})
	defer m.Close()
	if a, n, d := m.runEnd(); !a || n != DefaultAggregate || d != DefaultCollectiveTimeout {
		t.Errorf("runEnd of the zero Config: %v %d %v", a, n, d)
	}
}

// archiveRun records a few calls and closes the measurement through a slot
// of a one-rank archive of the given capacity (0: what traceSize asks for).
func archiveRun(t *testing.T, cfg Config, calls int, capacity int64) (dir string, size int64) {
	t.Helper()
	dir = t.TempDir()
	cfg.Output, cfg.Name, cfg.IgnoreEnv = dir, "run", true
	m := startTest(t, cfg)
	l := m.Location("main")
	r := m.Region("work")
	for i := 0; i < calls; i++ {
		l.Enter(r)
		l.Leave(r)
	}
	size = m.traceSize(1)
	if capacity == 0 {
		capacity = tracefile.SlotCapacity(size)
	}
	path, off, err := m.createArchive(0, 1, 1, []int{0}, []int64{capacity})
	if err != nil {
		t.Fatal(err)
	}
	if want := tracefile.ArchiveName(dir, "run", 0, 1); path != want {
		t.Errorf("archive %s, want %s", path, want)
	}
	m.setArchiveSlot(0, 1, 1, off[0], capacity)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, size
}

func TestArchiveSlot(t *testing.T) {
	for _, none := range []bool{false, true} {
		dir, size := archiveRun(t, Config{NoEvents: none}, 1000, 0)
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("%s holds %d files, want the archive alone", dir, len(entries))
		}
		a, err := tracefile.OpenArchive(filepath.Join(dir, "run.hmbrun"))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		s := a.Slots[0]
		if s.State != tracefile.SlotInPlace || a.EventsNone != none {
			t.Fatalf("slot %+v, events none %v", s, a.EventsNone)
		}
		// The bound holds: what was written is no more than traceSize said.
		if s.Len > size {
			t.Errorf("trace of %d bytes, traceSize said %d", s.Len, size)
		}
		f, err := a.OpenRank(0)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := f.Bins()
		if none != (n == 0) {
			t.Errorf("events none %v: %d bins", none, n)
		}
		if p := f.Locations[0].Profile; len(p) == 0 || p[0].Visits != 1000 {
			t.Errorf("profile %+v, want 1000 visits of work", p)
		}
		f.Close()
	}
}

// TestArchiveSlotFull: a trace that outgrew its slot goes to the rank's own
// file, named in the slot.
func TestArchiveSlotFull(t *testing.T) {
	dir, _ := archiveRun(t, Config{NoThrottle: true}, 20000, 4096)
	a, err := tracefile.OpenArchive(filepath.Join(dir, "run.hmbrun"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if s := a.Slots[0]; s.State != tracefile.SlotMoved || s.Moved != "run.0.hmb" {
		t.Fatalf("slot %+v, want moved to run.0.hmb", s)
	}
	f, err := a.OpenRank(0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, _ := f.Bins(); n == 0 {
		t.Errorf("the moved trace has no bins")
	}
}
