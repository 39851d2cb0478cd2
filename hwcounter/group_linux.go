//go:build linux

package hwcounter

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Group is a set of perf events counted together for one OS thread: the
// kernel schedules them onto the PMU as a unit, so their counts cover the
// same instructions. A Group belongs to the thread that opened it; it is not
// safe for concurrent use.
type Group struct {
	groupInfo
	closed   bool
	fds      []int    // fds[0] is the group leader
	buf      []byte   // one group read(), allocated at Open
	mappings [][]byte // one perf_event_mmap_page per event, rdpmc path only
	pages    []*mmapPage
}

// pageCapabilities loads the capability bits of a mapped page.
func pageCapabilities(pg *mmapPage) uint64 { return atomic.LoadUint64(&pg.capabilities) }

// paranoidPath is the sysctl kernel.perf_event_paranoid.
const paranoidPath = "/proc/sys/kernel/perf_event_paranoid"

// Paranoid returns the current value of kernel.perf_event_paranoid (see the
// package documentation for what each level permits).
func Paranoid() (int, error) {
	b, err := os.ReadFile(paranoidPath)
	if err != nil {
		return 0, fmt.Errorf("hwcounter: read kernel.perf_event_paranoid: %w", err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("hwcounter: %s holds %q, not an integer", paranoidPath, strings.TrimSpace(string(b)))
	}
	return v, nil
}

// kernelError is an errno from a perf system call, printed with its symbolic
// name ("ENOENT: no such file or directory") and unwrapping to the errno.
type kernelError struct {
	call  string
	errno syscall.Errno
}

func (e *kernelError) Error() string {
	return fmt.Sprintf("%s: %s, %v", e.call, unix.ErrnoName(e.errno), e.errno)
}

func (e *kernelError) Unwrap() error { return e.errno }

// Open opens the named events (see ParseEvent) as one group counting the
// calling OS thread on whatever CPU it runs (pid 0, cpu -1). The caller must
// have locked its goroutine to the OS thread (runtime.LockOSThread) before
// Open and keep it locked until Close: the counters follow the thread, not the
// goroutine, and on the rdpmc path a read from another thread would return
// that thread's CPU counters. If any event cannot be opened, Open opens none
// and returns an *EventError per failed event (joined when more than one).
func Open(names []string) (*Group, error) {
	g, failed, err := OpenAvailable(names)
	if err != nil {
		return nil, err
	}
	if len(failed) == 0 {
		return g, nil
	}
	if g != nil {
		_ = g.Close() // nothing was read from it; its close errors add nothing
	}
	if len(failed) == 1 {
		return nil, failed[0]
	}
	errs := make([]error, len(failed))
	for i, f := range failed {
		errs[i] = f
	}
	return nil, errors.Join(errs...)
}

// OpenAvailable opens those of the named events that this machine and this
// process's permissions allow, as one group for the calling thread (with the
// same locking rule as Open). It returns the group of the events that opened,
// in the order given (nil if none did), and an *EventError for each event
// that did not, so that a caller can record without those events and say so
// once. The error is for a list that does not parse, or a group that the
// kernel would not enable.
func OpenAvailable(names []string) (*Group, []*EventError, error) {
	events, err := ParseEvents(names)
	if err != nil {
		return nil, nil, err
	}
	g := &Group{groupInfo: groupInfo{tid: unix.Gettid()}}
	var failed []*EventError
	for i, ev := range events {
		leader := -1
		if len(g.fds) > 0 {
			leader = g.fds[0]
		}
		fd, userOnly, eerr := openEvent(names[i], ev, leader)
		if eerr != nil {
			failed = append(failed, eerr)
			continue
		}
		g.fds = append(g.fds, fd)
		g.events = append(g.events, ev)
		g.userOnly = g.userOnly || userOnly
	}
	if len(g.fds) == 0 {
		return nil, failed, nil
	}
	// The leader was opened disabled so that all members start together.
	if err := unix.IoctlSetInt(g.fds[0], unix.PERF_EVENT_IOC_ENABLE, unix.PERF_IOC_FLAG_GROUP); err != nil {
		_ = g.Close()
		return nil, failed, fmt.Errorf("hwcounter: enable group led by %q: %w", g.events[0].Name, err)
	}
	g.buf = make([]byte, groupReadSize(len(g.events)))
	g.choosePath()
	return g, failed, nil
}

// perfEventOpen opens one event for the calling thread; leader -1 makes it a
// (disabled) group leader.
func perfEventOpen(ev Event, leader int, userOnly bool) (int, error) {
	attr := unix.PerfEventAttr{
		Type:        ev.Type,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config:      ev.Config,
		Read_format: unix.PERF_FORMAT_GROUP | unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
	}
	if leader < 0 {
		attr.Bits |= unix.PerfBitDisabled
	}
	if userOnly {
		attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	}
	for {
		fd, err := unix.PerfEventOpen(&attr, 0, -1, leader, unix.PERF_FLAG_FD_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// openEvent opens ev counting user and kernel space, and only if the kernel
// refuses that (kernel.perf_event_paranoid >= 2 without CAP_PERFMON), user
// space only. An event the kernel counts only in kernel mode is not opened
// user-only: it would read 0 forever, which would be silence, not a count.
func openEvent(name string, ev Event, leader int) (fd int, userOnly bool, _ *EventError) {
	fd, err := perfEventOpen(ev, leader, false)
	if err == nil {
		return fd, false, nil
	}
	if isPermission(err) && !ev.kernelOnly() {
		userOnly = true
		fd, err = perfEventOpen(ev, leader, true)
		if err == nil {
			return fd, true, nil
		}
	}
	return -1, false, explainOpenError(name, ev, err, userOnly)
}

func isPermission(err error) bool { return err == unix.EACCES || err == unix.EPERM }

// explainOpenError turns perf_event_open's errno into an EventError whose
// reason says what is missing and, where possible, what to change.
func explainOpenError(name string, ev Event, err error, userOnlyTried bool) *EventError {
	e := &EventError{Event: name, Err: err}
	errno, ok := err.(syscall.Errno)
	if !ok {
		e.Reason = "perf_event_open failed"
		return e
	}
	e.Err = &kernelError{call: "perf_event_open", errno: errno}
	switch errno {
	case unix.EACCES, unix.EPERM:
		e.kind = ErrPermission
		p, perr := Paranoid()
		e.Reason = permissionReason(ev, p, perr)
	case unix.ENOENT, unix.ENODEV, unix.EOPNOTSUPP:
		if !ev.Hardware() {
			e.Reason = "this kernel does not provide the event"
			break
		}
		has, herr := HasHardwarePMU()
		switch {
		case herr == nil && !has:
			e.kind = ErrNoPMU
			e.Reason = "no hardware PMU (virtual machine?)"
		case herr == nil:
			e.Reason = "this CPU's PMU does not provide the event"
		default:
			e.Reason = "the kernel has no such event (no hardware PMU, or this CPU's PMU lacks it)"
		}
	case unix.EINVAL:
		e.Reason = "the kernel rejected the event's attributes (a raw config this PMU does not accept, or more events in the group than the PMU has counters)"
	case unix.EMFILE, unix.ENFILE:
		e.Reason = "out of file descriptors (each counter takes one per thread; raise ulimit -n)"
	case unix.ENOSYS:
		e.Reason = "the kernel was built without perf events (CONFIG_PERF_EVENTS)"
	case unix.EBUSY:
		e.Reason = "the PMU is in exclusive use by another tool"
	default:
		e.Reason = "perf_event_open failed"
	}
	if userOnlyTried && e.kind == nil && errno != unix.EACCES && errno != unix.EPERM {
		e.Reason += " (tried user space only: kernel.perf_event_paranoid forbids counting the kernel)"
	}
	return e
}

// permissionReason explains EACCES/EPERM for ev given the paranoid level p
// (or the error reading it).
func permissionReason(ev Event, p int, perr error) string {
	const sysctl = "kernel.perf_event_paranoid"
	if perr != nil {
		return fmt.Sprintf("permission denied, and %s could not be read (%v): counting a thread's own events needs %s <= 2 (user space only), <= 1 (with kernel), or CAP_PERFMON", sysctl, perr, sysctl)
	}
	if ev.kernelOnly() {
		if p >= 2 {
			return fmt.Sprintf("%s counts only in kernel mode, and %s is %d, which limits unprivileged counting to user space, where it would always read 0: needs %s <= 1 (sysctl -w %s=1) or CAP_PERFMON", ev.Name, sysctl, p, sysctl, sysctl)
		}
	} else if p >= 3 {
		return fmt.Sprintf("%s is %d, which forbids unprivileged perf events: counting a thread's own events needs %s <= 2 (user space only; sysctl -w %s=2), <= 1 to include the kernel, or CAP_PERFMON", sysctl, p, sysctl, sysctl)
	}
	return fmt.Sprintf("permission denied although %s is %d, which allows this event: the denial comes from elsewhere (a seccomp filter such as a container runtime's, or a security module)", sysctl, p)
}

// HasHardwarePMU reports whether the kernel can count hardware events for
// this thread, by opening (and closing) a user-space cycles counter. It
// returns false with a nil error when there is no PMU (ENOENT, as on a
// virtual machine without PMU passthrough), and an error when the answer is
// unknown because perf events are not permitted at all.
func HasHardwarePMU() (bool, error) {
	fd, err := perfEventOpen(Event{Name: "cycles", Type: TypeHardware}, -1, true)
	if err == nil {
		_ = unix.Close(fd)
		return true, nil
	}
	switch err {
	case unix.ENOENT, unix.ENODEV, unix.EOPNOTSUPP:
		return false, nil
	}
	errno, _ := err.(syscall.Errno)
	return false, fmt.Errorf("hwcounter: cannot tell whether a hardware PMU exists: opening cycles: %w", &kernelError{call: "perf_event_open", errno: errno})
}

// choosePath sets the group's read path: RDPMC when this architecture has it
// here and the kernel grants it for every event, read() otherwise, with the
// reason recorded for the user.
func (g *Group) choosePath() {
	g.path = ReadSyscall
	if !rdpmcArch {
		g.pathReason = "rdpmc is implemented for amd64 only (GOARCH=" + runtime.GOARCH + ")"
		return
	}
	for _, ev := range g.events {
		if !ev.Hardware() {
			g.pathReason = "software event " + ev.Name + " has no hardware counter to read with rdpmc"
			return
		}
	}
	pageSize := os.Getpagesize()
	for i, fd := range g.fds {
		m, err := unix.Mmap(fd, 0, pageSize, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			g.pathReason = fmt.Sprintf("mapping the perf page of %s failed: %v", g.events[i].Name, err)
			g.unmap()
			return
		}
		g.mappings = append(g.mappings, m)
		g.pages = append(g.pages, (*mmapPage)(unsafe.Pointer(&m[0])))
	}
	for i, pg := range g.pages {
		caps := pageCapabilities(pg)
		if !rdpmcGranted(caps) {
			g.pathReason = fmt.Sprintf("the kernel does not grant rdpmc for %s (capabilities %#x; see /sys/bus/event_source/devices/cpu/rdpmc)", g.events[i].Name, caps)
			g.unmap()
			return
		}
	}
	g.path = ReadRDPMC
}

func (g *Group) unmap() {
	for _, m := range g.mappings {
		_ = unix.Munmap(m) // only fails for a bad range, which these are not
	}
	g.mappings, g.pages = nil, nil
}

// Read stores the group's cumulative counts, one per event in Events order,
// into dst[:Len()] and returns the enabled and running times they were
// scaled with (see Scaling). Counts of a multiplexed group are extrapolated
// to the enabled time. On success Read allocates nothing; on the rdpmc path
// it makes no system call (a counter that is momentarily off the PMU falls
// back to one read() for that call). It must be called on the thread that
// opened the group.
func (g *Group) Read(dst []uint64) (Scaling, error) {
	if g == nil || g.closed {
		return Scaling{}, ErrClosed
	}
	n := len(g.events)
	if len(dst) < n {
		return Scaling{}, shortDst(len(dst), n)
	}
	dst = dst[:n]
	if g.path == ReadRDPMC {
		if s, ok := g.readRDPMC(dst); ok {
			return s, nil
		}
	}
	return g.readSyscall(dst)
}

// readRDPMC reads every counter from user space; each is scaled with its own
// page's times (members of a group are scheduled together, so these agree
// with the leader's, whose times are returned).
func (g *Group) readRDPMC(dst []uint64) (Scaling, bool) {
	var lead Scaling
	for i, pg := range g.pages {
		snap, ok := readPageCPU(pg)
		if !ok {
			return Scaling{}, false
		}
		count, enabled, running := snap.values()
		dst[i] = scaleCount(count, enabled, running)
		if i == 0 {
			lead = Scaling{Enabled: enabled, Running: running}
		}
	}
	return lead, true
}

func (g *Group) readSyscall(dst []uint64) (Scaling, error) {
	for {
		n, err := unix.Read(g.fds[0], g.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Scaling{}, fmt.Errorf("hwcounter: read group led by %q (fd %d): %w", g.events[0].Name, g.fds[0], err)
		}
		if n < 0 || n > len(g.buf) {
			return Scaling{}, fmt.Errorf("hwcounter: read group led by %q returned %d bytes into a %d-byte buffer", g.events[0].Name, n, len(g.buf))
		}
		return decodeGroupRead(g.buf[:n], dst)
	}
}

// Close stops counting and releases the group's file descriptors and
// mappings. It is safe to call more than once.
func (g *Group) Close() error {
	if g == nil || g.closed {
		return nil
	}
	g.closed = true
	g.unmap()
	var errs []error
	for i, fd := range g.fds {
		if err := unix.Close(fd); err != nil {
			errs = append(errs, fmt.Errorf("hwcounter: close %q (fd %d): %w", g.events[i].Name, fd, err))
		}
	}
	g.fds = nil
	return errors.Join(errs...)
}
