//go:build linux

package measure

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// os.Exit skips the deferred Close: no trace, as the docs say, unless the
// buffer survives the process (Config.Survive), and then recover makes it.
func TestOSExitLosesTraceUnlessSurvive(t *testing.T) {
	code, stderr, dir := runExitChild(t, "os.Exit")
	if code != 3 {
		t.Fatalf("exit status %d, want 3\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "exit.0.hmb")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a trace after os.Exit without Exit: %v; the docs say there is none", err)
	}

	code, stderr, dir = runExitChild(t, "os.Exit survive")
	if code != 3 {
		t.Fatalf("exit status %d, want 3\n%s", code, stderr)
	}
	r, err := tracefile.Recover(mappingOf(t, dir), false)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := r.Write(filepath.Join(dir, "exit.0.hmb"))
	if err != nil {
		t.Fatal(err)
	}
	f := checkCrashTrace(t, pl.Path)
	if n := f.Locations[0].Kept(); n < 2001 {
		t.Errorf("recovered %d events, want main's enter and 1000 calls of work", n)
	}
}
