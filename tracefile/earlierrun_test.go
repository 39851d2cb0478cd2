package tracefile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestEarlierRunFile(t *testing.T) {
	for file, want := range map[string]bool{
		"prog.0.hmb": true, "prog.17.hmb": true, "prog.3.pid42.hmb": true, "prog.3.pid42-2.hmb": true,
		"prog.hmbrun": true, "prog.2.hmbrun": true,
		"prog.hmb": false, "prog.x.hmb": false, "prog.b.0.hmb": false, "prog.0.hmb.tmp": false,
		"prog.0.pid.hmb": false, "prog.0.pid1-.hmb": false, "prog.x.hmbrun": false, "prog2.0.hmb": false,
		"other.0.hmb": false, "prog.run-20260101-000000": false,
	} {
		if got := earlierRunFile(file, "prog"); got != want {
			t.Errorf("earlierRunFile(%q, prog) = %v, want %v", file, got, want)
		}
	}
	// A name with a dot does not take the files of its prefix's run.
	if earlierRunFile("a.b.0.hmb", "a") || !earlierRunFile("a.b.0.hmb", "a.b") {
		t.Error("runs a and a.b are told apart wrongly")
	}
}

// TestMoveEarlierRun moves the earlier run's files, and only those: a file
// written since this run began, another name's files and files that are not
// a run's stay.
func TestMoveEarlierRun(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name string, mod time.Time) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"p.0.hmb", "p.1.hmb", "p.hmbrun", "p.1.pid7.hmb"} {
		write(f, old)
	}
	start := time.Now()
	write("p.2.hmb", start.Add(time.Second)) // a process of this run
	write("q.0.hmb", old)                    // another program's
	write("p.notes", old)
	moved, err := MoveEarlierRun(dir, "p", start)
	if err != nil {
		t.Fatal(err)
	}
	if moved == nil || len(moved.Files) != 4 {
		t.Fatalf("moved %+v, want the 4 files of the earlier run", moved)
	}
	if want := filepath.Join(dir, "p.run-"+old.Local().Format("20060102-150405")); moved.Dir != want {
		t.Errorf("moved to %s, want %s", moved.Dir, want)
	}
	for _, f := range []string{"p.2.hmb", "q.0.hmb", "p.notes"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s did not stay: %v", f, err)
		}
	}
	for _, f := range moved.Files {
		if _, err := os.Stat(filepath.Join(moved.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	// Nothing left to move; a directory that does not exist holds nothing.
	if again, err := MoveEarlierRun(dir, "p", start); again != nil || err != nil {
		t.Errorf("second move: %+v, %v", again, err)
	}
	if none, err := MoveEarlierRun(filepath.Join(dir, "none"), "p", start); none != nil || err != nil {
		t.Errorf("missing directory: %+v, %v", none, err)
	}
}
