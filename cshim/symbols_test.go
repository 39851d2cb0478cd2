package cshim

import (
	"debug/elf"
	"encoding/binary"
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

func TestDemangleSymbol(t *testing.T) {
	for sym, want := range map[string]string{
		"__advec_mom_kernel_mod_MOD_advec_mom_kernel": "advec_mom_kernel_mod::advec_mom_kernel",
		"__m_MOD_f":                        "m::f",
		"__shapes_MOD___copy_shapes_Shape": "shapes::__copy_shapes_Shape",
		"__shapes_MOD_omp_loop._omp_fn.0":  "shapes::omp_loop [clone ._omp_fn.0]",
		"__shapes_MOD_area.constprop.0":    "shapes::area [clone .constprop.0]",
		"MAIN__":                           "main program",
		"_ZN2ns5solveEi":                   "ns::solve(int)",
		"_ZN2ns5solveEi.constprop.0":       "ns::solve(int) [clone .constprop.0]",
		"solve":                            "solve",
		"external_sub_":                    "external_sub_", // could be C: only DWARF tells
		"__MOD_f":                          "__MOD_f",
		"__m_MOD_":                         "__m_MOD_",
		"_gfortran_st_write":               "_gfortran_st_write",
		"__libc_start_main":                "__libc_start_main",
	} {
		if got := demangleSymbol(sym); got != want {
			t.Errorf("demangleSymbol(%q) = %q, want %q", sym, got, want)
		}
	}
}

// TestFortranNames builds a Fortran program with and without DWARF, and
// optimized with OpenMP, and names its procedures: by DWARF, every kind of
// gfortran procedure with its module and host; without, the module
// procedures and the main program.
func TestFortranNames(t *testing.T) {
	tracetest.RequireTool(t, "gfortran", "gfortran")
	src, err := filepath.Abs(filepath.Join("testdata", "fortran", "names.f90"))
	if err != nil {
		t.Fatal(err)
	}
	plain := map[string]string{
		"__advec_mom_kernel_mod_MOD_advec_mom_kernel": "advec_mom_kernel_mod::advec_mom_kernel",
		"__advec_mom_kernel_mod_MOD_mixed_case":       "advec_mom_kernel_mod::mixed_case",
		"__advec_mom_kernel_mod_MOD_sub_impl":         "advec_mom_kernel_mod::sub_impl",
		"MAIN__":                                      "main program",
		"external_sub_":                               "external_sub",
		"inner.0":                                     "inner.0",
		"internal_of_main.1":                          "internal_of_main.1",
		"main":                                        "main",
	}
	dwarf := map[string]string{
		"__advec_mom_kernel_mod_MOD_advec_mom_kernel": "advec_mom_kernel_mod::advec_mom_kernel",
		"__advec_mom_kernel_mod_MOD_mixed_case":       "advec_mom_kernel_mod::mixed_case",
		"__advec_mom_kernel_mod_MOD_sub_impl":         "advec_mom_kernel_mod::sub_impl",
		"MAIN__":                                      "heat_main",
		"external_sub_":                               "external_sub",
		"inner.0":                                     "advec_mom_kernel_mod::advec_mom_kernel::inner",
		"internal_of_main.1":                          "heat_main::internal_of_main",
		"main":                                        "main",
	}
	openmp := map[string]string{
		"MAIN__":                  "heat_main",
		"MAIN__._omp_fn.0":        "heat_main [clone ._omp_fn.0]",
		"external_sub_":           "external_sub",
		"external_sub_._omp_fn.0": "external_sub [clone ._omp_fn.0]",
	}
	for _, c := range []struct {
		name  string
		flags []string
		want  map[string]string
		all   bool // every symbol of want is there (optimization inlines some)
	}{
		{"dwarf", []string{"-O0", "-g"}, dwarf, true},
		{"plain", []string{"-O0"}, plain, true},
		{"openmp", []string{"-O2", "-g", "-fopenmp"}, openmp, true},
		{"openmp-all", []string{"-O2", "-g", "-fopenmp"}, dwarf, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "names")
			args := append([]string{"-o", exe, src}, c.flags...)
			cmd := exec.Command("gfortran", args...)
			cmd.Dir = dir // its .mod files
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gfortran %v: %v\n%s", args, err, out)
			}
			obj, err := openObject(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.close()
			found := 0
			for _, fn := range obj.syms {
				w, ok := c.want[fn.name]
				if !ok {
					continue
				}
				found++
				if sym, ok := obj.lookup(fn.value); !ok || sym.Name != w {
					t.Errorf("%s at %#x: named %q (%v), want %q", fn.name, fn.value, sym.Name, ok, w)
				}
			}
			if c.all && found != len(c.want) {
				t.Errorf("found %d of the %d symbols: gfortran names them otherwise now", found, len(c.want))
			}
		})
	}
}

