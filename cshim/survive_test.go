package cshim_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hmbtrace/hmbtrace/internal/survive"
)

// startSurvivor starts the survive test program with HMB_SURVIVE=1 and its
// mapping in a directory of its own, and waits until it records.
// Before it records, setup (if not nil) is given its pid.
func startSurvivor(t *testing.T, p program, mode string, setup func(pid int) error, env ...string) (cmd *exec.Cmd, shm string, stderr *bytes.Buffer) {
	t.Helper()
	shm = t.TempDir()
	cmd = exec.Command(p.path, mode)
	cmd.Env = append(withoutHMB(os.Environ()), "HMB_OUTPUT="+p.out, "HMB_SURVIVE=1", "HMB_SURVIVE_DIR="+shm,
		"HMB_BUFFER_SIZE=256K", "HMB_BIN_SIZE=1K", "HMB_THROTTLE=0")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		if err := setup(cmd.Process.Pid); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal(err)
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("survive %s said %q, %v\n%s", mode, line, err, stderr)
	}
	return cmd, shm, stderr
}

// waitDeath waits for the program's death and checks it was by sig.
func waitDeath(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, stderr *bytes.Buffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("still running after a minute; stderr %q", stderr)
	}
	if strings.Contains(stderr.String(), "stage their records") {
		t.Errorf("the C probes did not take the direct path: %s", stderr)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != sig {
		t.Fatalf("ended with %v, want death by %v; stderr %q", cmd.ProcessState, sig, stderr)
	}
}

// recoverAndRead runs `hmbtrace recover` on the mapping directory and
// reads the trace it writes with every command: summary, dump (checking
// that each location's calls nest), export to OTF2 and the report.
func recoverAndRead(t *testing.T, shm string, keep bool) (trace string, events int) {
	t.Helper()
	return recoverAndReadEnd(t, shm, keep, "died without closing the measurement and without a caught signal (SIGKILL, the OOM killer, a crash or _exit")
}

// recoverAndReadEnd is recoverAndRead for a run whose end recover and
// summary are to tell as end.
func recoverAndReadEnd(t *testing.T, shm string, keep bool, end string) (trace string, events int) {
	t.Helper()
	out := t.TempDir()
	args := []string{"recover", "-o", out}
	if keep {
		args = append(args, "-keep")
	}
	msg, err := run(root, nil, built.hmbtrace, append(args, shm)...)
	if err != nil {
		t.Fatalf("hmbtrace recover: %v\n%s", err, msg)
	}
	if !strings.Contains(string(msg), end) {
		t.Errorf("hmbtrace recover says %q, want the cause %q", msg, end)
	}
	trace = filepath.Join(out, "survive.0.hmb")
	left, _ := filepath.Glob(filepath.Join(shm, "*.shm"))
	if keep != (len(left) == 1) {
		t.Errorf("mappings left after recover: %v (keep %v)", left, keep)
	}
	for _, c := range [][]string{
		{"summary", trace},
		{"export", "-format", "otf2", "-o", filepath.Join(out, "otf2"), trace},
		{"report", "-o", filepath.Join(out, "report.html"), trace},
	} {
		msg, err := run(root, nil, built.hmbtrace, c...)
		if err != nil {
			t.Fatalf("hmbtrace %s: %v\n%s", strings.Join(c, " "), err, msg)
		}
		// The summary says the trace was recovered, how the run ended,
		// and that its counts are lower bounds.
		if s := string(msg); c[0] == "summary" && (!strings.Contains(s, "RECOVERED by hmbtrace recover from the mapping the process left: "+end) ||
			!strings.Contains(s, "events recorded  >= ") || !strings.Contains(s, "lower bound: the flat profile")) {
			t.Errorf("hmbtrace summary of a recovered trace does not say so, its end (%q) and its lower bounds:\n%s", end, s)
		}
	}
	evs := dump(t, trace)
	checkNestedDump(t, evs)
	return trace, len(evs)
}

// checkNestedDump checks that every location's enters and leaves nest;
// calls open at death stay open.
func checkNestedDump(t *testing.T, evs []event) {
	t.Helper()
	stacks := map[string][]string{}
	for _, e := range evs {
		st := stacks[e.loc]
		switch e.kind {
		case "ENTER":
			if e.depth != len(st)+1 {
				t.Fatalf("%s: enter %s at depth %d, want %d", e.loc, e.region, e.depth, len(st)+1)
			}
			st = append(st, e.region)
		case "LEAVE":
			if len(st) == 0 || st[len(st)-1] != e.region || e.depth != len(st) {
				t.Fatalf("%s: leave %s at depth %d, open: %v", e.loc, e.region, e.depth, st)
			}
			st = st[:len(st)-1]
		}
		stacks[e.loc] = st
	}
	if len(stacks) != 3 {
		t.Errorf("%d locations recorded, want the 3 threads", len(stacks))
	}
}

