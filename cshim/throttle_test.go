package cshim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// throttleRun builds testdata/c/throttle.c with -finstrument-functions as
// a user would (pkg-config: hmbtrace.h's inline probes and
// libhmbtrace-hooks.a's hooks), runs it in mode, and returns the trace,
// the enters each thread made of each region ("thread <tid>" -> region ->
// n), and hmb_dropped.
func throttleRun(t *testing.T, mode string) (*tracefile.File, map[string]map[string]uint64, uint64) {
	t.Helper()
	return throttleRunProgram(t, throttleProgram(t, true), mode)
}

// throttleProgram builds testdata/c/throttle.c with -finstrument-functions.
// inline: as pkg-config has it, and checked to take the program's own fast
// paths (it references the library's cache and defines the hooks); else
// with HMB_NO_INLINE_PROBES and -lhmbtrace alone, and checked to call the
// library for every probe and hook.
func throttleProgram(t *testing.T, inline bool) program {
	t.Helper()
	build := library(t)
	src := filepath.Join(root, "cshim", "testdata", "c", "throttle.c")
	var p program
	if inline {
		p = buildC(t, build, "throttle", []string{"-finstrument-functions"}, src)
	} else {
		dir := t.TempDir()
		p = program{path: filepath.Join(dir, "throttle"), out: filepath.Join(dir, "hmb-out")}
		lib := filepath.Join(build, "lib")
		args := []string{"-O2", "-g", "-pthread", "-finstrument-functions", "-DHMB_NO_INLINE_PROBES", "-o", p.path, src,
			"-I" + filepath.Join(build, "include"), "-L" + lib, "-Wl,-rpath," + lib, "-Wl,--no-as-needed", "-lhmbtrace"}
		if msg, err := run(root, nil, "gcc", args...); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
	}
	syms := symbols(t, p.path)
	if got := syms[throttleCache] == "U"; got != inline {
		t.Fatalf("inline %v: the program references %s: %v", inline, throttleCache, got)
	}
	for _, hook := range []string{"__cyg_profile_func_enter", "__cyg_profile_func_exit"} {
		if got := syms[hook] == "T"; got != inline {
			t.Fatalf("inline %v: the program defines %s: %v (nm: %q)", inline, hook, got, syms[hook])
		}
	}
	return p
}

// throttleCache is the library's thread-local pointer to a thread's cache
// of throttled regions, which hmbtrace.h's inline probes read.
const throttleCache = "hmbtrace_throttle_v1"

// symbols returns the type nm gives each symbol of an executable's own
// symbol table.
func symbols(t *testing.T, path string) map[string]string {
	t.Helper()
	out, err := run(root, nil, "nm", path)
	if err != nil {
		t.Fatalf("nm %s: %v\n%s", path, err, out)
	}
	syms := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch len(f) {
		case 2:
			syms[f[1]] = f[0]
		case 3:
			syms[f[2]] = f[1]
		}
	}
	return syms
}

// throttleRunProgram runs a build of throttle.c in mode; see throttleRun.
func throttleRunProgram(t *testing.T, p program, mode string) (*tracefile.File, map[string]map[string]uint64, uint64) {
	t.Helper()
	out, stderr := p.run(t, []string{"HMB_THROTTLE_CALLS=10", "HMB_THROTTLE_TIME=1h"}, mode)
	made := map[string]map[string]uint64{}
	dropped, handler := uint64(0), uint64(0)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		n, err := strconv.ParseUint(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		switch {
		case f[0] == "handler":
			handler = n
		case f[0] == "thread" && len(f) == 4:
			loc := "thread " + f[1]
			if made[loc] == nil {
				made[loc] = map[string]uint64{}
			}
			made[loc][f[2]] = n
		case f[0] == "dropped":
			dropped = n
		default:
			t.Fatalf("output line %q", line)
		}
	}
	if mode == "signal" && handler == 0 {
		t.Fatalf("the timer's handler never ran:\n%s", out)
	}
	if dropped > 0 && !strings.Contains(stderr, fmt.Sprintf("%d probes dropped", dropped)) {
		t.Errorf("hmb_dropped %d, stderr %q: want the same count reported at exit", dropped, stderr)
	}
	return tracetest.Open(t, filepath.Join(p.out, "throttle.0.hmb")), made, dropped
}

// visits returns a location's visits of each region by name, timed and
// after throttling, and which regions were throttled there.
func visits(f *tracefile.File, l *tracefile.Location) (all map[string]uint64, throttled map[string]bool) {
	all, throttled = map[string]uint64{}, map[string]bool{}
	for _, e := range l.Profile {
		name := f.RegionName(e.Region)
		all[name] = e.Visits + e.VisitsAfter
		if e.Throttled {
			throttled[name] = true
		}
	}
	return all, throttled
}

