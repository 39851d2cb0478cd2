package cshim_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestMPIJacobiImbalance runs examples/mpi-jacobi at its default size with
// rank 2 given twice the rows (-H 2), 4 ranks on this machine's cores, and
// checks that the analyses show what the example is for: rank 2 is the
// slowest in sweep in the summary, and variation segments the run by sweep
// and names rank 2 as the location with the slowest segments. Every check
// compares the run with itself, never with a time. How sweep compares with
// MPI_Init is only logged: MPI_Init's time is Open MPI's start-up of 4
// ranks on 2 cores, which a loaded machine stretches past any size of the
// example (it failed one make test in about 5 that way).
func TestMPIJacobiImbalance(t *testing.T) {
	build := mpiLibrary(t)
	p := buildExample(t, build, "mpi-jacobi")
	const np, heavy = 4, 2
	// Four times the rows, not the example's default two: at a load of 20
	// (helpers building beside the suite) a light rank preempted for a
	// slice inside sweep once outweighed twice the work in the summary's
	// slowest-rank column.
	mpirun(t, np, p.out, nil, p.path, "-H", strconv.Itoa(heavy), "-f", "4")
	files := rankFiles(t, p.out, "mpi-jacobi", np)

	var sweep, init int64
	for _, r := range variation.Totals(files) {
		switch r.Name {
		case "sweep":
			sweep = r.Inclusive
		case "MPI_Init":
			init = r.Inclusive
		}
	}
	t.Logf("over all ranks: sweep %d ns, MPI_Init %d ns", sweep, init)

	sum, err := run(root, nil, built.hmbtrace, "summary", p.out)
	if err != nil {
		t.Fatalf("hmbtrace summary %s: %v\n%s", p.out, err, sum)
	}
	row := regexp.MustCompile(`(?m)^\s*\S+ \S+\s+\S+ \S+\s+\S+ \S+\s+([0-9.]+)\s+(\d+)\s+sweep$`).FindSubmatch(sum)
	if row == nil {
		t.Fatalf("summary has no per-rank row for sweep:\n%s", sum)
	}
	if slowest, _ := strconv.Atoi(string(row[2])); slowest != heavy {
		t.Errorf("summary: slowest rank in sweep %d, want the heavy rank %d:\n%s", slowest, heavy, sum)
	}

	v, err := variation.Analyze(files, variation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Region != "sweep" {
		t.Errorf("variation segments by %q; want sweep", v.Region)
	}
	rows := v.SlowestRows()
	if len(rows) != np {
		t.Fatalf("%d locations with segments; want %d", len(rows), np)
	}
	first, second := v.Rows[rows[0]], v.Rows[rows[1]]
	// Rank 2 sweeps four times the rows of the others: its median SOS-time
	// is about four times theirs; 1.3 leaves room for a busy machine.
	if first.File != heavyFile(files, heavy) || first.Median < 1.3*second.Median {
		t.Errorf("slowest location %s (median %.0f ns), next %s (%.0f ns); want rank %d first, 1.3× the next",
			first.Label, first.Median, second.Label, second.Median, heavy)
	}
}

// heavyFile returns the index of rank's file.
func heavyFile(files []*tracefile.File, rank int) int {
	for i, f := range files {
		if f.Header.Rank == rank {
			return i
		}
	}
	return -1
}
