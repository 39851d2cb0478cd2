package otf2

//go:generate sh testdata/gen/gen.sh

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// traceIDOffset is where the anchor stores the trace id, which libotf2
// draws at random: golden comparisons skip these 8 bytes.
func traceIDOffset(opt Options) int {
	return 0x2E + len(opt.Machine) + len(opt.Creator) + len(opt.Description) + 3 + 4
}

// readTree returns the files under dir by slash-separated relative path.
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readTarGz returns the files of a .tar.gz made by gen.sh.
func readTarGz(t testing.TB, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files[strings.TrimPrefix(h.Name, "./")] = b
	}
	return files
}

// goldenFiles returns the committed libotf2 archive of a scenario.
func goldenFiles(t testing.TB, name string) map[string][]byte {
	t.Helper()
	dir := filepath.Join("testdata", "golden", name)
	if _, err := os.Stat(dir); err == nil {
		return readTree(t, dir)
	}
	return readTarGz(t, dir+".tar.gz")
}

// compareArchives reports every file that differs, with the first differing
// offset, ignoring the anchor's trace id.
func compareArchives(t *testing.T, got, want map[string][]byte, opt Options) {
	t.Helper()
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: written by the Go writer, not by libotf2", n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		g, ok := got[n]
		if !ok {
			t.Errorf("%s: written by libotf2, not by the Go writer", n)
			continue
		}
		w := want[n]
		if n == "traces.otf2" {
			off := traceIDOffset(opt)
			if len(g) == len(w) && len(g) >= off+8 {
				g = append([]byte(nil), g...)
				copy(g[off:off+8], w[off:off+8])
			}
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s", n, firstDifference(g, w))
		}
	}
}

func firstDifference(got, want []byte) string {
	n := min(len(got), len(want))
	for i := 0; i < n; i++ {
		if got[i] != want[i] {
			lo, hi := max(0, i-8), min(n, i+8)
			return fmt.Sprintf("first difference at offset %d (0x%x): got % x, want % x (sizes %d, %d)",
				i, i, got[lo:min(len(got), hi)], want[lo:min(len(want), hi)], len(got), len(want))
		}
	}
	return fmt.Sprintf("sizes differ: got %d bytes, want %d", len(got), len(want))
}

// writeScenario writes a scenario with the Go writer into dir/<name>.
func writeScenario(t testing.TB, s scenario, dir string) (*builder, string) {
	t.Helper()
	out := filepath.Join(dir, s.name)
	b := newBuilder(t, out, s.opt)
	s.run(b)
	b.close()
	return b, out
}

// TestGolden requires the Go writer's archives to be byte-identical to
// libotf2's (testdata/golden, made by testdata/gen) except the trace id.
func TestGolden(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			_, dir := writeScenario(t, s, t.TempDir())
			compareArchives(t, readTree(t, dir), goldenFiles(t, s.name), s.opt)
		})
	}
}

// TestGoldenReproducible rebuilds the golden archives with the committed
// generator and libotf2 and compares them with the committed ones, so the
// goldens cannot drift from what libotf2 writes.
func TestGoldenReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the C generator")
	}
	gcc := tracetest.RequireTool(t, "gcc", "gcc")
	cfg := tracetest.RequireTool(t, "otf2-config", "libotf2-trace-dev")
	flags, err := exec.Command(cfg, "--cflags", "--ldflags", "--libs").Output()
	if err != nil {
		t.Fatalf("otf2-config: %v", err)
	}
	tmp := t.TempDir()
	gen := filepath.Join(tmp, "gen")
	args := append([]string{"-std=gnu11", "-O2", "-o", gen, filepath.Join("testdata", "gen", "gen.c")}, strings.Fields(string(flags))...)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			dir := filepath.Join(tmp, s.name)
			if out, err := exec.Command(gen, s.name, dir).CombinedOutput(); err != nil {
				t.Fatalf("gen %s: %v\n%s", s.name, err, out)
			}
			compareArchives(t, readTree(t, dir), goldenFiles(t, s.name), s.opt)
		})
	}
}