// TestFortranInlinedMain: optimized, gfortran inlines the main program into
// the main it writes (no MAIN__ symbol is left); main is then named after
// the program, as MAIN__ is.
func TestFortranInlinedMain(t *testing.T) {
	tracetest.RequireTool(t, "gfortran", "gfortran")
	dir := t.TempDir()
	src := filepath.Join(dir, "tiny_prog.f90")
	if err := os.WriteFile(src, []byte("program tiny_prog\n  integer :: i\n  i = command_argument_count()\n  if (i > 5) stop 3\nend program tiny_prog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		want  map[string]string
	}{
		{[]string{"-O2", "-g"}, map[string]string{"main": "tiny_prog"}},
		{[]string{"-O0", "-g"}, map[string]string{"main": "main", "MAIN__": "tiny_prog"}}, // not inlined
		{[]string{"-O2"}, map[string]string{"main": "main"}},                              // no DWARF: nothing names the program
	} {
		exe := filepath.Join(dir, "tiny")
		args := append([]string{"-o", exe, src}, c.flags...)
		if out, err := exec.Command("gfortran", args...).CombinedOutput(); err != nil {
			t.Fatalf("gfortran %v: %v\n%s", args, err, out)
		}
		obj, err := openObject(exe)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, fn := range obj.syms {
			if w, ok := c.want[fn.name]; ok {
				found++
				if sym, ok := obj.lookup(fn.value); !ok || sym.Name != w {
					t.Errorf("%v: %s named %q (%v), want %q", c.flags, fn.name, sym.Name, ok, w)
				}
			}
		}
		if found != len(c.want) {
			t.Errorf("%v: found %d of the symbols %v: gfortran inlines otherwise now", c.flags, found, c.want)
		}
		obj.close()
	}
}

// TestFortranExternal: a gfortran symbol loses its trailing underscore,
// and only such a symbol.
func TestFortranExternal(t *testing.T) {
	for sym, want := range map[string]string{
		"randlc_":                 "randlc",
		"x_solve_":                "x_solve",
		"a1_":                     "a1",
		"randlc_.constprop.0":     "randlc [clone .constprop.0]",
		"external_sub_._omp_fn.0": "external_sub [clone ._omp_fn.0]",
		"randlc":                  "randlc",
		"two__":                   "two__",
		"_":                       "_",
		"_hidden_":                "_hidden_",
		"Mixed_":                  "Mixed_",
		"dollar$_":                "dollar$_",
	} {
		if got := fortranExternal(sym); got != want {
			t.Errorf("fortranExternal(%q) = %q, want %q", sym, got, want)
		}
	}
}

// sourceRecords builds a .hmbtrace.names section as the GCC plugin's
// records come out of the linker: padded to 8 bytes around each.
func sourceRecords(word int, order binary.AppendByteOrder, recs ...any) []byte {
	var b []byte
	for i := 0; i < len(recs); i += 2 {
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
		addr := recs[i].(uint64)
		if word == 8 {
			b = order.AppendUint64(b, addr)
		} else {
			b = order.AppendUint32(b, uint32(addr))
		}
		b = append(append(b, recs[i+1].(string)...), 0)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

func TestParseSourceNames(t *testing.T) {
	le := sourceRecords(8, binary.LittleEndian,
		uint64(0x1278), "demo::mod_proc::inner",
		uint64(0x11c9), "other::inner",
		uint64(0), "dropped::by_gc",
		uint64(0x1400), "folded_a",
		uint64(0x1400), "folded_b",
		uint64(0x1500), "twice",
		uint64(0x1500), "twice",
		uint64(0x15c1), "demo::mod_proc::inner [clone ._omp_fn.0]")
	got := parseSourceNames(le, elf.ELFCLASS64, binary.LittleEndian)
	want := map[uint64]string{
		0x1278: "demo::mod_proc::inner",
		0x11c9: "other::inner",
		0x1500: "twice",
		0x15c1: "demo::mod_proc::inner [clone ._omp_fn.0]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("64-bit little-endian: %v, want %v", got, want)
	}
	// A record cut short (a damaged file) ends the table, keeping what
	// came before it.
	if got := parseSourceNames(le[:len(le)-20], elf.ELFCLASS64, binary.LittleEndian); len(got) != 3 || got[0x15c1] != "" {
		t.Errorf("cut short: %v, want the three whole records before", got)
	}
	be := sourceRecords(4, binary.BigEndian, uint64(0x10400), "prog", uint64(0x10480), "prog::inner")
	if got := parseSourceNames(be, elf.ELFCLASS32, binary.BigEndian); !reflect.DeepEqual(got, map[uint64]string{0x10400: "prog", 0x10480: "prog::inner"}) {
		t.Errorf("32-bit big-endian: %v", got)
	}
	for _, data := range [][]byte{nil, make([]byte, 64)} {
		if got := parseSourceNames(data, elf.ELFCLASS64, binary.LittleEndian); got != nil {
			t.Errorf("%d bytes of padding: %v, want none", len(data), got)
		}
	}
}

// TestFortranContainedOpenMP: without the GCC plugin, DWARF names an
// OpenMP loop's body in a contained procedure (inner.0._omp_fn.0) after
// its host, as the plugin does; without -g, the symbols are all there is.
func TestFortranContainedOpenMP(t *testing.T) {
	tracetest.RequireTool(t, "gfortran", "gfortran")
	src, err := filepath.Abs(filepath.Join("testdata", "gccplugin", "onename.f90"))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := filepath.Abs(filepath.Join("testdata", "gccplugin", "onename_other.f90"))
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-O0", "-g"}, "demo::mod_proc::inner [clone ._omp_fn.0]"},
		{[]string{"-O0"}, "inner.0._omp_fn.0"},
	} {
		dir := t.TempDir()
		exe := filepath.Join(dir, "onename")
		args := append([]string{"-fopenmp", "-o", exe, src, other}, c.flags...)
		cmd := exec.Command("gfortran", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gfortran %v: %v\n%s", args, err, out)
		}
		obj, err := openObject(exe)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := obj.symbolValue("inner.0._omp_fn.0")
		if !ok {
			t.Fatalf("%v: no symbol inner.0._omp_fn.0: gfortran names it otherwise now", c.flags)
		}
		if sym, ok := obj.lookup(v); !ok || sym.Name != c.want {
			t.Errorf("%v: inner.0._omp_fn.0 named %q (%v), want %q", c.flags, sym.Name, ok, c.want)
		}
		obj.close()
	}
}
