package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamedFormRefusesOwnOptions: every named form refuses each of
// hmbtrace-instrument's options on its command line, wherever it stands,
// and names HMB_INSTRUMENT_FLAGS; the same words as an option's value, or
// for hmbtrace-instrument itself, pass.
func TestNamedFormRefusesOwnOptions(t *testing.T) {
	forms := []string{"hmbtrace-gcc", "hmbtrace-g++", "hmbtrace-gfortran", "hmbtrace-cc", "hmbtrace-clang", "/opt/hmb/bin/hmbtrace-mpicc", "hmbtrace-mpicxx", "hmbtrace-mpif90"}
	for _, form := range forms {
		compiler := strings.TrimPrefix(filepath.Base(form), "hmbtrace-")
		for _, opt := range []string{"--user", "--filter", "--filter=f.filter", "--verbose", "--no-plugin", "--no-exclude-system"} {
			for _, args := range [][]string{{opt, "-o", "e2", "e.c"}, {"-c", "e.c", opt}} {
				err := namedFormCheck(form, args, "")
				name, _, _ := strings.Cut(opt, "=")
				if err == nil || !strings.Contains(err.Error(), flagsVar+"=") ||
					!strings.HasPrefix(err.Error(), filepath.Base(form)+": "+name+" is hmbtrace-instrument's option, not "+compiler+"'s") {
					t.Errorf("%s %q: %v; want a refusal naming %s and %s", form, args, err, name, flagsVar)
				}
			}
		}
		for _, args := range [][]string{
			{"-c", "e.c"},
			{"--version"},
			{"--help"},
			{"-Xlinker", "--verbose", "-o", "e", "e.o"},
			{"-o", "--user", "e.c"},
			{"--user-dependencies", "-c", "e.c"},
		} {
			if err := namedFormCheck(form, args, "--user --filter f.filter --verbose"); err != nil {
				t.Errorf("%s %q: %v", form, args, err)
			}
		}
	}
	if err := namedFormCheck("hmbtrace-gcc", []string{"--user", "-c", "e.c"}, ""); err == nil ||
		!strings.Contains(err.Error(), "--user-dependencies") || !strings.Contains(err.Error(), "hmbtrace-instrument --user gcc") {
		t.Errorf("hmbtrace-gcc --user: %v; want the reason and the prefix form", err)
	}
	if err := namedFormCheck("hmbtrace-gcc", []string{"-c", "e.c", "--filter", "my.filter"}, ""); err == nil ||
		!strings.Contains(err.Error(), "HMB_INSTRUMENT_FLAGS='--filter my.filter' hmbtrace-gcc") {
		t.Errorf("hmbtrace-gcc --filter my.filter: %v", err)
	}
	for _, argv0 := range []string{"hmbtrace-instrument", "/usr/bin/hmbtrace-instrument", "hmbtrace-instrument.test"} {
		if err := namedFormCheck(argv0, []string{"--user", "gcc", "-c", "e.c"}, "gcc"); err != nil {
			t.Errorf("%s: %v", argv0, err)
		}
	}
	for _, tc := range []struct{ flags, want string }{
		{"--verbose gcc", "gcc is not an option of hmbtrace-instrument"},
		{"--filter", "--filter needs a file"},
		{"--version", "--version is not an option"},
		{"-O2", "-O2 is not an option"},
	} {
		if err := namedFormCheck("hmbtrace-mpicc", []string{"-c", "e.c"}, tc.flags); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q: %v; want %q", flagsVar, tc.flags, err, tc.want)
		}
	}
	for _, flags := range []string{"", "  ", "--user", "--filter f.filter --verbose", "--filter=f.filter --no-plugin --no-exclude-system"} {
		if err := namedFormCheck("hmbtrace-mpicc", []string{"-c", "e.c"}, flags); err != nil {
			t.Errorf("%s=%q: %v", flagsVar, flags, err)
		}
	}
}

// TestNamedFormBinary: the installed form of the bug: hmbtrace-gcc --user
// exits 2 with the message and writes nothing, without running a compiler.
func TestNamedFormBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hmbtrace-instrument")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	gcc := filepath.Join(dir, "hmbtrace-gcc")
	if err := os.Symlink("hmbtrace-instrument", gcc); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "e.c"), []byte("int main(void) { return 0; }\n"), 0o644)
	cmd := exec.Command(gcc, "--user", "-o", "e2", "e.c")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH=/nonexistent") // no compiler may run
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("hmbtrace-gcc --user: %v, want exit 2\n%s", err, out)
	}
	if !strings.Contains(string(out), "HMB_INSTRUMENT_FLAGS=--user hmbtrace-gcc ARGS") || strings.Count(string(out), "\n") != 1 {
		t.Errorf("hmbtrace-gcc --user: %q", out)
	}
	entries, _ := os.ReadDir(work)
	if len(entries) != 1 {
		t.Errorf("hmbtrace-gcc --user left %d files, want only e.c", len(entries))
	}
}
