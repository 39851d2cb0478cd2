package convert

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// otf2Python runs python3-otf2 (libotf2's own reader) with args, a script's
// path or "-c" and its text, then the script's arguments, and returns what
// it printed. It skips, or fails where the tools are required, when Debian's
// python3-otf2 is missing, and fails when the script does.
func otf2Python(t *testing.T, args ...string) []byte {
	t.Helper()
	const python = "/usr/bin/python3" // python3-otf2 is built for Debian's python only
	if err := exec.Command(python, "-c", "import otf2").Run(); err != nil {
		tracetest.SkipOrFail(t, fmt.Sprintf("%s cannot import otf2 (%v): install the Debian package python3-otf2", python, err))
	}
	out, err := exec.Command(python, args...).CombinedOutput()
	if err != nil {
		script := args[0]
		if script == "-c" {
			script = "(a script inline)"
		}
		t.Fatalf("python3-otf2 %s: %v\n%s", script, err, out)
	}
	return out
}
