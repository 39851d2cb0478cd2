package cshim_test

// These tests check the throttled functions' fast path the GCC plugin emits
// inline (cshim/gccplugin: the cache look-up, the visit count, the
// library's hook only on a miss): a throttled accessor's hot path makes no
// call, every visit of a throttled function is still counted, and exits by
// exceptions stay balanced.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// throttledCalls reads throttled.cc's "calls NAME N" lines.
func throttledCalls(t *testing.T, out string) map[string]uint64 {
	t.Helper()
	calls := map[string]uint64{}
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "calls ")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		n, err := strconv.ParseUint(rest[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		calls[rest[:i]] = n
	}
	if len(calls) != 5 {
		t.Fatalf("throttled printed %d call counts, want 5:\n%s", len(calls), out)
	}
	return calls
}

// TestGCCPluginThrottledVisits builds throttled.cc, a program of LULESH's
// shape, with the plugin at -O2, -O3 and -O2 -flto, throttles its
// functions after 10 calls and checks that each function's visits in the
// profile are the calls the program made, throttled ones included (counted
// by the inline fast path), and that the output and the trace's nesting
// are as without tracing: check(int) is left by an exception now and then
// while throttled.
func TestGCCPluginThrottledVisits(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "g++", "g++")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	src := filepath.Join(root, "cshim", "testdata", "gccplugin", "throttled.cc")
	args := []string{"3000", "4"}
	want := plainOutput(t, "g++", []string{src}, args...)
	for _, tc := range []struct {
		name  string
		flags []string
		lto   bool
	}{
		{"O2", []string{"-O2", "-g"}, false},
		{"O3", []string{"-O3", "-g"}, false},
		{"O2-flto", []string{"-O2", "-g"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p program
			if tc.lto {
				p, _ = ltoBuild(t, bin, "g++", nil, tc.flags, src)
			} else {
				p = instrumentedBuildFlags(t, bin, "g++", nil, tc.flags, src)
			}
			out, _ := p.run(t, []string{"HMB_THROTTLE_CALLS=10", "HMB_THROTTLE_TIME=1h"}, args...)
			if out != want {
				t.Fatalf("the traced program printed %q, the plain one %q", out, want)
			}
			path := filepath.Join(p.out, "prog.0.hmb")
			checkTrace(t, dump(t, path), nil, nil)
			f := tracetest.Open(t, path)
			if len(f.Locations) != 1 {
				t.Fatalf("%d locations, want 1", len(f.Locations))
			}
			got, throttled := visits(f, &f.Locations[0])
			for name, n := range throttledCalls(t, out) {
				if got[name] != n {
					t.Errorf("%s: %d visits in the profile, the program made %d calls", name, got[name], n)
				}
				if !throttled[name] {
					t.Errorf("%s (%d calls) not throttled", name, n)
				}
			}
		})
	}
}

// TestGCCPluginFastPathInline checks the code the plugin emits for a
// throttled accessor, Domain::fx(int) of throttled.cc at -O2 and -O3: from
// its entry to its first return there is no call, no push and no frame
// (the miss path's register-keeping stubs let GCC keep the function a
// leaf), and it reads the library's cache (hmbtrace_throttle_v1) itself;
// the library's stubs are called, under their versioned names, off that
// path. Built with
// --no-plugin (-finstrument-functions), the same path calls the hook, so
// the check can fail.
func TestGCCPluginFastPathInline(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "g++", "g++")
	objdump := tracetest.RequireTool(t, "objdump", "binutils")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	src := filepath.Join(root, "cshim", "testdata", "gccplugin", "throttled.cc")
	for _, tc := range []struct {
		name string
		opts []string
		opt  string
	}{
		{"O2", nil, "-O2"},
		{"O3", nil, "-O3"},
		{"no-plugin", []string{"--no-plugin"}, "-O2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := filepath.Join(t.TempDir(), "throttled.o")
			args := append(append([]string(nil), tc.opts...), "g++", tc.opt, "-c", src, "-o", obj)
			if msg, err := run(root, nil, bin, args...); err != nil {
				t.Fatalf("hmbtrace-instrument %q: %v\n%s", args, err, msg)
			}
			out, err := exec.Command(objdump, "-drwC", "--no-show-raw-insn", obj).CombinedOutput()
			if err != nil {
				t.Fatalf("objdump: %v\n%s", err, out)
			}
			hot, all := hotPath(string(out), "Domain::fx(int)")
			if hot == "" {
				t.Fatalf("no Domain::fx(int) with a return in the object:\n%s", out)
			}
			calls := strings.Contains(hot, "call")
			if tc.name == "no-plugin" {
				if !calls {
					t.Errorf("--no-plugin: no call before Domain::fx(int)'s first return; the check below cannot fail:\n%s", hot)
				}
				return
			}
			if calls {
				t.Errorf("a call before Domain::fx(int)'s first return:\n%s", hot)
			}
			if frame.MatchString(hot) {
				t.Errorf("Domain::fx(int) saves registers or makes a frame before its first return (the miss path's call is not register-keeping):\n%s", hot)
			}
			if !strings.Contains(hot, "hmbtrace_throttle_v1") {
				t.Errorf("Domain::fx(int) does not read hmbtrace_throttle_v1 before its first return:\n%s", hot)
			}
			for _, hook := range []string{"hmbtrace_func_enter_keep_v1", "hmbtrace_func_exit_keep_v1"} {
				if !strings.Contains(all, hook) {
					t.Errorf("Domain::fx(int) never calls %s:\n%s", hook, all)
				}
			}
		})
	}
}

