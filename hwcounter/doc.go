// Package hwcounter owns hmbtrace's hardware and software performance
// counters: it parses perf event names, opens a Linux perf_event group for
// the calling OS thread, and reads the group's cumulative counts at region
// enter and leave without allocating, through RDPMC in user space where the
// kernel allows it and one read() system call otherwise.
//
// # Events
//
// Names are spelled as `perf list` spells them: the hardware events cycles,
// instructions, cache-references, cache-misses, branch-instructions,
// branch-misses, bus-cycles, stalled-cycles-frontend, stalled-cycles-backend
// and ref-cycles; the software events cpu-clock, task-clock, page-faults,
// context-switches, cpu-migrations, minor-faults, major-faults,
// alignment-faults and emulation-faults; perf's aliases (cpu-cycles,
// branches, faults, cs, migrations); and raw PMU events rNNNN (hex config,
// PERF_TYPE_RAW). Software events need no PMU and work in virtual machines.
//
// # Threads
//
// A Group counts the OS thread that opened it (perf_event_open with pid 0,
// cpu -1), on whichever CPU it runs. Go moves goroutines between threads, so
// the caller must call runtime.LockOSThread before Open and stay locked until
// Close, and must Read on that thread only. The rdpmc path in particular
// reads the counters of the CPU it runs on: from another thread it would
// return numbers that belong to nobody.
//
// # Permissions: kernel.perf_event_paranoid
//
// What a process without CAP_PERFMON (or CAP_SYS_ADMIN; root has both) may
// count of its own threads at each level:
//
//	-1   everything, and the mlock limit on perf buffers is lifted
//	 0   user and kernel space (raw tracepoints need CAP_PERFMON)
//	 1   user and kernel space (CPU-wide counting needs CAP_PERFMON; this
//	     package counts per thread and does not need it)
//	 2   user space only: the kernel refuses an event without exclude_kernel
//	     (the upstream default)
//	 3+  nothing: perf_event_open fails (a Debian and Android patch)
//
// Open first asks for user and kernel counts; only when the kernel refuses
// that with EACCES/EPERM does it reopen the event with exclude_kernel (and
// exclude_hv), and Group.UserOnly says so. Two software events,
// context-switches and cpu-migrations, are raised by the scheduler in kernel
// mode and would read 0 forever when user-only: at level 2 they fail with an
// error saying that level 1 is needed, rather than count nothing in silence.
// Every refusal names the event, the errno, the current level read from
// /proc/sys/kernel/perf_event_paranoid and the level that would be needed.
//
// # No PMU
//
// Virtual machines often have no PMU: the kernel then answers ENOENT for
// every hardware and raw event, and the error says "no hardware PMU (virtual
// machine?)" (errors.Is(err, ErrNoPMU)). OpenAvailable opens the events that
// can be counted and returns one EventError per event that cannot, so that a
// caller can record without them and say so once. HasHardwarePMU tells tests
// and benchmarks which case they are in.
//
// # Reading and scaling
//
// Group.Read fills a caller-provided slice with one cumulative count per
// event; a region's count is the difference of two reads. When the kernel
// multiplexes more events than the PMU has counters, each count is
// extrapolated to count*enabled/running (in 128-bit arithmetic), and Read
// returns the Scaling (enabled and running nanoseconds) so that the caller
// can report it. On success Read allocates nothing and never panics.
//
// There are two read paths, and Group.ReadPath says which one a group uses
// (Group.ReadPathReason says why not rdpmc):
//
//   - "rdpmc" (amd64, hardware and raw events only, when the kernel sets
//     cap_user_rdpmc in every event's mapped perf_event_mmap_page): no system
//     call. Each counter is read with the seqlock protocol documented in
//     include/uapi/linux/perf_event.h: lock, index, offset, RDPMC of counter
//     index-1 sign-extended from pmc_width bits, and time_enabled and
//     time_running brought up to date with RDTSC and time_mult, time_shift
//     and time_offset (and time_cycles/time_mask when cap_user_time_short).
//     A counter that is off the PMU at that moment (index 0, e.g. multiplexed
//     out) makes that one Read fall back to read(). This path was written
//     from the kernel's documentation on a virtual machine without a PMU:
//     every step except RDPMC itself is unit-tested on hand-built
//     pages (seqlock retries under a concurrent writer, sign extension,
//     time conversion, scaling), but it has not run against a real PMU.
//   - "read": one read() of the whole group (PERF_FORMAT_GROUP |
//     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING) into
//     a buffer allocated at Open. Software events are always read this way,
//     since they have no hardware counter.
//
// # Dependencies
//
// The package uses golang.org/x/sys/unix for perf_event_open, ioctl, mmap and
// read. It does not use github.com/hodgesds/perf-utils: its GroupProfiler
// allocates on every read and has no rdpmc path, so it cannot serve the
// probe hot path; it never sets exclude_kernel, so for an unprivileged user
// it fails at the default paranoid level 2; its event constants are the ones
// x/sys/unix already has; and it would add testify and multierr to the module. Cross-checking
// against it would only compare one perf_event_open against another, while
// the tests here check counts against ground truth instead (page faults
// against pages touched, task-clock against the thread's CPU clock).
//
// Source is the interface a measurement needs; Group implements it, and
// Replay implements it with scripted values for exact round-trip tests.
package hwcounter
