//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/measure"
)

// TestRecover: a live process's mapping (this test's own) is skipped in a
// directory, refused by name, and read with -force, which keeps it; the
// trace written reads. Files that are not mappings are refused by name.
func TestRecover(t *testing.T) {
	shm, out := t.TempDir(), t.TempDir()
	m, err := measure.Start(measure.Config{Output: out, Name: "live", Survive: true, SurviveDir: shm, BufferSize: 64 << 10, BinSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := m.Region("work")
	loc := m.Location("main")
	for i := 0; i < 1000; i++ {
		loc.Enter(r)
		loc.Leave(r)
	}
	found, _ := filepath.Glob(filepath.Join(shm, "*.shm"))
	if len(found) != 1 {
		t.Fatalf("mappings %v", found)
	}
	var o, e bytes.Buffer
	if rc := run([]string{"recover", "-o", out, shm}, &o, &e); rc != 1 || !strings.Contains(o.String(), "skipped:") || !strings.Contains(o.String(), "still running") || !strings.Contains(e.String(), "skipped 1 of 1 mappings") {
		t.Errorf("recover of a directory with a live mapping: rc %d, %q %q", rc, o.String(), e.String())
	}
	o.Reset()
	e.Reset()
	if rc := run([]string{"recover", "-o", out, found[0]}, &o, &e); rc != 1 || !strings.Contains(e.String(), "still running") {
		t.Errorf("recover of a live mapping by name: rc %d, %q", rc, e.String())
	}
	o.Reset()
	e.Reset()
	if rc := run([]string{"recover", "-force", "-o", out, found[0]}, &o, &e); rc != 0 || !strings.Contains(o.String(), "still running: read as it stood") {
		t.Fatalf("recover -force: rc %d, %q %q", rc, o.String(), e.String())
	}
	if _, err := os.Stat(found[0]); err != nil {
		t.Errorf("recover -force removed a live process's mapping: %v", err)
	}
	o.Reset()
	e.Reset()
	if rc := run([]string{"summary", filepath.Join(out, "live.0.hmb")}, &o, &e); rc != 0 || !strings.Contains(o.String(), "1,000") || !strings.Contains(o.String(), "work") {
		t.Errorf("summary of the recovered trace: rc %d, %q %q", rc, o.String(), e.String())
	}
	notMapping := filepath.Join(out, "live.0.hmb")
	e.Reset()
	if rc := run([]string{"recover", notMapping}, &o, &e); rc != 1 || !strings.Contains(e.String(), notMapping+": not a mapping") {
		t.Errorf("recover of a trace file: rc %d, %q", rc, e.String())
	}
	empty := t.TempDir()
	e.Reset()
	if rc := run([]string{"recover", empty}, &o, &e); rc != 1 || !strings.Contains(e.String(), "no mapping of an hmbtrace process") {
		t.Errorf("recover of an empty directory: rc %d, %q", rc, e.String())
	}
}

// TestRecoverPlanted plays a mapping planted in a shared directory: a name
// that climbs out of the output directory is refused, another user's
// mapping is skipped (exit 1) unless -any-owner, which needs -o.
func TestRecoverPlanted(t *testing.T) {
	shm, out := t.TempDir(), t.TempDir()
	m, err := measure.Start(measure.Config{Output: out, Name: "aaaaaaa", Survive: true, SurviveDir: shm, BufferSize: 64 << 10, BinSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Region("work")
	loc := m.Location("main")
	loc.Enter(r)
	loc.Leave(r)
	found, _ := filepath.Glob(filepath.Join(shm, "*.shm"))
	if len(found) != 1 {
		t.Fatalf("mappings %v", found)
	}
	// The same bytes with a hostile name of the same length.
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"aaaaaaa"`)) {
		t.Fatal("the mapping does not hold the trace name as JSON")
	}
	planted := filepath.Join(shm, "hmbtrace-planted.shm")
	if err := os.WriteFile(planted, bytes.ReplaceAll(b, []byte(`"aaaaaaa"`), []byte(`"../../p"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	m.Close()
	var o, e bytes.Buffer
	if rc := run([]string{"recover", "-force", "-o", out, planted}, &o, &e); rc != 1 || !strings.Contains(e.String(), "path separator") {
		t.Errorf("recover of a climbing name: rc %d, %q %q", rc, o.String(), e.String())
	}
	if _, err := os.Stat(filepath.Join(out, "..", "..", "p.0.hmb")); err == nil {
		t.Fatal("recover wrote outside -o")
	}
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	other := filepath.Join(shm, "hmbtrace-other.shm")
	if err := os.WriteFile(other, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	if rc := run([]string{"recover", "-force", other}, &o, &e); rc != 1 || !strings.Contains(o.String(), "owned by another user") {
		t.Errorf("recover of another user's mapping: rc %d, %q %q", rc, o.String(), e.String())
	}
	e.Reset()
	if rc := run([]string{"recover", "-any-owner", other}, &o, &e); rc != 1 || !strings.Contains(e.String(), "needs -o") {
		t.Errorf("recover -any-owner without -o: rc %d, %q", rc, e.String())
	}
	o.Reset()
	e.Reset()
	if rc := run([]string{"recover", "-force", "-any-owner", "-o", out, other}, &o, &e); rc != 0 {
		t.Errorf("recover -any-owner -o: rc %d, %q %q", rc, o.String(), e.String())
	}
	if _, err := os.Stat(filepath.Join(out, "aaaaaaa.0.hmb")); err != nil {
		t.Errorf("recover -any-owner -o wrote no trace: %v", err)
	}
}
