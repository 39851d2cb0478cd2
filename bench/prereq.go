package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// prereq is a program a section needs and the Debian package that has it.
type prereq struct{ what, pkg string }

// missing returns the first of needs not on PATH, as "no mpicc (Debian
// package libopenmpi-dev)", or "" when all are there.
func missing(needs ...prereq) string {
	for _, n := range needs {
		if _, err := exec.LookPath(n.what); err != nil {
			return fmt.Sprintf("no %s (Debian package %s)", n.what, n.pkg)
		}
	}
	return ""
}

// makeCshim runs make in cshim for targets (the libraries: "cshim"; the
// benchmarks' binaries), from the repository's root.
func makeCshim(o *options, targets ...string) error {
	cmd := exec.Command("make", append([]string{"-s", "-C", "cshim"}, targets...)...)
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make -C cshim %s: %v\n%s", strings.Join(targets, " "), err, out)
	}
	return nil
}

// buildHmbtrace builds cmd/hmbtrace into the work directory under name
// and returns its path.
func buildHmbtrace(o *options, name string) (string, error) {
	bin := filepath.Join(o.work, name)
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hmbtrace")
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/hmbtrace: %v\n%s", err, out)
	}
	return bin, nil
}