// frame matches what a function's prologue does, in objdump's listing: a
// register saved, or room made on the stack.
var frame = regexp.MustCompile(`:\s+(push|sub\s+\$0x[0-9a-f]+,%rsp)`)

// throttledInstructions is the most instructions a call of a throttled
// function may execute beyond the same call without instrumentation, as
// callgrind counts them in fastpath.c with GCC 12 at -O2: 11.0 on
// 2026-12-07 (a throttled accessor runs the cache's look-up and the
// visit's count: the TLS load, the function's address, its slot, the
// compare, the add). With the miss path an ordinary call it was 20.0: GCC
// pushed and popped callee-saved registers on every call for the values
// the miss path keeps across its call.
const throttledInstructions = 13

// TestGCCPluginThrottledInstructions counts, with callgrind, the
// instructions of fastpath.c's kernel and the accessors it calls, built
// plain and with the plugin at -O2, every call a hit in the cache the
// program fills, and checks the cost of a throttled call, and that the
// inline path counted every call.
func TestGCCPluginThrottledInstructions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program under valgrind")
	}
	valgrind := tracetest.RequireTool(t, "valgrind", "valgrind")
	build := library(t)
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	src := filepath.Join(root, "cshim", "testdata", "gccplugin", "fastpath.c")
	inc, lib := filepath.Join(build, "include"), filepath.Join(build, "lib")
	plain := filepath.Join(t.TempDir(), "plain")
	// Linked with the library for its hmbtrace_throttle_v1.
	if msg, err := run(root, nil, "gcc", "-O2", "-g", "-I"+inc, "-o", plain, src, "-L"+lib, "-lhmbtrace", "-Wl,-rpath,"+lib); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	traced := instrumentedBuildFlags(t, bin, "gcc", nil, []string{"-O2", "-g", "-I" + inc}, src)
	const elements, steps = 10000, 10
	count := func(path string) (uint64, string) {
		cmd := exec.Command(valgrind, "--tool=callgrind", "--toggle-collect=kernel", "--callgrind-out-file=/dev/null",
			path, strconv.Itoa(elements), strconv.Itoa(steps), "throttled")
		// Go's preemption signals stop callgrind (its signal
		// bookkeeping asserts).
		for _, kv := range withoutHMB(os.Environ()) {
			if !strings.HasPrefix(kv, "GODEBUG=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, valgrindGODEBUG, "HMB_OUTPUT="+traced.out)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("valgrind %s: %v\n%s%s", path, err, stdout.String(), stderr.String())
		}
		m := regexp.MustCompile(`Collected : (\d+)`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no count in valgrind's output:\n%s", stderr.String())
		}
		n, _ := strconv.ParseUint(m[1], 10, 64)
		return n, stdout.String()
	}
	base, out := count(plain)
	n, tout := count(traced.path)
	// Per element: nodelist once, x eight times, fx twice.
	calls := uint64(elements * steps * 11)
	want := fmt.Sprintf("visits x %d\nvisits fx %d\nvisits nodelist %d\nvisits kernel %d\n",
		8*elements*steps, 2*elements*steps, elements*steps, steps)
	result, visits, _ := strings.Cut(tout, "\n")
	if presult, _, _ := strings.Cut(out, "\n"); result != presult || visits != want {
		t.Fatalf("the traced program printed\n%s\nwant the plain one's %q and\n%s", tout, presult, want)
	}
	per := (float64(n) - float64(base)) / float64(calls)
	t.Logf("%d throttled calls; %d instructions plain, %d traced: %.1f a call beyond plain", calls, base, n, per)
	if per > throttledInstructions {
		t.Errorf("a throttled call executes %.1f instructions beyond plain's, more than %d: does the fast path save registers again?", per, throttledInstructions)
	}
	if per < 3 {
		t.Errorf("%.1f instructions a throttled call beyond plain's: the calls were not instrumented, or not counted", per)
	}
}