// TestThrottledVisitsExact checks that the visits of throttled regions,
// which the C probes count in their thread's caches, all reach the profile:
// through hmb_enter and the -finstrument-functions hooks, with two regions
// and two functions taking one slot of their cache from each other, on
// threads that exit before hmb_finalize and after it, and on the main
// thread, whose probes after hmb_finalize are dropped and counted.
// Throttling is per location: a thread that stays under the threshold keeps
// the region measured. Both with the program's own fast paths (hmbtrace.h's
// inline probes, libhmbtrace-hooks.a) and with the library's alone.
func TestThrottledVisitsExact(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(map[bool]string{true: "inline", false: "library"}[inline], func(t *testing.T) {
			f, made, dropped := throttleRunProgram(t, throttleProgram(t, inline), "exact")
			checkThrottledExact(t, f, made, dropped)
		})
	}
	t.Run("plugin", func(t *testing.T) {
		f, made, dropped := throttleRunProgram(t, throttlePluginProgram(t), "exact")
		checkThrottledExact(t, f, made, dropped)
	})
}

// throttlePluginProgram builds testdata/c/throttle.c with the GCC plugin,
// whose functions test the cache inline and call the library's hooks
// under their versioned names only on a miss.
func throttlePluginProgram(t *testing.T) program {
	t.Helper()
	build := library(t)
	so := gccPlugin(t, build)
	src := filepath.Join(root, "cshim", "testdata", "c", "throttle.c")
	p := buildC(t, build, "throttle", []string{"-fplugin=" + so}, src)
	// On x86-64 the miss path calls the hooks' register-keeping stubs.
	hook := "hmbtrace_func_enter_v1"
	if runtime.GOARCH == "amd64" {
		hook = "hmbtrace_func_enter_keep_v1"
	}
	if syms := symbols(t, p.path); syms[hook] != "U" || syms[throttleCache] != "U" {
		t.Fatalf("the plugin's build of throttle.c does not call %s or read %s (nm: %q, %q)",
			hook, throttleCache, syms[hook], syms[throttleCache])
	}
	return p
}

// checkThrottledExact checks a run of throttle.c's exact mode.
func checkThrottledExact(t *testing.T, f *tracefile.File, made map[string]map[string]uint64, dropped uint64) {
	t.Helper()
	if len(f.Locations) != len(made) {
		t.Errorf("%d locations, %d threads", len(f.Locations), len(made))
	}
	under := 0
	for i := range f.Locations {
		l := &f.Locations[i]
		want, ok := made[l.Name]
		if !ok {
			t.Errorf("location %q is none of the threads", l.Name)
			continue
		}
		got, throttled := visits(f, l)
		for _, name := range []string{"hot", "twin", "hot_func", "twin_a", "twin_b"} {
			region := name
			if name == "twin" {
				region = f.RegionName(twinRegion(t, f))
			}
			if got[region] != want[name] {
				t.Errorf("%s: %s visited %d times in the profile, %d made", l.Name, region, got[region], want[name])
			}
			if want[name] >= 10 && !throttled[region] {
				t.Errorf("%s: %s (%d visits) not throttled", l.Name, region, want[name])
			}
		}
		if want["hot"] < 10 {
			under++
			if throttled["hot"] {
				t.Errorf("%s: hot throttled after %d visits, under HMB_THROTTLE_CALLS", l.Name, want["hot"])
			}
		}
	}
	if under != 1 {
		t.Errorf("%d locations under the threshold, want 1", under)
	}
	// The main thread's 7 enters and leaves after hmb_finalize.
	if dropped != 14 {
		t.Errorf("hmb_dropped %d, want the 14 probes after hmb_finalize", dropped)
	}
}

// twinRegion returns the id of the region throttle.c visits as its twin:
// the one besides hot whose name starts with "pad".
func twinRegion(t *testing.T, f *tracefile.File) uint32 {
	t.Helper()
	var id uint32
	for i := range f.Locations {
		for _, e := range f.Locations[i].Profile {
			if strings.HasPrefix(f.RegionName(e.Region), "pad ") {
				id = e.Region
			}
		}
	}
	if id == 0 {
		t.Fatal("no pad region visited")
	}
	return id
}

// TestThrottledVisitsRaceFinalize checks that threads entering a throttled
// region while hmb_finalize runs, and after it, lose no visit uncounted:
// each is in the profile or in hmb_dropped.
func TestThrottledVisitsRaceFinalize(t *testing.T) {
	f, made, dropped := throttleRun(t, "race")
	var enters, inTrace uint64
	for _, m := range made {
		enters += m["hot"]
	}
	for i := range f.Locations {
		got, _ := visits(f, &f.Locations[i])
		inTrace += got["hot"]
	}
	if dropped == 0 {
		t.Errorf("no probe dropped: the threads were to go on after hmb_finalize")
	}
	if inTrace+dropped != enters {
		t.Errorf("%d visits in the profile + %d dropped = %d, the threads made %d", inTrace, dropped, inTrace+dropped, enters)
	}
}

