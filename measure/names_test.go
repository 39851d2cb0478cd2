package measure

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestNamesChild is the child process of the file-name tests; it runs only
// when they start it. It measures with the configuration of its
// environment and, given NAMES_CHILD_WAIT=n, keeps its measurement open
// until n children have started theirs, so that they run at the same time.
func TestNamesChild(t *testing.T) {
	id := os.Getenv("NAMES_CHILD")
	if id == "" {
		t.Skip("the child process of the file-name tests")
	}
	cfg, err := ConfigFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	m, err := Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	loc := m.Location("main")
	r := m.Region("work")
	loc.Enter(r)
	loc.Leave(r)
	if n, _ := strconv.Atoi(os.Getenv("NAMES_CHILD_WAIT")); n > 0 {
		dir := os.Getenv("NAMES_CHILD_SYNC")
		if err := os.WriteFile(filepath.Join(dir, id), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if ents, _ := os.ReadDir(dir); len(ents) >= n {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "the other children did not start")
				os.Exit(3)
			}
		}
	}
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(m.Path())
	os.Exit(0)
}

// nameChild returns the command of a child measuring into dir with the
// given extra environment, and the launcher's rank variables of this
// process removed.
func nameChild(dir, id string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestNamesChild$", "-test.v=false")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(LauncherRankVars, name) && !strings.HasPrefix(name, "HMB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "NAMES_CHILD="+id, "HMB_OUTPUT="+dir, "HMB_NAME=run", "HMB_BUFFER_SIZE=1M", "HMB_BIN_SIZE=4K")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func runNameChild(t *testing.T, cmd *exec.Cmd) (path, stderr string) {
	t.Helper()
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, errb.String())
	}
	return strings.TrimSpace(string(out)), errb.String()
}

func traceFiles(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.hmb"))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := os.ReadDir(dir)
	if len(all) != len(paths) {
		t.Errorf("directory %s holds %d entries, %d of them traces", dir, len(all), len(paths))
	}
	return paths
}

func TestRankFileNames(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	cases := []struct {
		env  []string
		file string
	}{
		{nil, "run.0.hmb"},
		{[]string{"HMB_RANK=5"}, "run.5.hmb"},
		{[]string{"OMPI_COMM_WORLD_RANK=3", "PMIX_RANK=3"}, "run.3.hmb"},
		{[]string{"PMI_RANK=2"}, "run.2.hmb"},
		{[]string{"SLURM_PROCID=7"}, "run.7.hmb"},
		{[]string{"HMB_RANK=1", "OMPI_COMM_WORLD_RANK=3"}, "run.1.hmb"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path, stderr := runNameChild(t, nameChild(dir, "0", c.env...))
		want := filepath.Join(dir, c.file)
		if path != want || stderr != "" {
			t.Errorf("%v: trace at %s (stderr %q), want %s", c.env, path, stderr, want)
		}
		f, err := tracefile.Open(want)
		if err != nil {
			t.Errorf("%v: %v", c.env, err)
			continue
		}
		if r, _ := strconv.Atoi(strings.Split(c.file, ".")[1]); f.Header.Rank != r {
			t.Errorf("%v: header rank %d, want %d", c.env, f.Header.Rank, r)
		}
		f.Close()
	}
}

// Two processes given the same rank write two files, and the second says
// so; a later run replaces the stale file of the first.
func TestSameRankTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, syncDir := t.TempDir(), t.TempDir()
	var wg sync.WaitGroup
	paths, stderrs := make([]string, 2), make([]string, 2)
	for i := range 2 {
		cmd := nameChild(dir, strconv.Itoa(i), "HMB_RANK=4", "NAMES_CHILD_WAIT=2", "NAMES_CHILD_SYNC="+syncDir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var errb strings.Builder
			cmd.Stderr = &errb
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v\n%s", i, err, errb.String())
			}
			paths[i], stderrs[i] = strings.TrimSpace(string(out)), errb.String()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	files := traceFiles(t, dir)
	if len(files) != 2 || paths[0] == paths[1] {
		t.Fatalf("two processes of rank 4 left %v (reported %v)", files, paths)
	}
	main := filepath.Join(dir, "run.4.hmb")
	var warned int
	pids := map[int]bool{}
	for i, p := range paths {
		f, err := tracefile.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		pids[f.Header.PID] = true
		f.Close()
		if p == main {
			if stderrs[i] != "" {
				t.Errorf("the process that got %s said %q", main, stderrs[i])
			}
			continue
		}
		warned++
		t.Logf("the second process said: %s", stderrs[i])
		if want := fmt.Sprintf("run.4.pid%d.hmb", cmdPID(t, p)); filepath.Base(p) != want {
			t.Errorf("second trace %s, want %s", p, want)
		}
		if n := strings.Count(stderrs[i], "\n"); n != 1 || !strings.Contains(stderrs[i], main+" holds the trace of pid") || !strings.Contains(stderrs[i], "this trace is "+p) {
			t.Errorf("the second process said %q, want one line naming both files", stderrs[i])
		}
	}
	if warned != 1 || len(pids) != 2 {
		t.Errorf("%d processes warned, %d distinct pids in the files; want 1 and 2", warned, len(pids))
	}

	// A later run of rank 4 replaces run.4.hmb, a stale file now, and
	// leaves the other alone.
	path, stderr := runNameChild(t, nameChild(dir, "2", "HMB_RANK=4"))
	if path != main || stderr != "" {
		t.Errorf("a later run wrote %s (stderr %q), want %s replaced", path, stderr, main)
	}
	if files := traceFiles(t, dir); len(files) != 2 {
		t.Errorf("after a later run: %v, want two files", files)
	}
}

// cmdPID returns the pid in the header of the trace at path.
func cmdPID(t *testing.T, path string) int {
	t.Helper()
	h, err := tracefile.ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	return h.PID
}
