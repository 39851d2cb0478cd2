package tempfile

import (
	"os"
	"testing"
)

// TestUnnamedWhileWritten: on Linux the file has no name until Finish, so
// a process killed while writing leaves nothing; Discard leaves nothing
// either way.
func TestUnnamedWhileWritten(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, "t.hmb")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 && f.name == "" {
		t.Errorf("an unnamed file shows in the directory: %v", ents)
	}
	if f.name == "" && !unnamedExpected {
		t.Error("unnamed file on a system without O_TMPFILE")
	}
	if f.name != "" && unnamedExpected {
		t.Logf("this file system has no O_TMPFILE: named %s", f.name)
	}
	f.Discard()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Discard left %v", ents)
	}
}
