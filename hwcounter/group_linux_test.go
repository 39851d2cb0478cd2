//go:build linux

package hwcounter

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openLocked locks the test's goroutine to its thread (undone at cleanup,
// which runs on the same goroutine) and opens names, failing the test with
// the package's own explanation if the machine does not allow it.
func openLocked(t testing.TB, names ...string) *Group {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	g, err := Open(names)
	if err != nil {
		t.Fatalf("Open(%q): %v", names, err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return g
}

func read(t *testing.T, g *Group) ([]uint64, Scaling) {
	t.Helper()
	dst := make([]uint64, g.Len())
	s, err := g.Read(dst)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return dst, s
}

func threadCPUTime(t *testing.T) time.Duration {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatalf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", err)
	}
	return time.Duration(ts.Nano())
}

// touchFreshPages maps n anonymous pages and writes one byte to each: n
// minor page faults (no transparent huge pages: advised off, and the region
// is below 2 MiB anyway).
func touchFreshPages(t testing.TB, n int) (touch func()) {
	t.Helper()
	ps := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, n*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap %d pages: %v", n, err)
	}
	t.Cleanup(func() { _ = unix.Munmap(mem) })
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // advice only; the size already rules out huge pages
	return func() {
		for i := 0; i < len(mem); i += ps {
			mem[i] = 1
		}
	}
}

func TestPageFaultsCountTouchedPages(t *testing.T) {
	g := openLocked(t, "page-faults", "minor-faults", "major-faults")
	if g.ReadPath() != ReadSyscall || !strings.Contains(g.ReadPathReason(), "software event page-faults") {
		t.Errorf("software group: path %q (%s), want read with a reason naming page-faults", g.ReadPath(), g.ReadPathReason())
	}
	const pages = 256
	touch := touchFreshPages(t, pages)
	before, _ := read(t, g)
	touch()
	after, s := read(t, g)
	faults, minor, major := after[0]-before[0], after[1]-before[1], after[2]-before[2]
	t.Logf("touched %d fresh pages: page-faults %d, minor-faults %d, major-faults %d (enabled %d ns, running %d ns, user only %v)",
		pages, faults, minor, major, s.Enabled, s.Running, g.UserOnly())
	if faults < pages || faults > pages+pages/4 {
		t.Errorf("page-faults = %d for %d fresh pages, want %d..%d", faults, pages, pages, pages+pages/4)
	}
	if minor < pages || minor > faults {
		t.Errorf("minor-faults = %d, want at least %d and at most page-faults (%d)", minor, pages, faults)
	}
	if major > faults-minor {
		t.Errorf("major-faults = %d exceeds page-faults - minor-faults = %d", major, faults-minor)
	}
	if s.Multiplexed() || s.Enabled == 0 {
		t.Errorf("software events are never multiplexed and have run: got %+v", s)
	}
}

func TestTaskClockMatchesThreadCPUTime(t *testing.T) {
	g := openLocked(t, "task-clock")
	cpu0 := threadCPUTime(t)
	before, _ := read(t, g)
	x := uint64(1)
	for threadCPUTime(t)-cpu0 < 30*time.Millisecond {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	after, s := read(t, g)
	cpu := threadCPUTime(t) - cpu0
	taskClock := time.Duration(after[0] - before[0])
	t.Logf("busy loop (x=%d): task-clock %v, thread CPU time %v, enabled %d running %d", x&1, taskClock, cpu, s.Enabled, s.Running)
	if taskClock < cpu/2 || taskClock > cpu*3/2 {
		t.Errorf("task-clock %v is not within 50%% of the thread's CPU time %v", taskClock, cpu)
	}
}

func TestContextSwitchesWhenSleeping(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, failed, err := OpenAvailable([]string{"context-switches", "task-clock"})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) > 0 {
		// Only legitimate where the paranoid level restricts us to user space.
		if !errors.Is(failed[0], ErrPermission) || !strings.Contains(failed[0].Error(), "kernel.perf_event_paranoid") {
			t.Fatalf("context-switches failed without a paranoid explanation: %v", failed[0])
		}
		t.Logf("context-switches not permitted here, as explained: %v", failed[0])
		return
	}
	defer g.Close()
	before, _ := read(t, g)
	time.Sleep(20 * time.Millisecond)
	after, _ := read(t, g)
	cs := after[0] - before[0]
	t.Logf("sleeping 20ms: %d context switches, task-clock %v", cs, time.Duration(after[1]-before[1]))
	if cs < 1 {
		t.Errorf("context-switches = %d across a 20ms sleep, want >= 1", cs)
	}
}

