package measure

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestRunTwiceKeepsEarlier runs a Go program three times into one output
// directory: the newest run's trace has the plain name, each earlier one
// is in a directory of its own, readable, and the run that moved it says
// where, in one line.
func TestRunTwiceKeepsEarlier(t *testing.T) {
	if os.Getenv("HMB_TEST_RERUN") == "1" {
		m, err := Start(Config{Name: "rerun"})
		if err != nil {
			t.Fatal(err)
		}
		a := m.Region("a")
		loc := m.Location("main")
		loc.Enter(a)
		loc.Leave(a)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	var pids []int
	var outs []string
	for i := 0; i < 3; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunTwiceKeepsEarlier$")
		cmd.Env = append(os.Environ(), "HMB_TEST_RERUN=1", "HMB_OUTPUT="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		pids = append(pids, cmd.Process.Pid)
		outs = append(outs, string(out))
	}
	plain := filepath.Join(dir, "rerun.0.hmb")
	h, err := tracefile.ReadHeader(plain)
	if err != nil {
		t.Fatal(err)
	}
	if h.PID != pids[2] {
		t.Errorf("%s is pid %d's, want the newest run's, %d", plain, h.PID, pids[2])
	}
	earlier, _ := filepath.Glob(filepath.Join(dir, "rerun"+tracefile.EarlierRunPrefix+"*"))
	if len(earlier) != 2 {
		t.Fatalf("directories of earlier runs: %q, want 2", earlier)
	}
	seen := map[int]bool{}
	for _, d := range earlier {
		f, err := tracefile.Open(filepath.Join(d, "rerun.0.hmb"))
		if err != nil {
			t.Fatal(err)
		}
		seen[f.Header.PID] = true
		f.Close()
	}
	if !seen[pids[0]] || !seen[pids[1]] {
		t.Errorf("the earlier runs' traces are of pids %v, want %d and %d", seen, pids[0], pids[1])
	}
	if strings.Contains(outs[0], "moved") {
		t.Errorf("the first run moved something:\n%s", outs[0])
	}
	for i := 1; i < 3; i++ {
		if n := strings.Count(outs[i], "hmbtrace: an earlier run's rerun.0.hmb moved to "+filepath.Join(dir, "rerun.run-")); n != 1 {
			t.Errorf("run %d says where the earlier run went %d times:\n%s", i, n, outs[i])
		}
	}
}
