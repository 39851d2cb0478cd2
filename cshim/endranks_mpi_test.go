package cshim_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestMPIResultsHoldEveryRank runs testdata/mpi/fewcalls.c, built through
// hmbtrace-instrument, on 128 ranks: each rank's thread stages its few
// records until MPI_Finalize without a location of its own (its first
// window), and the collective end must replay them before it reduces,
// or the run's results lack the rank. Before that, 2 to 35 of 128 ranks
// were missing from summary -insitu in every run (17 of 128 for LULESH-
// like codes at 128 ranks), and a rank's empty part of the matrix broke
// its parent's merge.
func TestMPIResultsHoldEveryRank(t *testing.T) {
	if testing.Short() {
		t.Skip("128 ranks")
	}
	build := mpiLibrary(t)
	bin := instrumentBin(t, build)
	dir := t.TempDir()
	prog := filepath.Join(dir, "fewcalls")
	if msg, err := run(dir, nil, bin, "mpicc", "-O2", "-o", prog, filepath.Join(root, "cshim", "testdata", "mpi", "fewcalls.c")); err != nil {
		t.Fatalf("hmbtrace-instrument mpicc fewcalls.c: %v\n%s", err, msg)
	}
	const np = 128
	out := filepath.Join(dir, "hmb-out")
	_, errs := mpirun(t, np, out, nil, prog)
	for r, e := range errs {
		if strings.Contains(e, "collective end") {
			t.Errorf("rank %d's stderr:\n%s", r, e)
		}
	}
	msg, err := run(root, nil, built.hmbtrace, "summary", "-insitu", out)
	if err != nil {
		t.Fatalf("hmbtrace summary -insitu: %v\n%s", err, msg)
	}
	first, _, _ := strings.Cut(string(msg), "\n")
	m := regexp.MustCompile(`(\d+) ranks .* (\d+) locations`).FindStringSubmatch(first)
	if m == nil || m[1] != "128" || m[2] != "128" {
		t.Errorf("the run's results: %q, want 128 ranks and 128 locations", first)
	}
}

// TestMPIResultsHoldEveryThread runs testdata/mpi/teamend.c, an OpenMP
// team of four threads a rank whose workers probe little: each stages its
// records (its first window) and would make its location only with its
// first replay, which an idle worker never makes before MPI_Finalize. The
// run's results lacked every worker (4 locations of 16, brief_work 4
// visits of 16), while the trace held them. With calls > 0 the workers of
// the second region probe while the master finalizes and after: the
// collective end takes their records as they stage, and the trace must
// still hold every call once (usage errors would say a call was split or
// doubled).
func TestMPIResultsHoldEveryThread(t *testing.T) {
	build := mpiLibrary(t)
	bin := instrumentBin(t, build)
	dir := t.TempDir()
	prog := filepath.Join(dir, "teamend")
	if msg, err := run(dir, nil, bin, "mpicc", "-O2", "-fopenmp", "-o", prog, filepath.Join(root, "cshim", "testdata", "mpi", "teamend.c")); err != nil {
		t.Fatalf("hmbtrace-instrument mpicc -fopenmp teamend.c: %v\n%s", err, msg)
	}
	const np, threads = 4, 4
	visits := regexp.MustCompile(`(?m)^\s*(\d+)\s.*\sbrief_work$`)
	count := func(args ...string) (int, string) {
		t.Helper()
		msg, err := run(root, nil, built.hmbtrace, args...)
		if err != nil {
			t.Fatalf("hmbtrace %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		m := visits.FindStringSubmatch(string(msg))
		if m == nil {
			t.Fatalf("hmbtrace %s: no brief_work row:\n%s", strings.Join(args, " "), msg)
		}
		n, _ := strconv.Atoi(m[1])
		return n, string(msg)
	}
	for _, calls := range []int{0, 20} {
		out := filepath.Join(dir, fmt.Sprintf("out%d", calls))
		env := []string{fmt.Sprintf("OMP_NUM_THREADS=%d", threads), "OMP_WAIT_POLICY=passive"}
		_, errs := mpirun(t, np, out, env, prog, strconv.Itoa(calls))
		for r, e := range errs {
			if strings.Contains(e, "dropped") || strings.Contains(e, "collective end") {
				t.Errorf("calls %d: rank %d's stderr:\n%s", calls, r, e)
			}
		}
		insitu, msg := count("summary", "-insitu", out)
		first, _, _ := strings.Cut(msg, "\n")
		m := regexp.MustCompile(`(\d+) ranks .* (\d+) locations`).FindStringSubmatch(first)
		if m == nil || m[1] != strconv.Itoa(np) || m[2] != strconv.Itoa(np*threads) {
			t.Errorf("calls %d: the run's results: %q, want %d ranks and %d locations", calls, first, np, np*threads)
		}
		trace, msg := count("summary", out)
		if want := np*threads + np*(threads-1)*calls; trace != want {
			t.Errorf("calls %d: the trace holds %d visits of brief_work, want %d", calls, trace, want)
		}
		if !strings.Contains(msg, "usage errors     none") {
			t.Errorf("calls %d: the trace has usage errors:\n%s", calls, msg)
		}
		// The first region's visits are the results' at least; the second's are theirs as far as they came before the end.
		if insitu < np*threads || insitu > trace || (calls == 0 && insitu != trace) {
			t.Errorf("calls %d: the run's results hold %d visits of brief_work, the trace %d; want all of the first region's (%d)",
				calls, insitu, trace, np*threads)
		}
	}
}
