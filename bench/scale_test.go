package main

import (
	"math"
	"strings"
	"testing"
)

// TestHaloParse reads the lines halo.c and the MPI wrappers print under
// HALO_TIMING and HMB_COLLECTIVE_TIMING, and refuses a run in which a rank
// did not report a step.
func TestHaloParse(t *testing.T) {
	stdout := "halo: ranks=2 iterations=20 cells=64 residual=1 token=0\n" +
		"finalize 1 0.250000\nexit 1 0.010000\nfinalize 0 0.200000\nexit 0 0.020000\n"
	stderr := "hmbtrace: rank 1: collective end of 2 ranks, 1 rounds, 3 trips: clock sync 0.100000 s, results 0.013000 s, wait-state replay 0.500000 s, " +
		"archive slots 0.001000 s, replay calls 7, CPU 0.090000 s, of it the replay's 0.060000 s, results' 0.020000 s, MPI_Init's clock sync 0.004000 s\n" +
		"hmbtrace: 2 ranks wrote x.hmbrun (1.0 MB reserved)\n" +
		"hmbtrace: rank 0: collective end of 2 ranks, 1 rounds, 3 trips: clock sync 0.050000 s, results 0.034000 s, wait-state replay 0.400000 s, " +
		"archive slots 0.002000 s, replay calls 7, CPU 0.080000 s, of it the replay's 0.050000 s, results' 0.030000 s, MPI_Init's clock sync 0.003000 s\n"
	h := newHaloRun(2)
	if err := h.parse(stdout, stderr); err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{
		stepSync: {0.05, 0.1}, stepResults: {0.034, 0.013}, stepReplay: {0.4, 0.5}, stepSlots: {0.002, 0.001},
		stepFinalize: {0.2, 0.25}, stepExit: {0.02, 0.01}, stepCPU: {0.03, 0.02}, stepReplayCPU: {0.05, 0.06},
		stepInitSync: {0.003, 0.004},
	}
	for step, w := range want {
		for rank, v := range w {
			if got := h.steps[step][rank]; got != v {
				t.Errorf("%s of rank %d: %v, want %v", step, rank, got, v)
			}
		}
	}
	// The replay apart: rank 1: 0.1 + 0.013 + 0.001 + 0.01; rank 0: 0.05 + 0.034 + 0.002 + 0.02.
	if got := h.end(); math.Abs(got-0.124) > 1e-12 {
		t.Errorf("end %v, want 0.124 (rank 1's steps)", got)
	}
	// From MPI_Finalize, less the replay: rank 0 arrived first and waited
	// in its MPI_Finalize, which end does not see.
	f := newHaloRun(2)
	f.steps[stepFinalize] = []float64{0.9, 0.3}
	f.steps[stepReplay] = []float64{0.2, 0.2}
	f.steps[stepExit] = []float64{0.01, 0.02}
	if got := f.fromFinalize(); math.Abs(got-0.71) > 1e-12 {
		t.Errorf("from MPI_Finalize %v, want 0.71 (rank 0's 0.9 - 0.2 + 0.01)", got)
	}
	files := newHaloRun(2) // no replay: its steps stay NaN
	files.steps[stepFinalize] = []float64{0.5, 0.1}
	files.steps[stepExit] = []float64{0.01, 0.02}
	if got := files.fromFinalize(); math.Abs(got-0.51) > 1e-12 {
		t.Errorf("rank files from MPI_Finalize %v, want 0.51", got)
	}
	if h.trips != 3 || h.rounds != 1 {
		t.Errorf("trips %d, rounds %d, want 3 and 1", h.trips, h.rounds)
	}
	short := newHaloRun(2)
	err := short.parse(stdout, stderr[:strings.Index(stderr, "hmbtrace: 2 ranks")])
	if err == nil || !strings.Contains(err.Error(), "rank 0 did not report") {
		t.Errorf("rank 0's timing line missing: %v, want an error naming rank 0", err)
	}
	if err := newHaloRun(1).parse(stdout, ""); err == nil || !strings.Contains(err.Error(), "no rank 1") {
		t.Errorf("a rank beyond the run: %v, want an error naming it", err)
	}
}