// hotPath returns, from objdump -drC's listing, the instructions of fn from
// its entry to its first ret (and their relocations), and all of fn's
// instructions, its cold part's included.
func hotPath(listing, fn string) (hot, all string) {
	var b, a strings.Builder
	in, done := false, false
	for _, line := range strings.Split(listing, "\n") {
		if strings.HasSuffix(line, ">:") {
			name := line[strings.IndexByte(line, '<')+1 : len(line)-2]
			in = name == fn || name == fn+" [clone .cold]"
			if name == fn {
				done = false
			}
			continue
		}
		if !in {
			continue
		}
		a.WriteString(line + "\n")
		if !done && !strings.Contains(line, "[clone .cold]") {
			b.WriteString(line + "\n")
			if retInsn.MatchString(line) {
				done = true
				hot = b.String()
			}
		}
	}
	return hot, a.String()
}

// retInsn matches a return instruction in objdump's listing.
var retInsn = regexp.MustCompile(`:\s+(rep )?ret[q]?\s*$`)

// TestGCCPluginFortranThrottled checks the inline fast path in Fortran:
// kern::work, throttled after 10 of its 20 calls, has all 20 in the
// profile.
func TestGCCPluginFortranThrottled(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gfortran", "gfortran")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	dir := filepath.Join(root, "cshim", "testdata", "gccplugin")
	srcs := []string{filepath.Join(dir, "kern.f90"), filepath.Join(dir, "afterinline.f90")}
	p := instrumentedBuild(t, bin, "gfortran", nil, srcs...)
	p.run(t, []string{"HMB_THROTTLE_CALLS=10", "HMB_THROTTLE_TIME=1h"})
	f := tracetest.Open(t, filepath.Join(p.out, "prog.0.hmb"))
	got, throttled := visits(f, &f.Locations[0])
	if got["kern::work"] != 20 || !throttled["kern::work"] {
		t.Errorf("kern::work: %d visits, throttled %v; want 20, throttled (visits %v)", got["kern::work"], throttled["kern::work"], got)
	}
}

// TestGCCPluginMissKeepsRegisters runs keepregs.c built with the plugin,
// unthrottled, so that every call takes the miss path, an asm GCC takes
// to keep the general registers and to clobber the others a call may: the
// integer, double and (with AVX2, where the CPU has it) 256-bit vector
// arguments and results live across it must come out as the plain
// build's. A stub that called the hook without saving the general
// registers (checked by hand, 2026-12-07) crashed the program.
func TestGCCPluginMissKeepsRegisters(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "gcc", "gcc")
	bin := instrumentBin(t, build)
	gccPlugin(t, build)
	src := filepath.Join(root, "cshim", "testdata", "gccplugin", "keepregs.c")
	flags := [][]string{{"-O2"}}
	if cpu, err := os.ReadFile("/proc/cpuinfo"); err == nil && regexp.MustCompile(`(?m)^flags\s*:.*\bavx2\b`).Match(cpu) {
		flags = append(flags, []string{"-O2", "-mavx2"})
	}
	for _, f := range flags {
		t.Run(strings.Join(f, ""), func(t *testing.T) {
			plain := filepath.Join(t.TempDir(), "plain")
			if msg, err := run(root, nil, "gcc", append(append([]string(nil), f...), "-o", plain, src)...); err != nil {
				t.Fatalf("gcc: %v\n%s", err, msg)
			}
			want, err := run(root, nil, plain, "50")
			if err != nil {
				t.Fatalf("%s: %v\n%s", plain, err, want)
			}
			p := instrumentedBuildFlags(t, bin, "gcc", nil, f, src)
			out, _ := p.run(t, []string{"HMB_THROTTLE=0"}, "50")
			if out != string(want) {
				t.Fatalf("the traced program printed\n%s\nthe plain one\n%s", out, want)
			}
			tf := tracetest.Open(t, filepath.Join(p.out, "prog.0.hmb"))
			if len(tf.Locations) != 1 {
				t.Fatalf("%d locations, want 1", len(tf.Locations))
			}
			// Every call went through the stubs into the library.
			if got, _ := visits(tf, &tf.Locations[0]); got["ints"] != 50 || got["doubles"] != 50 {
				t.Errorf("ints %d, doubles %d visits in the profile, want 50 (visits %v)", got["ints"], got["doubles"], got)
			}
		})
	}
}
