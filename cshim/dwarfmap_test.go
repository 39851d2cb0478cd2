package cshim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestMappedDWARF: the DWARF read in place from the file's mapping gives
// every function the source position elf.File.DWARF's copy gives, for
// DWARF 5 and 4, PIE or not; compressed sections are read by
// elf.File.DWARF instead, with the same result.
func TestMappedDWARF(t *testing.T) {
	tracetest.RequireTool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(`
static int helper(int x) { return x * 3; }
__attribute__((noinline)) int work(int x) { return helper(x) + 1; }
int main(int argc, char **argv) { (void)argv; return work(argc) == 4 ? 0 : 1; }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		flags  []string
		mapped bool
	}{
		{"dwarf5", []string{"-g"}, true},
		{"dwarf4", []string{"-gdwarf-4"}, true},
		{"no-pie", []string{"-g", "-no-pie"}, true},
		{"compressed", []string{"-g", "-gz"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			exe := filepath.Join(dir, c.name)
			args := append([]string{"-O0", "-o", exe, src}, c.flags...)
			if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
				t.Fatalf("gcc %v: %v\n%s", args, err, out)
			}
			obj, err := openObject(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.close()
			got := obj.newLineTables()
			if (obj.mem != nil) != c.mapped {
				t.Errorf("read from the file's mapping: %v, want %v", obj.mem != nil, c.mapped)
			}
			copied, err := obj.f.DWARF()
			if err != nil {
				t.Fatal(err)
			}
			want := linesOf(copied, obj.f)
			named := 0
			for _, fn := range obj.syms {
				gf, gl := got.find(fn.value)
				wf, wl := want.find(fn.value)
				if gf != wf || gl != wl {
					t.Errorf("%s: %s:%d from the mapping, %s:%d from elf.File.DWARF", fn.name, gf, gl, wf, wl)
				}
				if fn.name == "work" || fn.name == "main" || fn.name == "helper" {
					named++
					if !strings.HasSuffix(gf, "prog.c") || gl <= 0 {
						t.Errorf("%s at %s:%d, want a line of prog.c", fn.name, gf, gl)
					}
				}
			}
			if named != 3 {
				t.Errorf("found %d of main, work, helper", named)
			}
		})
	}
}
