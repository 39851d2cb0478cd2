package cshim_test

import (
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

// valgrindGODEBUG is the Go runtime's setting under valgrind: Go's
// preemption signals stop callgrind (its signal bookkeeping asserts), and
// valgrind 3.19 passes the CPU's RDTSCP bit through CPUID but cannot
// execute the instruction, which the runtime's cputicks uses when an M
// sleeps on a contended lock (SIGILL in runtime.lock2, on an AMD EPYC VM).
const valgrindGODEBUG = "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off"

// probeInstructions is the most instructions the direct C probe may
// execute per event (hmb_enter/hmb_leave of two nested regions, the
// throttled cache's inline test and the loop included), as callgrind
// counts them: 195 with Debian's GCC 12 at -O2 (2026-12-06). libotf2's
// OTF2_EvtWriter_Enter/Leave execute 96 (the functions alone), yet take
// longer per event (make bench-c): what the probe does beside the clock
// read hides behind its latency as long as it stays this short, so a
// change that adds to it should show here first, before it shows in the
// noise of a timed benchmark. The count varies from run to run on one
// tree (195 to 209 seen on 2026-12-07 at load 7-16: callgrind also counts
// what the Go runtime's threads run while the loop is collected), so the
// bound leaves that much room above the quiet figure.
const probeInstructions = 220

// TestProbeInstructions counts, with callgrind, the instructions of the C
// probe's direct path per event.
func TestProbeInstructions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the probe under valgrind")
	}
	valgrind := tracetest.RequireTool(t, "valgrind", "valgrind")
	build := library(t)
	p := buildC(t, build, "probe_count", nil, filepath.Join(root, "cshim", "testdata", "c", "probe_count.c"))
	const iterations = 2000
	out := filepath.Join(t.TempDir(), "callgrind.out")
	cmd := exec.Command(valgrind, "--tool=callgrind", "--toggle-collect=counted", "--callgrind-out-file="+out,
		p.path, strconv.Itoa(iterations))
	// Go's preemption signals stop callgrind (its signal bookkeeping
	// asserts); bins large enough that the counted loop fills none, so no
	// call into Go is counted; every event recorded.
	var env []string
	for _, kv := range withoutHMB(os.Environ()) {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, valgrindGODEBUG, "HMB_OUTPUT="+p.out, "HMB_THROTTLE=0", "HMB_BIN_SIZE=256K")
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("valgrind: %v\n%s", err, msg)
	}
	if !strings.Contains(string(msg), fmt.Sprintf("iterations %d", iterations)) {
		t.Fatalf("probe_count did not finish:\n%s", msg)
	}
	m := regexp.MustCompile(`Collected : (\d+)`).FindSubmatch(msg)
	if m == nil {
		t.Fatalf("no count in valgrind's output:\n%s", msg)
	}
	n, _ := strconv.ParseFloat(string(m[1]), 64)
	per := n / (4 * iterations)
	t.Logf("%.1f instructions per event", per)
	if per > probeInstructions {
		t.Errorf("the C probe executes %.1f instructions per event, more than %d: what was added to its direct path?", per, probeInstructions)
	}
	if per < 20 {
		t.Errorf("%.1f instructions per event: the counted loop did not probe (throttled, or not counted):\n%s", per, msg)
	}
	if got := regionEvents(t, p, "inner"); got != 2*(iterations+100) {
		t.Errorf("%d events of inner, want %d: the probe did not record them all", got, 2*(iterations+100))
	}
}
