package cshim_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
)

// withoutLauncher drops the launcher's rank variables of the test's
// environment, so that a program started directly has none.
func withoutLauncher(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(measure.LauncherRankVars, name) {
			out = append(out, kv)
		}
	}
	return out
}

// TestSameRankC runs two C processes given the same rank at the same time:
// both traces are written, the second under a distinct name with one line
// on stderr saying so.
func TestSameRankC(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "samerank", nil, filepath.Join(root, "cshim", "testdata", "c", "samerank.c"))
	syncDir := t.TempDir()
	var wg sync.WaitGroup
	stderrs := make([]string, 2)
	for i := range stderrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, p.path, syncDir, "2")
			cmd.Env = append(withoutLauncher(withoutHMB(os.Environ())), "HMB_OUTPUT="+p.out, "HMB_RANK=3")
			var e bytes.Buffer
			cmd.Stderr = &e
			if err := cmd.Run(); err != nil {
				t.Errorf("samerank %d: %v\n%s", i, err, e.String())
			}
			stderrs[i] = e.String()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	files, err := filepath.Glob(filepath.Join(p.out, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	slices.Sort(names)
	if len(names) != 2 || names[0] != "samerank.3.hmb" || !regexp.MustCompile(`^samerank\.3\.pid\d+\.hmb$`).MatchString(names[1]) {
		t.Fatalf("two processes of rank 3 left %v, want samerank.3.hmb and samerank.3.pid<PID>.hmb", names)
	}
	warned := 0
	for _, s := range stderrs {
		if s == "" {
			continue
		}
		warned++
		if !strings.Contains(s, "samerank.3.hmb holds the trace of pid") || !strings.Contains(s, names[1]) || strings.Count(s, "\n") != 1 {
			t.Errorf("stderr %q: want one line naming both files", s)
		}
	}
	if warned != 1 {
		t.Errorf("%d processes said something on stderr %q, want 1", warned, stderrs)
	}
	for _, f := range files {
		checkTrace(t, dump(t, f), []string{"work"}, nil)
	}
}

// TestLauncherRankC runs a C program that does not use MPI under mpirun:
// each process takes its rank from the launcher, so each writes its own
// file with its rank in the header.
func TestLauncherRankC(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "mpirun", "openmpi-bin")
	p := buildC(t, build, "samerank", nil, filepath.Join(root, "cshim", "testdata", "c", "samerank.c"))
	_, stderr := mpirun(t, 2, p.out, nil, p.path, t.TempDir(), "2")
	for r, s := range stderr {
		if s != "" {
			t.Errorf("rank %d said %q", r, s)
		}
	}
	// rankFiles checks the names and the ranks in the headers.
	for _, f := range rankFiles(t, p.out, "samerank", 2) {
		checkTrace(t, dump(t, f.Path), []string{"work"}, nil)
	}
}

// TestFortranAutoinstNames compiles a Fortran program with
// -finstrument-functions and checks its regions' names: module procedures
// as module::procedure, contained ones under their host, the main program
// by its name.
func TestFortranAutoinstNames(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	dir := t.TempDir()
	libs, err := run(root, pkgEnv(build), "pkg-config", "--libs", "hmbtrace")
	if err != nil {
		t.Fatalf("pkg-config --libs hmbtrace: %v\n%s", err, libs)
	}
	exe := filepath.Join(dir, "names")
	args := append([]string{"-O0", "-g", "-finstrument-functions", "-J", dir, "-o", exe,
		filepath.Join(root, "cshim", "testdata", "fortran", "names.f90")}, strings.Fields(string(libs))...)
	if msg, err := run(dir, nil, "gfortran", args...); err != nil {
		t.Fatalf("gfortran %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	p := program{path: exe, out: filepath.Join(dir, "hmb-out")}
	p.run(t, nil)
	enters := checkTrace(t, dump(t, filepath.Join(p.out, "names.0.hmb")), []string{
		"heat_main",
		"heat_main::internal_of_main",
		"advec_mom_kernel_mod::advec_mom_kernel",
		"advec_mom_kernel_mod::advec_mom_kernel::inner",
		"advec_mom_kernel_mod::sub_impl",
		"advec_mom_kernel_mod::mixed_case",
		"external_sub",
	}, nil)
	for name := range enters {
		if strings.Contains(name, "_MOD_") || strings.HasSuffix(name, "_") || name == "MAIN__" {
			t.Errorf("region %q: a gfortran symbol left mangled", name)
		}
	}
}