// TestThrottledVisitsSignal checks the caches against a signal handler that
// enters a throttled region sharing its slot with the one the interrupted
// main loop counts, and the loop taking the slot back: the handler lands
// in the fast path, in the marked path replacing the slot's region (whose
// count goes to the profile), and in the slow path replaying in Go (where
// its probe is dropped and counted). Every visit is in the profile or
// dropped. (A handler that takes the slot between the interrupted probe's
// compare and its count makes that one visit count for the handler's
// region: the total stays exact, so only the total is checked.)
func TestThrottledVisitsSignal(t *testing.T) {
	f, made, dropped := throttleRun(t, "signal")
	if len(f.Locations) != 1 || len(made) != 1 {
		t.Fatalf("%d locations, %d threads: want the main thread alone", len(f.Locations), len(made))
	}
	var enters, inTrace uint64
	for _, m := range made {
		enters = m["hot"] + m["twin"]
	}
	got, throttled := visits(f, &f.Locations[0])
	twin := f.RegionName(twinRegion(t, f))
	inTrace = got["hot"] + got[twin]
	if !throttled["hot"] || !throttled[twin] {
		t.Errorf("throttled %v, want hot and %s", throttled, twin)
	}
	if inTrace+dropped != enters {
		t.Errorf("%d visits in the profile + %d dropped = %d, the thread and its handler made %d", inTrace, dropped, inTrace+dropped, enters)
	}
}

// versioned is the loader's message for a program that references the
// names of this version of the cache (hmbtrace_throttle_v1,
// hmbtrace_enter_miss_v1, ...) and a library that has none of them.
var versioned = regexp.MustCompile(`symbol lookup error: .*undefined symbol: hmbtrace_\w+_v1\b`)

// TestThrottleVersionSkew checks that a program whose probes read the
// library's cache of throttled regions (hmbtrace.h's inline hmb_enter and
// hmb_leave; libhmbtrace-hooks.a's hooks; the GCC plugin's inline fast
// path) does not start with a libhmbtrace.so of another layout of that
// cache, and that the loader's message names a symbol of the cache's
// version. Each build runs with the real library first, so the failure is
// the skew's.
func TestThrottleVersionSkew(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "nm", "binutils")
	dir := t.TempDir()
	libDir := filepath.Join(dir, "lib")
	if err := os.Mkdir(libDir, 0o755); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(libDir, "libhmbtrace.so")
	useReal := func() {
		os.Remove(so)
		if err := os.Symlink(filepath.Join(build, "lib", "libhmbtrace.so"), so); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "other.so")
	if msg, err := run(dir, nil, "gcc", "-O2", "-shared", "-fPIC", "-Wl,-soname,libhmbtrace.so", "-o", other,
		filepath.Join(root, "cshim", "testdata", "c", "skew_lib.c")); err != nil {
		t.Fatalf("gcc skew_lib.c: %v\n%s", err, msg)
	}
	src := filepath.Join(root, "cshim", "testdata", "c", "skew.c")
	inc := "-I" + filepath.Join(build, "include")
	link := []string{"-L" + libDir, "-Wl,-rpath," + libDir, "-Wl,--no-as-needed"}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"inline probes", append([]string{"-DPROBES"}, append(link, "-lhmbtrace")...)},
		{"program's hooks", append([]string{"-finstrument-functions", "-L" + filepath.Join(build, "lib")},
			append(link, "-l:libhmbtrace-hooks.a", "-lhmbtrace")...)},
		// The GCC plugin's inline fast path, with no hooks of the program's.
		{"plugin's fast path", append([]string{"-fplugin=" + gccPlugin(t, build)}, append(link, "-lhmbtrace")...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useReal()
			prog := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			args := append([]string{"-O2", inc, "-o", prog, src}, tc.flags...)
			if msg, err := run(dir, nil, "gcc", args...); err != nil {
				t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
			}
			if syms := symbols(t, prog); syms[throttleCache] != "U" {
				t.Fatalf("the program does not reference %s (nm: %q)", throttleCache, syms[throttleCache])
			}
			env := []string{"HMB_OUTPUT=" + filepath.Join(dir, "out")}
			if out, err := run(dir, env, prog); err != nil || !strings.HasPrefix(string(out), "started\n2\n") {
				t.Fatalf("with its own library: %v\n%s", err, out)
			}
			os.Remove(so)
			if err := os.Symlink(other, so); err != nil {
				t.Fatal(err)
			}
			out, err := run(dir, env, prog)
			if err == nil || strings.Contains(string(out), "started") {
				t.Fatalf("with a library of another cache layout: %v, output %q: want no start", err, out)
			}
			if !versioned.Match(out) {
				t.Errorf("with a library of another cache layout: %q, want the loader to name a symbol of the cache's version (%s)", out, versioned)
			}
		})
	}
}

