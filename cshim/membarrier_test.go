package cshim_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMembarrierLate: the library registers for membarriers as it loads,
// while the process has one thread (runtime.c says why); loaded by dlopen
// into a process with threads, it registers when the measurement starts,
// and its probes still take the direct path and are all recorded.
func TestMembarrierLate(t *testing.T) {
	build := library(t)
	dir := t.TempDir()
	p := program{path: filepath.Join(dir, "dlopen_late"), out: filepath.Join(dir, "hmb-out")}
	src := filepath.Join(root, "cshim", "testdata", "c", "dlopen_late.c")
	if msg, err := run(root, nil, "gcc", "-O2", "-pthread", "-o", p.path, src, "-ldl"); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	_, stderr := p.run(t, nil, filepath.Join(build, "lib", "libhmbtrace.so"))
	if strings.Contains(stderr, "membarrier") {
		t.Errorf("stderr: %s", stderr)
	}
	n := regionEvents(t, p, "late")
	if n != 2000 {
		t.Errorf("%d events of region late, want 2000", n)
	}
}
