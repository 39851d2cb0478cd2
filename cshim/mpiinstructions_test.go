package cshim_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mpiCallInstructions bounds the instructions that libhmbtrace-mpi's
// wrappers and libhmbtrace execute per blocking point-to-point call (a
// MPI_Send or MPI_Recv to this same rank, the PMPI call excluded), as
// callgrind counts them: 431 with Debian's GCC 12 at -O2 and Open MPI 4.1
// (2026-12-07; 446 to 449 before a send after a deferred receive reached
// its probe in tail position, hmb_mpi_send, the pair's fill marks were
// stored once and the wrappers' call stopped zeroing its 64 bytes; 533
// before the send took the deferred receive into its probe and the call's
// frame went), some 85 of them the wrapper's own. Two clock reads take
// some 19 ns of the +55 ns a call costs (selfsend_pairs); the rest grows
// with these instructions.
const mpiCallInstructions = 440

// mpiRequestInstructions bounds the same per non-blocking call or
// completion (MPI_Irecv, MPI_Isend, MPI_Test and MPI_Wait of a
// point-to-point request to this same rank): 637 (2026-12-07; 903 before
// the calls that start such a request or complete it were recorded whole,
// hmb_mpi_req_call, and their records encoded inline; 729 before their
// enters were written inline from any slot of the prediction,
// hmb_put_enter_pred, and a completion took its request's entry without a
// second lookup, hmbmpi_complete_ref; 657 before the request's entry was
// written in place, pend_new, and its record encoded from the call's
// struct hmb_mpi_req, not from a copy), of which some 90 the request
// table's.
const mpiRequestInstructions = 650

// TestMPICallInstructions counts, with callgrind, the instructions of
// libhmbtrace-mpi and libhmbtrace per blocking call of a send and a
// receive to this same rank, on the program's thread alone, so that what
// is added to the wrappers' fused probe (mpicall.c, direct_mpi.h) shows
// here before it shows in the noise of selfsend_pairs; and per
// non-blocking call or completion (mpiRequestInstructions). The clock is the
// default, the TSC where it is invariant, whose read callgrind counts as
// one instruction (CLOCK_MONOTONIC's is in the vDSO, not counted).
// HMB_TIMER_SHIFT=10 keeps the time deltas of a run under valgrind, some
// 50 times slower, as small as in a real run, so that the encoders take
// the forms they take there.
func TestMPICallInstructions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs MPI under valgrind")
	}
	const rounds = 200
	msg, out := runClockReads(t, rounds, []string{"--separate-threads=yes"}, "HMB_TIMER_SHIFT=10")
	m := regexp.MustCompile(`clockreads blocking calls (\d+)`).FindSubmatch(msg)
	if m == nil {
		t.Fatalf("clockreads did not finish:\n%s", msg)
	}
	calls, _ := strconv.Atoi(string(m[1]))
	// The first dump of the first thread, the program's: the blocking calls.
	n, desc := objectInstructions(t, out+".1-01", "/libhmbtrace.so", "/libhmbtrace-mpi.so")
	if !strings.HasSuffix(desc, "blocking") {
		t.Fatalf("dump 1 is %q, want the counts of the blocking calls", desc)
	}
	per := float64(n) / float64(calls)
	t.Logf("%.1f instructions of libhmbtrace and libhmbtrace-mpi per blocking call (%d calls)", per, calls)
	if per > mpiCallInstructions {
		t.Errorf("a blocking send or receive executes %.1f instructions of the wrappers and their probe, more than %d: what was added to the fused path (mpicall.c, direct_mpi.h)?",
			per, mpiCallInstructions)
	}
	if per < 100 {
		t.Errorf("%.1f instructions per blocking call: the wrappers did not record the calls, or callgrind did not count them", per)
	}
	// The second dump of the program's thread: the non-blocking calls.
	m = regexp.MustCompile(`clockreads nonblocking calls (\d+)`).FindSubmatch(msg)
	if m == nil {
		t.Fatalf("clockreads did not finish:\n%s", msg)
	}
	calls, _ = strconv.Atoi(string(m[1]))
	n, desc = objectInstructions(t, out+".2-01", "/libhmbtrace.so", "/libhmbtrace-mpi.so")
	if !strings.HasSuffix(desc, "nonblocking") {
		t.Fatalf("dump 2 is %q, want the counts of the non-blocking calls", desc)
	}
	per = float64(n) / float64(calls)
	t.Logf("%.1f instructions of libhmbtrace and libhmbtrace-mpi per non-blocking call or completion (%d calls)", per, calls)
	if per > mpiRequestInstructions {
		t.Errorf("a non-blocking call or completion executes %.1f instructions of the wrappers and their probe, more than %d: what was added to hmb_mpi_req_call's path (mpicall.c, direct_mpi.h) or the request table (hmbtrace_mpi.c)?",
			per, mpiRequestInstructions)
	}
	if per < 100 {
		t.Errorf("%.1f instructions per non-blocking call: the wrappers did not record the calls, or callgrind did not count them", per)
	}
}

// objectInstructions returns the instructions that callgrind dump path
// (written with --compress-strings=no) counts in the code of the objects
// whose file names end with one of objs, each function's own (a call's
// inclusive cost is not added), and the dump's trigger.
func objectInstructions(t *testing.T, path string, objs ...string) (int64, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	var desc string
	in, call := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "desc: Trigger: "):
			desc = strings.TrimPrefix(line, "desc: Trigger: ")
		case strings.HasPrefix(line, "ob="):
			in = false
			for _, o := range objs {
				in = in || strings.HasSuffix(line, o)
			}
		case strings.HasPrefix(line, "calls="):
			call = true // the next cost line is the call's, inclusive
		case line != "" && (line[0] >= '0' && line[0] <= '9' || line[0] == '+' || line[0] == '-' || line[0] == '*'):
			if call {
				call = false
				continue
			}
			if !in {
				continue
			}
			fields := strings.Fields(line)
			c, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
			if err != nil || len(fields) < 2 {
				t.Fatalf("%s: cost line %q: %v", path, line, fmt.Errorf("want <position> <cost>: %v", err))
			}
			n += c
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n, desc
}
