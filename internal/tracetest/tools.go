package tracetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// SkipOrFail fails the test with msg, which says what to install, or skips
// it when HMB_ALLOW_SKIP=1: the rule for tests whose external tools are
// missing.
func SkipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("HMB_ALLOW_SKIP") == "1" {
		t.Skip(msg)
	}
	t.Fatal(msg)
}

// RequireTool returns the path of the program name, or fails (skips with
// HMB_ALLOW_SKIP=1) naming the Debian package pkg that provides it.
func RequireTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(t, fmt.Sprintf("%s not found: install the Debian package %s", name, pkg))
	}
	return p
}

// Chromium returns the path of Debian's Chromium, which the tests run
// headless, or fails (skips with HMB_ALLOW_SKIP=1) naming the package.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	SkipOrFail(t, "headless Chromium not found: install the Debian package chromium (apt-get install -y chromium)")
	return ""
}

// BuildExample builds the program examples/name of this module into a
// temporary directory and returns its path.
func BuildExample(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command("go", "build", "-o", bin, "github.com/hmbtrace/hmbtrace/examples/"+name).CombinedOutput()
	if err != nil {
		t.Fatalf("building examples/%s: %v\n%s", name, err, out)
	}
	return bin
}
