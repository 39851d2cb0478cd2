package cshim_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestInstrumentCMakeMPI builds a CMake project that links MPI as modern
// CMake does, CC=hmbtrace-gcc with find_package(MPI) and MPI::MPI_C, which
// puts libmpi.so's path on the link line of a plain compiler (and with
// gfortran, MPI::MPI_Fortran's libmpi_usempif08, libmpi_mpifh and libmpi):
// hmbtrace-instrument links the MPI wrappers before them, and the traces
// have the MPI calls and their messages. Before it did, these programs ran
// with neither, and nothing said so.
func TestInstrumentCMakeMPI(t *testing.T) {
	build := mpiLibrary(t)
	tracetest.RequireTool(t, "cmake", "cmake")
	bindir := filepath.Dir(instrumentBin(t, build))
	src := filepath.Join(root, "cshim", "testdata", "mpilink")
	bdir := t.TempDir()
	args := []string{"-S", src, "-B", bdir}
	progs := []string{"ring"}
	env := []string{"CC=" + filepath.Join(bindir, "hmbtrace-gcc"), "PKG_CONFIG_PATH=", "HMB_INSTRUMENT_FLAGS=--verbose"}
	if _, err := exec.LookPath("gfortran"); err == nil {
		args = append(args, "-DWITH_FORTRAN=ON")
		env = append(env, "FC="+filepath.Join(bindir, "hmbtrace-gfortran"))
		progs = append(progs, "ring_f", "ring_f08")
	} else {
		t.Log("no gfortran: the C program only")
	}
	if msg, err := run(bdir, env, "cmake", args...); err != nil {
		t.Fatalf("cmake %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	msg, err := run(bdir, env, "cmake", "--build", bdir)
	if err != nil {
		t.Fatalf("cmake --build: %v\n%s", err, msg)
	}
	if n := strings.Count(string(msg), "-lhmbtrace-mpi placed before"); n != len(progs) {
		t.Errorf("%d links said they placed -lhmbtrace-mpi, want %d:\n%s", n, len(progs), msg)
	}
	const np, passes = 2, 10
	for _, name := range progs {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "hmb-out")
			outs, _ := mpirun(t, np, out, nil, filepath.Join(bdir, name))
			for r := range outs {
				if want := fmt.Sprintf("ring: rank %d of %d token ", r, np); !strings.Contains(outs[r], want) {
					t.Errorf("rank %d printed %q", r, outs[r])
				}
			}
			files := rankFiles(t, out, name, np)
			sends, recvs, _ := messagesOf(t, files)
			checkMatched(t, sends, recvs)
			if len(sends) != np*passes || len(recvs) != np*passes {
				t.Errorf("%d sends and %d receives, want %d each", len(sends), len(recvs), np*passes)
			}
			for r, f := range files {
				enters := checkTrace(t, dump(t, f.Path), []string{"MPI_Init", "MPI_Bcast", "MPI_Finalize"}, []string{fmt.Sprintf("rank %d", r)})
				if enters["MPI_Sendrecv_replace"] != passes {
					t.Errorf("rank %d: %d MPI_Sendrecv_replace, want %d (enters %v)", r, enters["MPI_Sendrecv_replace"], passes, enters)
				}
			}
		})
	}
}

// The MPI library named on the link line of an MPI compiler too, as a
// Makefile with "mpicc ... -lmpi" has it: one -lhmbtrace-mpi, before it.
func TestInstrumentMPILibraryNamed(t *testing.T) {
	build := mpiLibrary(t)
	bin := instrumentBin(t, build)
	dir := t.TempDir()
	obj := filepath.Join(dir, "ring.o")
	if msg, err := run(dir, nil, "mpicc", "-O2", "-c", "-o", obj, filepath.Join(root, "cshim", "testdata", "mpilink", "ring.c")); err != nil {
		t.Fatalf("mpicc -c ring.c: %v\n%s", err, msg)
	}
	prog := filepath.Join(dir, "ring")
	if msg, err := run(dir, []string{"PKG_CONFIG_PATH="}, bin, "mpicc", "-o", prog, obj, "-lmpi"); err != nil {
		t.Fatalf("hmbtrace-instrument mpicc ... -lmpi: %v\n%s", err, msg)
	}
	out := filepath.Join(dir, "hmb-out")
	mpirun(t, 2, out, nil, prog)
	files := rankFiles(t, out, "ring", 2)
	sends, recvs, _ := messagesOf(t, files)
	checkMatched(t, sends, recvs)
	if len(sends) != 20 {
		t.Errorf("%d sends, want 20", len(sends))
	}
}
