package cshim

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCallsHooks: an executable compiled with -finstrument-functions calls
// the hooks, whether a shared object or the executable itself defines them
// (libhmbtrace.so, libhmbtrace-hooks.a); one that only links them (as
// pkg-config's flags do for every program) does not.
func TestCallsHooks(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc (Debian package gcc)")
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := write("hooks.c", `
__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *f, void *c) { (void)f; (void)c; }
__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *f, void *c) { (void)f; (void)c; }
`)
	prog := write("prog.c", `
__attribute__((noinline)) int work(int x) { return x * 3; }
int main(int argc, char **argv) { (void)argv; return work(argc) == 3 ? 0 : 1; }
`)
	gcc := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %q: %v\n%s", args, err, out)
		}
	}
	so := filepath.Join(dir, "libhooks.so")
	gcc("-O2", "-shared", "-fPIC", "-o", so, hooks)
	link := []string{"-L" + dir, "-Wl,-rpath," + dir, "-Wl,--no-as-needed", "-lhooks"}
	for _, c := range []struct {
		name string
		args []string
		want bool
	}{
		{"shared-object hooks", append([]string{"-finstrument-functions", prog}, link...), true},
		{"shared-object hooks, no PLT", append([]string{"-finstrument-functions", "-fno-plt", prog}, link...), true},
		{"hooks in the executable", []string{"-finstrument-functions", prog, hooks}, true},
		{"hooks in the executable, not instrumented", []string{prog, hooks}, false},
		{"-Wl,-u only", append([]string{"-Wl,-u,__cyg_profile_func_enter", prog}, link...), false},
		{"no hooks", []string{prog}, false},
	} {
		exe := filepath.Join(dir, "prog")
		gcc(append([]string{"-O2", "-o", exe}, c.args...)...)
		if got := callsHooks(exe); got != c.want {
			t.Errorf("%s: callsHooks %v, want %v", c.name, got, c.want)
		}
	}
	if callsHooks(filepath.Join(dir, "none")) || callsHooks(prog) {
		t.Error("callsHooks true for a missing file or a C source")
	}
}

// TestPreloadAt: the object holding a code address is read, DWARF names
// included, so that the first lookup in it reads nothing; an address that
// no file holds reads nothing. (The C tests check the names an
// instrumented program's trace gets.)
func TestPreloadAt(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	addr := uint64(reflect.ValueOf(TestPreloadAt).Pointer())
	s := NewSymbolizer()
	defer s.Close()
	if path := s.PreloadAt(0); path != "" || len(s.files) != 0 {
		t.Fatalf("PreloadAt(0) read %q, %d files", path, len(s.files))
	}
	if path := s.PreloadAt(addr); path != exe {
		t.Errorf("PreloadAt(%#x) says it read %q, want %s", addr, path, exe)
	}
	obj := s.files[exe]
	if obj == nil {
		t.Fatalf("PreloadAt(%#x) did not read %s (read: %v)", addr, exe, s.files)
	}
	if obj.ftn == nil || obj.lines == nil {
		t.Errorf("PreloadAt read the symbols of %s but not its DWARF", exe)
	}
}
