package cshim_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestMPIClockReads counts, with callgrind, the clock reads of
// libhmbtrace-mpi's point-to-point wrappers: two per call, exactly, the
// enter's and the leave's, the message or request record sharing one of
// them (a blocking send's message its enter's, a receive's and a request's
// record their leave's). A third read per call was most of what a
// non-blocking call or a completion cost beyond the floor of two.
// HMB_CLOCK=monotonic makes every read a call of clock_gettime, which
// callgrind counts exactly (an RDTSC it does not); the paths are the TSC's
// otherwise. testdata/mpi/clockreads.c dumps callgrind's counts once per
// pattern, after a warm-up, so what is counted is the calls alone.
func TestMPIClockReads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs MPI under valgrind")
	}
	const rounds = 100
	msg, out := runClockReads(t, rounds, nil, "HMB_CLOCK=monotonic")
	for i, pattern := range []string{"blocking", "nonblocking", "waitall"} {
		m := regexp.MustCompile(`clockreads ` + pattern + ` calls (\d+)`).FindSubmatch(msg)
		if m == nil {
			t.Fatalf("clockreads did not finish:\n%s", msg)
		}
		calls, _ := strconv.Atoi(string(m[1]))
		reads, desc := clockReads(t, fmt.Sprintf("%s.%d", out, i+1))
		if !strings.HasSuffix(desc, pattern) {
			t.Fatalf("dump %d is %q, want the counts of the %s calls", i+1, desc, pattern)
		}
		t.Logf("%s: %d clock reads in %d calls", pattern, reads, calls)
		if calls < rounds || reads == 0 {
			t.Fatalf("%s: %d calls, %d clock reads counted: the calls or their probes were not counted", pattern, calls, reads)
		}
		if reads != 2*calls {
			t.Errorf("%s: %d clock reads in %d point-to-point calls (%.2f per call), want 2 per call: an enter's and a leave's, the records sharing them",
				pattern, reads, calls, float64(reads)/float64(calls))
		}
	}
}

// runClockReads builds testdata/mpi/clockreads.c against libhmbtrace-mpi
// and runs it for rounds rounds under callgrind (with the extra valgrind
// options opts and the extra environment env); it returns the program's
// output and the path callgrind's dumps are named after (path.1, ...).
func runClockReads(t *testing.T, rounds int, opts []string, env ...string) ([]byte, string) {
	t.Helper()
	valgrind := tracetest.RequireTool(t, "valgrind", "valgrind")
	build := mpiLibrary(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "clockreads")
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-mpi")
	if err != nil {
		t.Fatalf("pkg-config hmbtrace-mpi: %v\n%s", err, pc)
	}
	args := append([]string{"-O2", "-o", prog, filepath.Join(root, "cshim", "testdata", "mpi", "clockreads.c")}, strings.Fields(string(pc))...)
	if msg, err := run(root, nil, "mpicc", args...); err != nil {
		t.Fatalf("mpicc %v: %v\n%s", args, err, msg)
	}
	out := filepath.Join(dir, "callgrind.out")
	vg := append([]string{"--tool=callgrind", "--compress-strings=no"}, opts...)
	cmd := exec.Command(valgrind, append(vg, "--callgrind-out-file="+out, prog, strconv.Itoa(rounds))...)
	// Go's preemption signals stop callgrind (see TestProbeInstructions);
	// bins large enough that no call needs a new one, which Go hands out.
	var base []string
	for _, kv := range withoutHMB(os.Environ()) {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			base = append(base, kv)
		}
	}
	cmd.Env = append(append(base, valgrindGODEBUG, "HMB_BIN_SIZE=256K",
		"HMB_OUTPUT="+filepath.Join(dir, "hmb-out")), env...)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("valgrind: %v\n%s", err, msg)
	}
	return msg, out
}

// clockReads returns the calls of clock_gettime in callgrind dump path
// (written with --compress-strings=no) and the dump's trigger.
func clockReads(t *testing.T, path string) (int, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int
	var desc string
	clock := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "desc: Trigger: "):
			desc = strings.TrimPrefix(line, "desc: Trigger: ")
		case strings.HasPrefix(line, "cfn="):
			clock = strings.Contains(line, "clock_gettime")
		case strings.HasPrefix(line, "calls=") && clock:
			// calls=<count> <target position>
			c, err := strconv.Atoi(strings.Fields(strings.TrimPrefix(line, "calls="))[0])
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			n += c
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n, desc
}
