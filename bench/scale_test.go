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
	if h.trips != 3 {
		t.Errorf("trips %d, want 3", h.trips)
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

// TestScaleModel fits runs made to follow the model exactly and checks
// the fit finds its coefficients and its prediction for 10^5 ranks.
func TestScaleModel(t *testing.T) {
	cores := float64(numCores())
	const a, b = 1e-3, 2e-3 // per round: 1 ms + 2 ms per rank per core
	mk := func(p int) scaleFit {
		round := a + b*float64(p)/cores
		return scaleFit{ranks: p, sync: round * float64(rounds(p)) * 0.5, results: round * float64(rounds(p)) * 0.5,
			slots: 1e-3 + 1e-5*float64(p), write: 0.01, onDisk: int64(p) * 1000}
	}
	var fits []scaleFit
	for _, p := range []int{16, 64, 256} {
		fits = append(fits, mk(p))
	}
	notes := scaleModel(mk(numCores()), fits)
	all := strings.Join(notes, "\n")
	for _, want := range []string{
		"per round = 1.000 ms + 2.000 ms × ranks per core",
		"slots = 1.000 ms + 0.0100 ms × ranks in the group",
		"17 rounds × 3.000 ms = 51.0 ms",
		"slots 0.01 s",
		"writes its 1 KB into one of 98 files",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the model's notes lack %q:\n%s", want, all)
		}
	}
	if rounds(1) != 0 || rounds(2) != 1 || rounds(512) != 9 || rounds(513) != 10 || rounds(100_000) != 17 {
		t.Errorf("rounds: 1 %d, 2 %d, 512 %d, 513 %d, 10^5 %d", rounds(1), rounds(2), rounds(512), rounds(513), rounds(100_000))
	}
}

// TestEndCost states the archive's end against the rank files' in the
// same bench run, with the replay apart.
func TestEndCost(t *testing.T) {
	a, f := newHaloRun(2), newHaloRun(2)
	a.trips = 3
	for rank := range 2 {
		a.steps[stepSync][rank], a.steps[stepResults][rank], a.steps[stepSlots][rank], a.steps[stepExit][rank] = 0.01, 0.02, 0.001, 0.009
		a.steps[stepReplay][rank] = 0.5
		f.steps[stepSync][rank], f.steps[stepExit][rank] = 0.01, 0.01
	}
	got := endCost(a, f, scaleFit{ranks: 2, sync: 0.0005, results: 0.0005})
	for _, want := range []string{"without the replay 0.040 s, rank files' 0.020 s (2.0x): 0.020 s more", "for 3 trips of 1 rounds (3 rounds)",
		"1.00 ms with a core per rank", "wait-state replay 0.500 s besides"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
