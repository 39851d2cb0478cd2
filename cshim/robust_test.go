package cshim_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestSignalIgnoredStaysIgnored checks that HMB_SIGNALS=1 leaves a SIGINT
// the parent ignores (a background job, nohup) ignored: the program goes
// on, and its blocking read is not cut short; and that the SIGTERM it does
// handle restarts a C program's interrupted calls (SA_RESTART).
func TestSignalIgnoredStaysIgnored(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "sigign", nil, filepath.Join(root, "cshim", "testdata", "c", "sigign.c"))
	// The shell's trap '' makes SIGINT ignored, and exec keeps it so.
	cmd := exec.Command("/bin/sh", "-c", `trap '' INT; exec "$0"`, p.path)
	cmd.Env = append(withoutHMB(os.Environ()), "HMB_OUTPUT="+p.out, "HMB_SIGNALS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "sigterm handled 1 restart 1" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q, stderr %q: want SIGTERM handled with SA_RESTART", sc.Text(), stderr.String())
	}
	if !sc.Scan() || sc.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q, stderr %q", sc.Text(), stderr.String())
	}
	// The signal comes while the program is started and (most likely) in read.
	for range 3 {
		cmd.Process.Signal(syscall.SIGINT)
	}
	stdin.Write([]byte("go on\n"))
	stdin.Close()
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("exit %v (stderr %q): want SIGINT left ignored", err, stderr.String())
	}
	if len(rest) != 1 || rest[0] != "read 6 ok" {
		t.Errorf("output %q: want the read to return the line", rest)
	}
	checkTrace(t, dump(t, filepath.Join(p.out, "sigign.0.hmb")), []string{"wait"}, nil)
	if strings.Contains(stderr.String(), "hmbtrace") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestFortranNameWithNUL checks that a Fortran name is taken up to a NUL:
// silently after a trailing c_null_char, with an error for a NUL inside.
func TestFortranNameWithNUL(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	dir := t.TempDir()
	flags, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace")
	if err != nil {
		t.Fatalf("pkg-config: %v\n%s", err, flags)
	}
	exe := filepath.Join(dir, "nulname")
	args := append([]string{"-g", "-J", dir, "-o", exe,
		filepath.Join(root, "cshim", "testdata", "fortran", "nulname.f90"),
		filepath.Join(root, "cshim", "testdata", "fortran", "nulname_err.c")}, strings.Fields(string(flags))...)
	if msg, err := run(dir, nil, "gfortran", args...); err != nil {
		t.Fatalf("gfortran %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	p := program{path: exe, out: filepath.Join(dir, "hmb-out")}
	out, _ := p.run(t, nil)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "error: none" || !strings.Contains(lines[1], "NUL byte before its end") {
		t.Errorf("output %q: want no error for the trailing NUL, one for the inner", out)
	}
	enters := checkTrace(t, dump(t, filepath.Join(p.out, "nulname.0.hmb")), []string{"trail", "in"}, nil)
	if len(enters) != 2 {
		t.Errorf("regions %v: want trail and in", enters)
	}
}
