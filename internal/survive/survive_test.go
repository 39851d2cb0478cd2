//go:build linux

package survive

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLayout writes a mapping's parts and reads them back through a View
// of the file: what the fill marks cover, and nothing beyond.
func TestLayout(t *testing.T) {
	dir := t.TempDir()
	l := Layout{Bins: 4, BinSize: 256, LevelCap: 2, LocCap: 3, DefCap: 32}
	m, err := Create(dir, "a/b", 1, l)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmap()
	if !strings.HasSuffix(m.Path(), "hmbtrace-a_b.1."+strconv.Itoa(os.Getpid())+".shm") {
		t.Errorf("path %s", m.Path())
	}
	if m.NewLevel(7, 3, 2) != 0 || m.NewLevel(7, 4, 2) != 1 || m.NewLevel(7, 5, 2) != -1 {
		t.Error("level entries beyond the table's capacity were given")
	}
	m.Level(1).Revoked[2] = 9
	if !m.Append(DefRegion, []byte("0123456789")) || !m.Append(DefLocation, []byte("x")) || m.Append(DefRegion, make([]byte, 20)) {
		t.Error("the definition log took a record beyond its capacity")
	}
	if m.Loc(2) == nil || m.Loc(3) != nil {
		t.Error("location entries beyond the table's capacity")
	}
	m.Loc(2).Recorded = 5
	m.Descs[1] = BinDesc{Level: 2, Ord: 0, Used: 3}
	copy(m.Bins[256:], "abcdef")
	m.Descs[2] = BinDesc{Level: 3, Used: 3} // a level without an entry
	m.Descs[3] = BinDesc{Level: 1, Used: 999}

	b, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	v, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Levels) != 2 || v.Levels[1].Revoked[2] != 9 || v.Levels[0].Loc != 7 || v.Levels[0].Depth != 3 {
		t.Errorf("levels %+v", v.Levels)
	}
	if len(v.Locs) != 3 || v.Locs[2].Recorded != 5 {
		t.Errorf("locations %+v", v.Locs)
	}
	if v.Header.DefLost != 1 || v.Header.LevelLost != 1 {
		t.Errorf("lost %d definitions, %d levels; want 1, 1", v.Header.DefLost, v.Header.LevelLost)
	}
	var defs []string
	if err := v.Definitions(func(d Def) error { defs = append(defs, string(rune('0'+d.Kind))+string(d.Payload)); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(defs, ",") != "20123456789,3x" {
		t.Errorf("definitions %q", defs)
	}
	if data, lv, ok := v.Bin(1); !ok || lv != 1 || string(data) != "abc" {
		t.Errorf("bin 1: %q level %d %v: want the bytes up to its fill mark", data, lv, ok)
	}
	for _, i := range []int{0, 2, 3} {
		if _, _, ok := v.Bin(i); ok {
			t.Errorf("bin %d (free, orphaned, or marked beyond its end) was taken", i)
		}
	}
	// A log whose mark runs past a record's end is an error, not a panic.
	v.Defs = v.Defs[:7]
	if err := v.Definitions(func(Def) error { return nil }); err == nil {
		t.Error("a definition record cut short was read")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Path()); !os.IsNotExist(err) {
		t.Errorf("Close left %s", m.Path())
	}
}

// TestCreateErrors: a missing directory is named; a second mapping with
// the same name keeps the first and takes the next name.
func TestCreateErrors(t *testing.T) {
	l := Layout{Bins: 2, BinSize: 256, LevelCap: 1, LocCap: 1, DefCap: 16}
	if _, err := Create("/nonexistent/hmb", "x", 0, l); err == nil || !strings.Contains(err.Error(), "/nonexistent/hmb") {
		t.Errorf("missing directory: %v", err)
	}
	dir := t.TempDir()
	a, err := Create(dir, "x", 0, l)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Unmap()
	b, err := Create(dir, "x", 0, l)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Unmap()
	if a.Path() == b.Path() || !strings.HasSuffix(b.Path(), "-2.shm") {
		t.Errorf("paths %s and %s", a.Path(), b.Path())
	}
	if _, err := Read([]byte("HMBSURV1 but far too short")); err == nil {
		t.Error("a short file was read as a mapping")
	}
}

// TestZombieNotAlive: a process that exited but is not reaped yet (a rank
// right after mpirun ends) is dead for recovery: its mapping is final.
func TestZombieNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	pid := cmd.Process.Pid
	start, err := ProcessStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	h := Header{PID: uint64(pid), StartTime: start}
	for i := 0; !processZombie(pid); i++ {
		if i == 1000 {
			t.Fatal("the child did not exit in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h.Alive() {
		t.Error("a zombie's mapping counts as its live process's")
	}
	cmd.Wait()
	self := Header{PID: uint64(os.Getpid())}
	self.StartTime, _ = ProcessStart(os.Getpid())
	if !self.Alive() {
		t.Error("this process is not alive")
	}
}
