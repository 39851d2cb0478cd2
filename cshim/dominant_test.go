package cshim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
	"github.com/hmbtrace/hmbtrace/render"
)

// TestMPIInlinedSegmentsByCollective runs testdata/mpi/inlined.c, a C MPI
// code whose computation is inlined into main (built -O2 against the MPI
// wrappers, with one user region, init, entered twice per rank), on 2 and
// 4 ranks: variation cuts its iterations between the calls of
// MPI_Allreduce, not at init, says why the choice is weak and what to do,
// and ranks rank 1's planted slow iteration first. Every check compares
// the run with itself, never with a time.
func TestMPIInlinedSegmentsByCollective(t *testing.T) {
	build := mpiLibrary(t)
	prog := mpiBuild(t, build, "mpicc", "inlined", "inlined.c")
	for _, np := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d ranks", np), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hmb-out")
			mpirun(t, np, out, nil, prog)
			files := rankFiles(t, out, "inlined", np)
			v, err := variation.Analyze(files, variation.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if v.Region != "MPI_Allreduce" || !v.Between || v.Dominance.Weak != variation.WeakFallback {
				t.Fatalf("segments by %q (between calls %v, weak %d); want between the calls of MPI_Allreduce",
					v.Region, v.Between, v.Dominance.Weak)
			}
			// 40 calls per rank: 39 iterations from one to the next.
			if len(v.Segments) != 39*np {
				t.Errorf("%d segments; want %d", len(v.Segments), 39*np)
			}
			// Iteration 17's computation lies between calls 16 and 17.
			top := v.Ranked()[0]
			if files[v.Rows[top.Row].File].Header.Rank != 1 || top.Index != 16 {
				t.Errorf("top segment %s %d (score %.1f); want rank 1's segment 16", v.Rows[top.Row].Label, top.Index, top.Score)
			}
			var text strings.Builder
			if err := render.VariationText(&text, v, variation.DefaultMinScore, 3); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Iterations: between consecutive calls of MPI_Allreduce", "HMB_PHASE", "-fno-inline"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("variation lacks %q:\n%s", want, text.String())
				}
			}
		})
	}
}

// TestMPIOpenMPCutFromMaster runs testdata/openmp/hybrid_loop.c, an
// MPI+OpenMP code whose computation is inlined into main (twelve small
// parallel loops an iteration, MPI_Allreduce on the master thread), on 2
// ranks of 2 threads: variation cuts every thread at its master's calls of
// MPI_Allreduce, each location into as many segments, says the cut was
// taken from the master thread, and the planted slow iteration of rank
// 1's thread 1 stands out. Every check compares the run with itself.
func TestMPIOpenMPCutFromMaster(t *testing.T) {
	build := mpiLibrary(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "hybrid_loop")
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace-mpi", "hmbtrace-omp")
	if err != nil {
		t.Fatalf("pkg-config: %v\n%s", err, pc)
	}
	args := append([]string{"-O2", "-g", "-fopenmp", "-o", exe, filepath.Join(root, "cshim", "testdata", "openmp", "hybrid_loop.c")}, strings.Fields(string(pc))...)
	if msg, err := run(dir, nil, "mpicc", args...); err != nil {
		t.Fatalf("mpicc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	const np, iters = 2, 40
	out := filepath.Join(dir, "hmb-out")
	mpirun(t, np, out, []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"}, exe)
	files := rankFiles(t, out, "hybrid_loop", np)
	v, err := variation.Analyze(files, variation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Region != "MPI_Allreduce" || !v.Between || !v.ByRank || v.Dominance.Weak != variation.WeakRankFallback {
		t.Fatalf("segments by %q (between calls %v, by rank %v, weak %d, share %.3f); want MPI_Allreduce cut from the master threads",
			v.Region, v.Between, v.ByRank, v.Dominance.Weak, v.Dominance.Share)
	}
	if len(v.Rows) != 2*np {
		t.Fatalf("%d locations, want %d", len(v.Rows), 2*np)
	}
	for _, r := range v.Rows {
		if r.Segments != iters-1 {
			t.Errorf("%s: %d segments, want %d", r.Label, r.Segments, iters-1)
		}
	}
	// Iteration 17's loops lie between calls 16 and 17. Four threads on
	// a loaded machine's cores are preempted for as long as the planted
	// slowdown now and then, so it must stand out, not be first.
	found := false
	for _, s := range v.Segments {
		row := v.Rows[s.Row]
		if files[row.File].Header.Rank == 1 && strings.HasSuffix(row.Label, "thread 1") && s.Index == 16 {
			found = true
			if s.Score < variation.DefaultMinScore {
				t.Errorf("rank 1 thread 1's segment 16 scores %.1f; want it to stand out (%.1f)", s.Score, variation.DefaultMinScore)
			}
		}
	}
	if !found {
		t.Errorf("rank 1 thread 1 has no segment 16")
	}
	var text strings.Builder
	if err := render.VariationText(&text, v, variation.DefaultMinScore, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Iterations: between consecutive calls of MPI_Allreduce", "the cut was taken from the master thread", "HMB_PHASE"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("variation lacks %q:\n%s", want, text.String())
		}
	}
}
