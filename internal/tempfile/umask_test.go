//go:build unix

package tempfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUmask: the finished file has mode 0666 less the umask, whatever the
// umask, and nothing else is left in the directory.
func TestUmask(t *testing.T) {
	for _, mask := range []int{0o077, 0o022, 0o027} {
		old := syscall.Umask(mask)
		dir := t.TempDir()
		f, err := Create(dir, "t.hmb")
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("complete")
		name, err := f.Finish()
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := st.Mode().Perm(), os.FileMode(0o666&^mask); got != want {
			t.Errorf("umask %03o: mode %v, want %v", mask, got, want)
		}
		if filepath.Dir(name) != dir || filepath.Base(name)[:len(".t.hmb.tmp")] != ".t.hmb.tmp" {
			t.Errorf("hidden name %s", name)
		}
		if b, _ := os.ReadFile(name); string(b) != "complete" {
			t.Errorf("content %q", b)
		}
	}
}