func TestReadAllocatesNothing(t *testing.T) {
	for _, names := range [][]string{{"task-clock"}, {"task-clock", "page-faults", "minor-faults"}} {
		g := openLocked(t, names...)
		dst := make([]uint64, g.Len())
		var err error
		allocs := testing.AllocsPerRun(1000, func() { _, err = g.Read(dst) })
		if err != nil {
			t.Fatalf("Read %v: %v", names, err)
		}
		if allocs != 0 {
			t.Errorf("Read of %v allocates %.1f times per call, want 0", names, allocs)
		}
	}
}

func TestReadMisuse(t *testing.T) {
	g := openLocked(t, "task-clock", "page-faults")
	if g.Tid() != unix.Gettid() {
		t.Errorf("Tid() = %d, the opening thread is %d", g.Tid(), unix.Gettid())
	}
	if _, err := g.Read(make([]uint64, 1)); err == nil || !strings.Contains(err.Error(), "Read into 1 values, need 2") {
		t.Errorf("short dst: %v", err)
	}
	if _, err := g.Read(nil); err == nil {
		t.Error("Read(nil) succeeded")
	}
	// A longer dst is fine; only the group's values are written.
	dst := []uint64{0, 0, 42}
	if _, err := g.Read(dst); err != nil || dst[2] != 42 {
		t.Errorf("Read into a longer slice: %v, dst %v", err, dst)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := g.Read(dst); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
	var nilGroup *Group
	if _, err := nilGroup.Read(dst); !errors.Is(err, ErrClosed) || nilGroup.Len() != 0 || nilGroup.Close() != nil {
		t.Errorf("nil group: Read %v, Len %d", err, nilGroup.Len())
	}
}

func TestOpenRejectsBadLists(t *testing.T) {
	for names, want := range map[string]string{"": "no events", "bogus": `unknown event "bogus"`, "cs,cs": "repeats"} {
		var list []string
		if names != "" {
			list = strings.Split(names, ",")
		}
		if _, err := Open(list); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q): %v, want %q", list, err, want)
		}
		if _, _, err := OpenAvailable(list); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenAvailable(%q): %v, want %q", list, err, want)
		}
	}
}

