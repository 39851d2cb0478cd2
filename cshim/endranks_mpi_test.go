package cshim_test

import (
	"path/filepath"
	"regexp"
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
