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
	if rc := run([]string{"recover", "-o", out, shm}, &o, &e); rc != 0 || !strings.Contains(o.String(), "skipped:") || !strings.Contains(o.String(), "still running") {
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