// TestInlineProbesLanguages builds inline_probes.cc with g++ at -O0 and
// -O2 and as C with gcc -std=c99 -pedantic: the inline probes compile in
// each (warnings are errors), and every visit of the throttled region,
// through the inline forms and the library's functions, is in the profile.
func TestInlineProbesLanguages(t *testing.T) {
	build := library(t)
	tracetest.RequireTool(t, "g++", "g++")
	src := filepath.Join(root, "cshim", "testdata", "cxx", "inline_probes.cc")
	pc, err := run(root, pkgEnv(build), "pkg-config", "--cflags", "--libs", "hmbtrace")
	if err != nil {
		t.Fatalf("pkg-config --cflags --libs hmbtrace: %v\n%s", err, pc)
	}
	for _, tc := range []struct {
		name string
		cmd  []string
	}{
		{"g++ -O0", []string{"g++", "-O0"}},
		{"g++ -O2", []string{"g++", "-O2"}},
		{"gcc -std=c99", []string{"gcc", "-std=c99", "-pedantic", "-O2", "-x", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := program{path: filepath.Join(dir, "inline_probes"), out: filepath.Join(dir, "hmb-out")}
			args := append(append(tc.cmd[1:], "-Wall", "-Wextra", "-Werror", "-o", p.path, src, "-x", "none"), strings.Fields(string(pc))...)
			if msg, err := run(dir, nil, tc.cmd[0], args...); err != nil {
				t.Fatalf("%s %s: %v\n%s", tc.cmd[0], strings.Join(args, " "), err, msg)
			}
			if syms := symbols(t, p.path); syms[throttleCache] != "U" {
				t.Fatalf("the program does not reference %s: its probes are not the inline ones", throttleCache)
			}
			out, _ := p.run(t, []string{"HMB_THROTTLE_CALLS=100", "HMB_THROTTLE_TIME=1h"})
			made, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
			if err != nil {
				t.Fatalf("output %q", out)
			}
			f := tracetest.Open(t, filepath.Join(p.out, "inline_probes.0.hmb"))
			got, throttled := visits(f, &f.Locations[0])
			if got["inline"] != made || !throttled["inline"] {
				t.Errorf("region inline: %d visits in the profile (throttled %v), %d made", got["inline"], throttled["inline"], made)
			}
		})
	}
}

// TestThrottlePreemptedThreads runs testdata/c/throttle_preempt.c: four
// threads make 10^5 short accessor calls each, preempted (a 1 ms sleep)
// inside 0, 6, 25 and 55 of them, which puts their mean time per call
// between about 30 ns and 0.6 µs, on either side of the default 250 ns.
// The C probes' rule counts long calls instead of averaging, so every
// thread throttles the same regions: the accessors, not "mixed", half of
// whose calls take 1 µs.
func TestThrottlePreemptedThreads(t *testing.T) {
	build := library(t)
	p := buildC(t, build, "throttle_preempt", []string{"-pthread"}, filepath.Join(root, "cshim", "testdata", "c", "throttle_preempt.c"))
	out, _ := p.run(t, nil)
	if got := strings.Count(out, "preempted"); got != 4 {
		t.Fatalf("%d threads reported, want 4:\n%s", got, out)
	}
	paths, err := filepath.Glob(filepath.Join(p.out, "*.hmb"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("trace files %q (%v): want one", paths, err)
	}
	f := tracetest.Open(t, paths[0])
	if f.ThrottleRule == nil {
		t.Fatal("no throttle rule in the trace")
	}
	want := []string{"Domain::fx(int)", "Domain::x(int)"}
	threads := 0
	for i := range f.Locations {
		l := &f.Locations[i]
		all, throttled := visits(f, l)
		if all["Domain::fx(int)"] == 0 {
			continue // the main thread
		}
		threads++
		var got []string
		for name := range throttled {
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: throttled %q, want %q", l.Name, got, want)
		}
		for _, name := range append(want, "mixed") {
			if n := all[name]; n != 100000 && name != "mixed" || name == "mixed" && n != 10000 {
				t.Errorf("%s: %d visits of %s", l.Name, n, name)
			}
		}
	}
	if threads != 4 {
		t.Errorf("%d threads with accessor visits, want 4", threads)
	}
}