// TestHardwareEvents checks values where a PMU exists and the error path
// where it does not (as on this project's VMs).
func TestHardwareEvents(t *testing.T) {
	has, err := HasHardwarePMU()
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if !has {
		t.Log("no hardware PMU on this machine: checking the errors")
		_, err := Open([]string{"cycles"})
		if !errors.Is(err, ErrNoPMU) || !errors.Is(err, unix.ENOENT) {
			t.Fatalf("Open(cycles) = %v, want ErrNoPMU and ENOENT", err)
		}
		for _, want := range []string{`"cycles"`, "no hardware PMU (virtual machine?)", "ENOENT"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
		_, err = Open([]string{"task-clock", "cycles", "instructions"})
		if err == nil || !strings.Contains(err.Error(), `"cycles"`) || !strings.Contains(err.Error(), `"instructions"`) || strings.Contains(err.Error(), `"task-clock"`) {
			t.Errorf("Open(task-clock, cycles, instructions) = %v, want errors for cycles and instructions only", err)
		}

		g, failed, err := OpenAvailable([]string{"task-clock", "cycles", "r1a8", "instructions", "page-faults"})
		if err != nil || g == nil {
			t.Fatalf("OpenAvailable: %v, %v", g, err)
		}
		defer g.Close()
		var opened, missing []string
		for _, e := range g.Events() {
			opened = append(opened, e.Name)
		}
		for _, f := range failed {
			missing = append(missing, f.Event)
			if !errors.Is(f, ErrNoPMU) {
				t.Errorf("%s: %v, want ErrNoPMU", f.Event, f)
			}
		}
		if strings.Join(opened, ",") != "task-clock,page-faults" || strings.Join(missing, ",") != "cycles,r1a8,instructions" {
			t.Errorf("opened %v, missing %v; want task-clock,page-faults and cycles,r1a8,instructions", opened, missing)
		}
		if v, _ := read(t, g); v[0] == 0 {
			t.Errorf("task-clock of the surviving group reads 0")
		}
		g2, failed, err := OpenAvailable([]string{"cycles"})
		if g2 != nil || len(failed) != 1 || err != nil {
			t.Errorf("OpenAvailable(cycles) without a PMU = %v, %v, %v; want nil group and one EventError", g2, failed, err)
		}
		return
	}

	g := openLocked(t, "cycles", "instructions")
	t.Logf("hardware PMU present: read path %q %s", g.ReadPath(), g.ReadPathReason())
	before, _ := read(t, g)
	x := uint64(1)
	const iterations = 10_000_000
	for i := 0; i < iterations; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	after, s := read(t, g)
	cycles, instructions := after[0]-before[0], after[1]-before[1]
	t.Logf("%d iterations (x=%d): cycles %d, instructions %d, scaling %+v", iterations, x&1, cycles, instructions, s)
	if instructions < iterations || cycles == 0 {
		t.Errorf("instructions %d < %d iterations, or cycles %d == 0", instructions, iterations, cycles)
	}
	if g.ReadPath() == ReadRDPMC {
		// The two paths must agree: rdpmc, read(), rdpmc are non-decreasing.
		r1, sc1 := read(t, g)
		sys := make([]uint64, 2)
		sc2, err := g.readSyscall(sys)
		if err != nil {
			t.Fatal(err)
		}
		r2, sc3 := read(t, g)
		t.Logf("rdpmc %v, read() %v, rdpmc %v", r1, sys, r2)
		if !sc1.Multiplexed() && !sc2.Multiplexed() && !sc3.Multiplexed() {
			for i := range sys {
				if r1[i] > sys[i] || sys[i] > r2[i] {
					t.Errorf("counter %d: rdpmc %d, read() %d, rdpmc %d are not in order", i, r1[i], sys[i], r2[i])
				}
			}
		}
	}
}

func TestPermissionReason(t *testing.T) {
	cycles, _ := ParseEvent("cycles")
	cs, _ := ParseEvent("context-switches")
	cases := []struct {
		ev   Event
		p    int
		perr error
		want []string
	}{
		{cycles, 3, nil, []string{"kernel.perf_event_paranoid is 3", "<= 2 (user space only", "sysctl -w kernel.perf_event_paranoid=2", "CAP_PERFMON"}},
		{cycles, 4, nil, []string{"kernel.perf_event_paranoid is 4", "<= 2"}},
		{cycles, 2, nil, []string{"although kernel.perf_event_paranoid is 2", "seccomp"}},
		{cs, 2, nil, []string{"context-switches counts only in kernel mode", "is 2", "always read 0", "<= 1 (sysctl -w kernel.perf_event_paranoid=1)"}},
		{cs, 3, nil, []string{"is 3", "<= 1"}},
		{cs, 1, nil, []string{"although kernel.perf_event_paranoid is 1"}},
		{cycles, 0, errors.New("no /proc"), []string{"could not be read (no /proc)", "<= 2"}},
	}
	for _, c := range cases {
		got := permissionReason(c.ev, c.p, c.perr)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("permissionReason(%s, %d): %q does not mention %q", c.ev.Name, c.p, got, w)
			}
		}
	}
}

