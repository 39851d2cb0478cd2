package cshim_test

import (
	"fmt"
	"os"
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

// TestMPIWrappersAfterLibrary links the same objects with the wrappers
// (pkg-config's flags) after the MPI library and before it: after it, the
// program's MPI calls go to libmpi, nothing is traced, and rank 0, only,
// says why at exit; before it, the calls are traced and nothing is said.
func TestMPIWrappersAfterLibrary(t *testing.T) {
	build := mpiLibrary(t)
	dir := t.TempDir()
	obj := filepath.Join(dir, "ring.o")
	if msg, err := run(dir, nil, "mpicc", "-O2", "-c", "-o", obj, filepath.Join(root, "cshim", "testdata", "mpilink", "ring.c")); err != nil {
		t.Fatalf("mpicc -c ring.c: %v\n%s", err, msg)
	}
	mpiLink, err := run(dir, nil, "mpicc", "-showme:link")
	if err != nil {
		t.Skipf("mpicc -showme:link (Open MPI's wrapper): %v\n%s", err, mpiLink)
	}
	wrap, err := run(root, pkgEnv(build), "pkg-config", "--libs", "hmbtrace-mpi")
	if err != nil {
		t.Fatalf("pkg-config --libs hmbtrace-mpi: %v\n%s", err, wrap)
	}
	const warning = "not through hmbtrace's MPI wrappers"
	for _, tc := range []struct {
		name  string
		libs  []string
		after bool
	}{
		{"after", append(strings.Fields(string(mpiLink)), strings.Fields(string(wrap))...), true},
		{"before", append(strings.Fields(string(wrap)), strings.Fields(string(mpiLink))...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog := filepath.Join(dir, "ring-"+tc.name)
			args := append([]string{"-o", prog, obj}, tc.libs...)
			if msg, err := run(dir, nil, "gcc", args...); err != nil {
				t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
			}
			out := filepath.Join(dir, "hmb-out-"+tc.name)
			_, stderr := mpirun(t, 2, out, nil, prog)
			if said := strings.Contains(stderr[0], warning); said != tc.after {
				t.Errorf("rank 0's stderr %q: warning %v, want %v", stderr[0], said, tc.after)
			}
			if strings.Contains(stderr[1], warning) {
				t.Errorf("rank 1 warned too: %q", stderr[1])
			}
			if tc.after {
				// The library writes its files at exit all the same, with
				// no MPI call in them.
				entries, _ := os.ReadDir(out)
				for _, e := range entries {
					for region := range checkTrace(t, dump(t, filepath.Join(out, e.Name())), nil, nil) {
						if strings.HasPrefix(region, "MPI_") {
							t.Errorf("%s has %s: the wrappers ran", e.Name(), region)
						}
					}
				}
			} else {
				sends, recvs, _ := messagesOf(t, rankFiles(t, out, "ring-before", 2))
				checkMatched(t, sends, recvs)
				if len(sends) != 20 {
					t.Errorf("%d sends, want 20", len(sends))
				}
			}
		})
	}
	// HMB_ENABLE=0 turns the wrappers off: nothing to say then.
	out := filepath.Join(dir, "hmb-out-off")
	if _, stderr := mpirun(t, 2, out, []string{"HMB_ENABLE=0"}, filepath.Join(dir, "ring-after")); strings.Contains(stderr[0], warning) {
		t.Errorf("HMB_ENABLE=0: rank 0 warned: %q", stderr[0])
	}
}