// TestSurviveKillC kills a C program that records in three threads with
// reductions under way (every other round with the keep-last policy, which
// revokes a bin for every bin taken), with SIGKILL at random points, and
// recovers its trace each time. The first round also reads the mapping directly.
func TestSurviveKillC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "survive", nil, filepath.Join(root, "cshim", "testdata", "c", "survive.c"))
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	for i := 0; i < rounds; i++ {
		var env []string
		if i%2 == 1 {
			env = []string{"HMB_REDUCTION=last"} // bins revoked all the time: a reduction under way at any kill
		}
		cmd, shm, stderr := startSurvivor(t, p, "kill", nil, env...)
		time.Sleep(time.Duration(rng.IntN(50000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		waitDeath(t, cmd, syscall.SIGKILL, stderr)
		trace, n := recoverAndRead(t, shm, i == 0)
		if n == 0 {
			t.Fatalf("round %d: no events recovered", i)
		}
		if i == 0 {
			// A reader takes the mapping itself, with the same events.
			left, _ := filepath.Glob(filepath.Join(shm, "*.shm"))
			direct, err := run(root, nil, built.hmbtrace, "dump", left[0])
			if err != nil {
				t.Fatalf("hmbtrace dump of the mapping: %v\n%s", err, direct)
			}
			file, _ := run(root, nil, built.hmbtrace, "dump", trace)
			if !bytes.Equal(direct, file) {
				t.Errorf("dump of the mapping (%d bytes) differs from the recovered file's (%d bytes)", len(direct), len(file))
			}
		}
	}
}

// TestSurviveCaughtC: SIGTERM caught by HMB_SIGNALS=1, then SIGKILL
// while the handler writes the trace: the mapping names the signal the
// handler caught, and recover and summary say the run ended by it. The
// handler may finish first; then there is no mapping to recover and the
// round is tried again.
func TestSurviveCaughtC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "survive", nil, filepath.Join(root, "cshim", "testdata", "c", "survive.c"))
	for try := 0; try < 5; try++ {
		cmd, shm, stderr := startSurvivor(t, p, "kill", nil, "HMB_SIGNALS=1")
		time.Sleep(10 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		// SIGKILL once the handler stored the signal, before it wrote
		// the trace (it first waits for the threads to leave the probes).
		signaledMapping(shm)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if left, _ := filepath.Glob(filepath.Join(shm, "*.shm")); len(left) == 0 {
			continue // the handler wrote the trace, and the process died of SIGTERM
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("ended with %v and left its mapping; stderr %q", cmd.ProcessState, stderr)
		}
		recoverAndReadEnd(t, shm, false, "ended by signal 15 (SIGTERM), which its handler caught")
		return
	}
	t.Skip("the handler wrote the trace before the SIGKILL in every try")
}

// signaledMapping waits, up to a few seconds, until the mapping in dir
// says a handler caught a signal, and reports whether it did (false: the
// mapping is gone, the trace written, or the handler did not run).
func signaledMapping(dir string) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Microsecond) {
		found, _ := filepath.Glob(filepath.Join(dir, "*.shm"))
		if len(found) != 1 {
			return false
		}
		if mappingSignal(found[0]) != 0 {
			return true
		}
	}
	return false
}

// mappingSignal reads the signal a handler stored in the header of the
// mapping at path; 0 if none (or the file is gone).
func mappingSignal(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], int64(unsafe.Offsetof(survive.Header{}.Signal))); err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b[:])
}

// TestSurviveCrashC: a segfault and abort() in C leave a trace.
func TestSurviveCrashC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "survive", nil, filepath.Join(root, "cshim", "testdata", "c", "survive.c"))
	for mode, sig := range map[string]syscall.Signal{"segv": syscall.SIGSEGV, "abort": syscall.SIGABRT} {
		t.Run(mode, func(t *testing.T) {
			cmd, shm, stderr := startSurvivor(t, p, mode, nil)
			waitDeath(t, cmd, sig, stderr)
			if _, n := recoverAndRead(t, shm, false); n == 0 {
				t.Fatal("no events recovered")
			}
		})
	}
}

// TestSurviveOOMC: the OOM killer ends a C program that allocates beyond
// the limit of its memory cgroup (cgroup v1 here, made for the test; it
// needs root). Where no memory cgroup can be made the test is skipped:
// the check by hand is to run the program under `systemd-run --scope -p
// MemoryMax=300M` (or `ulimit -v` does not do: malloc fails, no OOM kill)
// with HMB_SURVIVE=1 and run `hmbtrace recover`.
func TestSurviveOOMC(t *testing.T) {
	build := library(t)
	cg := filepath.Join("/sys/fs/cgroup/memory", fmt.Sprintf("hmbtrace-test-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("no memory cgroup to limit the program (%v): see the test's comment for the check by hand", err)
	}
	defer os.Remove(cg)
	if err := os.WriteFile(filepath.Join(cg, "memory.limit_in_bytes"), []byte("200M"), 0o644); err != nil {
		t.Skipf("cannot limit the memory cgroup: %v", err)
	}
	os.WriteFile(filepath.Join(cg, "memory.memsw.limit_in_bytes"), []byte("200M"), 0o644) // no swap to escape to, where accounted
	p := buildC(t, build, "survive", nil, filepath.Join(root, "cshim", "testdata", "c", "survive.c"))
	cmd, shm, stderr := startSurvivor(t, p, "oom", func(pid int) error {
		return os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
	})
	waitDeath(t, cmd, syscall.SIGKILL, stderr)
	ctl, _ := os.ReadFile(filepath.Join(cg, "memory.oom_control"))
	if !strings.Contains(string(ctl), "oom_kill 1") {
		t.Errorf("memory.oom_control says %q: the OOM killer did not kill it", ctl)
	}
	if _, n := recoverAndRead(t, shm, false); n == 0 {
		t.Fatal("no events recovered")
	}
}

// TestSurviveExitC: a C program that exits normally with HMB_SURVIVE=1,
// its threads still recording, writes its trace at exit and leaves no
// mapping behind.
func TestSurviveExitC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "survive", nil, filepath.Join(root, "cshim", "testdata", "c", "survive.c"))
	cmd, shm, stderr := startSurvivor(t, p, "exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("survive exit: %v\n%s", err, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(shm, "*")); len(left) != 0 {
		t.Errorf("a normal exit left %v", left)
	}
	evs := dump(t, filepath.Join(p.out, "survive.0.hmb"))
	if len(evs) == 0 {
		t.Fatal("no events in the trace")
	}
}
