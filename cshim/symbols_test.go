package cshim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// symTarget builds testdata/symtarget with the given build mode, runs it,
// and returns a Symbolizer of that process (its maps, saved to a file) and
// the addresses of its functions by name.
func symTarget(t *testing.T, buildmode string) (*Symbolizer, map[string]uint64) {
	t.Helper()
	tracetest.RequireTool(t, "go", "golang-go (or put a Go toolchain on PATH)")
	dir := t.TempDir()
	exe := filepath.Join(dir, "symtarget")
	build := exec.Command("go", "build", "-buildmode="+buildmode, "-o", exe, "./testdata/symtarget")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildmode=%s: %v\n%s", buildmode, err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("symtarget: %v", err)
	}
	head, maps, ok := strings.Cut(string(out), "maps\n")
	if !ok {
		t.Fatalf("symtarget printed %q", out)
	}
	funcs := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("symtarget line %q", line)
		}
		addr, err := strconv.ParseUint(f[2], 16, 64)
		if err != nil {
			t.Fatalf("symtarget line %q: %v", line, err)
		}
		funcs[f[1]] = addr
	}
	mapsPath := filepath.Join(dir, "maps")
	if err := os.WriteFile(mapsPath, []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Symbolizer{mapsPath: mapsPath, files: map[string]*objectFile{}}
	t.Cleanup(s.Close)
	return s, funcs
}

// TestSymbolizer names functions of an executable and of a PIE, whose
// addresses the loader moved: the lookup must undo the load bias.
func TestSymbolizer(t *testing.T) {
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			s, funcs := symTarget(t, mode)
			if len(funcs) != 2 {
				t.Fatalf("functions %v", funcs)
			}
			for name, addr := range funcs {
				for _, a := range []uint64{addr, addr + 1} { // the entry, and an address inside
					sym, ok := s.Lookup(a)
					if !ok || sym.Name != name {
						t.Errorf("Lookup(%#x) = %+v, %v; want %s", a, sym, ok, name)
					}
					if filepath.Base(sym.File) != "main.go" || sym.Line == 0 {
						t.Errorf("Lookup(%#x) at %s:%d, want main.go and a line", a, sym.File, sym.Line)
					}
				}
			}
			if mode == "pie" && funcs["main.target"] < 0x10000000 {
				t.Errorf("main.target at %#x: the PIE was not moved, the test proves nothing", funcs["main.target"])
			}
		})
	}
}

func TestSymbolizerNoSymbol(t *testing.T) {
	s := NewSymbolizer()
	defer s.Close()
	heap := make([]byte, 1<<20)
	for _, addr := range []uint64{
		8, // nothing mapped
		uint64(reflect.ValueOf(&heap[1<<19]).Pointer()), // anonymous memory
	} {
		if sym, ok := s.Lookup(addr); ok {
			t.Errorf("Lookup(%#x) = %+v, want nothing", addr, sym)
		}
	}
}

func TestSymbolizerMissingFile(t *testing.T) {
	mapsPath := filepath.Join(t.TempDir(), "maps")
	if err := os.WriteFile(mapsPath, []byte("1000-2000 r-xp 00000000 08:01 1 /nonexistent/lib.so\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Symbolizer{mapsPath: mapsPath, files: map[string]*objectFile{}}
	if sym, ok := s.Lookup(0x1800); ok {
		t.Errorf("Lookup in a missing file = %+v", sym)
	}
	if obj, ok := s.files["/nonexistent/lib.so"]; !ok || obj != nil {
		t.Errorf("a missing file should be remembered as unreadable, got %v, %v", obj, ok)
	}
	if fmt.Sprint(s.maps) != fmt.Sprint([]Mapping{{0x1000, 0x2000, "r-xp", 0, "/nonexistent/lib.so"}}) {
		t.Errorf("maps %+v", s.maps)
	}
}