func TestExplainOpenError(t *testing.T) {
	task, _ := ParseEvent("task-clock")
	raw, _ := ParseEvent("r1a8")
	cases := []struct {
		ev    Event
		errno syscall.Errno
		want  string
	}{
		{task, unix.ENOENT, "this kernel does not provide the event (perf_event_open: ENOENT, no such file or directory)"},
		{raw, unix.EINVAL, "a raw config this PMU does not accept"},
		{task, unix.EMFILE, "out of file descriptors"},
		{task, unix.ENOSYS, "CONFIG_PERF_EVENTS"},
		{task, unix.EBUSY, "exclusive use"},
		{task, unix.E2BIG, "perf_event_open failed (perf_event_open: E2BIG"},
	}
	for _, c := range cases {
		err := explainOpenError("given-"+c.ev.Name, c.ev, c.errno, false)
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"given-`+c.ev.Name+`"`) || !errors.Is(err, c.errno) {
			t.Errorf("%s %v: %q, want it to mention %q and the name, and to wrap the errno", c.ev.Name, c.errno, err, c.want)
		}
	}
	err := explainOpenError("r1a8", raw, unix.EINVAL, true)
	if !strings.Contains(err.Error(), "tried user space only") {
		t.Errorf("user-only retry not mentioned: %v", err)
	}
	err = explainOpenError("cycles", Event{"cycles", TypeHardware, 0}, unix.EACCES, true)
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "kernel.perf_event_paranoid is") {
		t.Errorf("EACCES: %v, want ErrPermission and the paranoid level", err)
	}
}

func TestParanoid(t *testing.T) {
	p, err := Paranoid()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(paranoidPath)
	t.Logf("kernel.perf_event_paranoid = %d (%q)", p, strings.TrimSpace(string(b)))
	if p < -1 {
		t.Errorf("paranoid %d is below -1, the lowest level the kernel knows", p)
	}
}

// TestUnprivileged runs the package as an ordinary user, as a traced HPC
// code would: when the tests run as root it re-executes this test binary as
// user nobody (65534), since root is exempt from perf_event_paranoid.
func TestUnprivileged(t *testing.T) {
	if os.Getenv("HWCOUNTER_TEST_UNPRIVILEGED") == "1" || os.Geteuid() != 0 {
		checkUnprivileged(t)
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary sits in a directory only root can enter: copy it.
	dir, err := os.MkdirTemp("", "hwcounter-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "hwcounter.test")
	if err := copyExecutable(self, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestUnprivileged$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HWCOUNTER_TEST_UNPRIVILEGED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as user nobody:\n%s", out)
	if err != nil {
		t.Fatalf("unprivileged run failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestUnprivileged") {
		t.Fatal("the unprivileged run did not report TestUnprivileged as passed")
	}
}

func copyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func checkUnprivileged(t *testing.T) {
	p, err := Paranoid()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uid %d, kernel.perf_event_paranoid %d", os.Geteuid(), p)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	switch {
	case p >= 3:
		_, err := Open([]string{"task-clock"})
		if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "<= 2") {
			t.Fatalf("paranoid %d: Open(task-clock) = %v, want ErrPermission naming level 2", p, err)
		}
		t.Logf("refused as expected: %v", err)
	case p == 2:
		g, err := Open([]string{"task-clock", "page-faults"})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if !g.UserOnly() {
			t.Error("at paranoid 2 an unprivileged group must count user space only")
		}
		touch := touchFreshPages(t, 64)
		before, _ := read(t, g)
		touch()
		after, _ := read(t, g)
		if faults := after[1] - before[1]; faults < 64 {
			t.Errorf("user-only page-faults = %d for 64 fresh pages, want >= 64", faults)
		}
		_, err = Open([]string{"context-switches"})
		if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "counts only in kernel mode") || !strings.Contains(err.Error(), "<= 1") {
			t.Errorf("Open(context-switches) at paranoid 2 = %v, want a refusal naming level 1", err)
		}
		t.Logf("context-switches refused as expected: %v", err)
		if has, err := HasHardwarePMU(); err == nil && !has {
			_, err := Open([]string{"cycles"})
			if !errors.Is(err, ErrNoPMU) {
				t.Errorf("unprivileged Open(cycles) without a PMU = %v, want ErrNoPMU", err)
			}
		}
	default:
		g, err := Open([]string{"task-clock", "context-switches"})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if g.UserOnly() {
			t.Errorf("paranoid %d permits kernel counting, yet the group is user-only", p)
		}
	}
}
