package cshim_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMPINullRequests runs testdata/mpi/nullreq.c: each message completed
// by MPI_Waitall, MPI_Waitsome, MPI_Waitany, MPI_Testall or MPI_Testsome
// over an array that holds 15 null requests besides it, on a stack a
// function filled with the encoder's kind of a received message before
// the call. The wrappers must record the program's messages and nothing
// else: a null request's completion wrote no record, and the call's leave
// read the stack's garbage as one (LULESH at 64 ranks: fake receives from
// a rank the run does not have, with gigabytes, or probes dropped as of
// no known kind, and the collective end's wait states refused the run).
func TestMPINullRequests(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "nullreq", "nullreq.c")
	const n = 200
	out := filepath.Join(t.TempDir(), "hmb-out")
	_, errs := mpirun(t, 2, out, []string{"HMB_THROTTLE=0"}, prog, strconv.Itoa(n))
	for r, e := range errs {
		if strings.Contains(e, "dropped") || strings.Contains(e, "collective end") {
			t.Errorf("rank %d's stderr:\n%s", r, e)
		}
	}
	files := rankFiles(t, out, "nullreq", 2)
	sends, recvs, _ := messagesOf(t, files)
	if len(sends) != n || len(recvs) != n {
		t.Fatalf("%d sends and %d receives in the trace, want %d each", len(sends), len(recvs), n)
	}
	for _, m := range recvs {
		if m.from != 0 || m.to != 1 || m.bytes != 8 {
			t.Errorf("a receive the program did not make: %+v", m)
		}
	}
	checkMatched(t, sends, recvs)
	for r, f := range files {
		for _, l := range f.Locations {
			var recv, sent uint64
			for _, c := range l.Comm {
				recv += c.Received
				sent += c.Sent
			}
			if want := [2][2]uint64{{n, 0}, {0, n}}[r]; sent != want[0] || recv != want[1] {
				t.Errorf("rank %d's matrix: sent %d, received %d; want %d and %d", r, sent, recv, want[0], want[1])
			}
		}
	}
}
