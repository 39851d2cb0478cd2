/*
 * hmbtrace.h - the C ABI of hmbtrace, an in-memory event tracer.
 *
 * Build and link:
 *
 *     cc prog.c $(pkg-config --cflags --libs hmbtrace)
 *
 * Use:
 *
 *     uint32_t solve = hmb_region("solve");     // once; idempotent by name
 *     hmb_enter(solve);                         // a clock read, then the event written in place
 *     ...
 *     hmb_leave(solve);
 *
 * The trace is written by hmb_finalize, which the library also registers
 * with atexit, to $HMB_OUTPUT/<name>.<rank>.hmb; read it with
 * `hmbtrace summary FILE` or `hmbtrace dump FILE`. The measurement is
 * configured by the HMB_* environment variables, exactly as for Go programs
 * (HMB_BUFFER_SIZE, HMB_FILTER_FILE, HMB_MIN_DURATION, ...); the variables
 * are read from the C environment at hmb_init, so setenv before it works.
 *
 * Threads. Every thread that calls a probe becomes its own location of the
 * trace, named "thread <tid>" after its Linux thread id unless
 * hmb_thread_name says otherwise (the OpenMP adapter, libhmbtrace-omp,
 * names OpenMP threads "thread <n>" by their OpenMP thread number). A probe reads the clock (the invariant TSC
 * where the CPU has one, else CLOCK_MONOTONIC: the same clock as hmbtrace's
 * Go probes) and writes its event into the thread's location in place: the
 * filters, the calling-depth bookkeeping, the exact profile and the encoding
 * of hmbtrace's Go probes, done in C, with no lock; messages and
 * collectives too. Rarer work (a full bin, a new depth or region) is handed
 * to the Go side at once. Under HMB_MIN_DURATION, HMB_CALLPATHS,
 * HMB_LISTEN, HMB_ENCODING_OFF or HMB_C_PROBE=staged a probe instead
 * appends 16 bytes to the thread's staging array; when that is full, when
 * the thread exits and at hmb_finalize, the staged probes are replayed into
 * the thread's location.
 *
 * Misuse never crashes: a probe with a region hmb_region did not return, a
 * leave without its enter, a leave of a region other than the innermost
 * one, are counted as usage errors in the trace (see `hmbtrace summary`) and
 * repaired as for Go probes. Probes after hmb_finalize, and probes while the
 * measurement could not start, are dropped and counted (hmb_dropped).
 *
 * Compiler instrumentation. A program compiled with -finstrument-functions
 * and linked with this library is traced with no source change: every
 * instrumented function becomes a region named by its ELF symbol (functions
 * whose address resolves to no symbol are named 0x<address>). The name
 * filter (HMB_FILTER_FILE) applies to these names. Link through
 * pkg-config's flags or the compiler prefix hmbtrace-instrument (which also
 * adds the flag, with system headers excluded): both make this library's
 * hooks win over glibc's no-op ones wherever they stand on the link line.
 *
 * Signals. With HMB_SIGNALS=1, SIGINT and SIGTERM run hmb_finalize (the
 * staged records included) and the process then dies of the signal. A
 * signal the process ignores when the measurement starts (a background
 * job's SIGINT) stays ignored. The handler restarts calls SA_RESTART
 * restarts (read, write, wait); sleep and nanosleep return early under any
 * handler, as POSIX has it.
 *
 * Limits. Probes are not async-signal-safe: do not call them from signal
 * handlers. A handler's probe that interrupts a probe of the same thread is
 * staged, or dropped and counted, and the trace stays readable, but it can
 * take the place of the probe it interrupted in the staging array (in a
 * test that signals a probing thread every 20 us: none in ten runs on the
 * direct path, up to one in a thousand staged). A handler's probe never
 * calls into Go on the alternate signal stack: one that needs to (a full
 * bin) waits in the thread's staging array for its next probe outside a
 * handler, or is dropped and counted when that array is full. Install
 * handlers that may interrupt probes with SA_ONSTACK, as Go requires. A handler
 * that runs on a thread of the library's Go runtime must not probe at all:
 * direct process-wide signals to your own threads. A child of fork()
 * is not traced: the library's runtime does not survive fork; exec starts
 * afresh. The child's probes are dropped and counted (hmb_dropped counts
 * the child's from 0), its hmb_finalize returns -1 if there were any, and
 * it says so once on stderr as it exits. HMB_METRICS is ignored for C probes: counters read when a
 * staged probe is replayed would count the wrong code. C++ names of
 * instrumented functions are demangled ("ns::f(int)").
 */
#ifndef HMBTRACE_H
#define HMBTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * hmb_init starts the measurement: it reads the HMB_* variables and sets up
 * the buffer. The first probe or hmb_region does it when the program does
 * not. It returns 0 on success, also when HMB_ENABLE=0 turned measurement
 * off (probes then do nothing), and when the measurement already runs; -1 if
 * it could not start (a malformed HMB_* value, the buffer, or hmb_finalize
 * was called before), with the reason in hmb_last_error. After a failure
 * probes are dropped and counted, and hmb_init may be called again.
 */
int hmb_init(void);

/*
 * hmb_region returns the region named name, defining it on first use. It is
 * idempotent (the same name gives the same id) and thread-safe, but costs a
 * call into the library's runtime: call it once per region and keep the id.
 * It returns 0, an id no probe accepts, when measurement is off or could not
 * start, or when name is NULL. When it is the call that starts the
 * measurement and the start fails, it says why on stderr, once. A name is
 * kept as bytes (invalid UTF-8 too); the line formats of the hmbtrace
 * commands show tabs, newlines, backslashes and control characters escaped.
 * Fortran's hmb_region takes the string up to a NUL: a trailing
 * c_null_char is fine, a NUL with text after it is an error (the text is lost).
 */
uint32_t hmb_region(const char *name);

/*
 * hmb_region_ex is hmb_region with the source file and line of the region's
 * code, recorded with its first definition (typically __FILE__, __LINE__).
 */
uint32_t hmb_region_ex(const char *name, const char *file, int line);

/*
 * hmb_region_paradigm is hmb_region for a region of a programming model's
 * runtime. The enters and leaves of HMB_PARADIGM_MPI and
 * HMB_PARADIGM_OPENMP regions go to the paradigm event class, which the
 * default depth reduction sheds, with messages and collectives, only after
 * every compute level it could close: an MPI call deep in the call tree
 * stays in the trace when the calls around it are shed. A region keeps the
 * paradigm of its first definition; a paradigm out of range returns 0.
 * Never throttled (HMB_THROTTLE).
 */
#define HMB_PARADIGM_USER 0
#define HMB_PARADIGM_COMPILER 1
#define HMB_PARADIGM_MPI 2
#define HMB_PARADIGM_OPENMP 3
uint32_t hmb_region_paradigm(const char *name, int paradigm);

/* hmb_region_paradigm_ex is hmb_region_paradigm with the source file and line of the region's code. */
uint32_t hmb_region_paradigm_ex(const char *name, const char *file, int line, int paradigm);

/*
 * hmb_code_at names the code at addr for the adapters of programming models
 * (the OpenMP adapter names a parallel region by the function the compiler
 * outlined for it): the readable name of the function that contains addr,
 * as -finstrument-functions regions are named, into name (nsize bytes with
 * the NUL, cut if longer), and the source file and line of addr itself into
 * file and *line ("" and 0 without debug info); for a call's return address
 * minus one that is the line of the call. It returns 1 if a symbol contains
 * addr, else 0 with name "0x<addr>". It starts the measurement if nothing
 * did, and costs a call into the library's runtime: cache what it returns.
 */
int hmb_code_at(const void *addr, char *name, size_t nsize, char *file, size_t fsize, int *line);

/*
 * HMB_PROBE_CALL makes GCC call the region probes through the GOT rather
 * than the PLT in position-independent code (its noplt; Debian's GCC makes
 * PIE by default): one jump less per call, most of what a throttled
 * region's probe costs beyond an empty call. Other compilers call as usual.
 */
#if defined(__has_attribute)
#if __has_attribute(noplt)
#define HMB_PROBE_CALL __attribute__((noplt))
#endif
#endif
#ifndef HMB_PROBE_CALL
#define HMB_PROBE_CALL
#endif

/*
 * hmb_enter records that the calling thread enters region. A region whose
 * calls on the thread were nearly all shorter than HMB_THROTTLE_TIME (at
 * most 1 in 256 long after 1024 visits, 1 in 8 after HMB_THROTTLE_CALLS) is
 * throttled (HMB_THROTTLE=0: never): its probes then
 * count the visit, read no clock and record nothing. A signal handler may
 * probe; install it with SA_ONSTACK, since the library's Go code may be
 * running on the thread it interrupts (Go's rule for handlers of C code).
 */
void hmb_enter(uint32_t region) HMB_PROBE_CALL;

/*
 * hmb_leave records that the calling thread leaves region, which should be
 * the region it entered last. Leaving an enclosing region leaves the ones
 * entered after it implicitly; leaving a region that is not open is
 * ignored. Both are counted as usage errors.
 */
void hmb_leave(uint32_t region) HMB_PROBE_CALL;

/*
 * The throttled regions' fast path, inlined where the program calls
 * hmb_enter and hmb_leave: a throttled region's probe then makes no call
 * at all (a call into a shared object costs more than the 2 ns a
 * switched-off region may cost). Each thread's cache of the regions
 * throttled on it, and of the throttled functions the
 * -finstrument-functions hooks saw (libhmbtrace-hooks.a), is reached
 * through hmbtrace_throttle_v1, the library's pointer to the calling
 * thread's cache (NULL until the thread's first probe). A region the cache
 * does not hold goes to the library (hmbtrace_enter_miss_v1: hmb_enter
 * past the cache, which the inline path looked at already), which measures
 * it, or learns that it is throttled and fills the entry. The library
 * alone writes the entries; the inline path only counts a visit.
 *
 * The layout below is part of the ABI, and the variable's name carries its
 * version: a program compiled against this header and run with a library
 * of another layout fails to start, the dynamic loader naming
 * hmbtrace_throttle_v1 (or another _v1 name) undefined, rather than
 * misread the cache. Define
 * HMB_NO_INLINE_PROBES before including this header to call the library
 * every time (Fortran, dlsym and other languages always do).
 */
#define HMB_THROTTLE_ENTRIES 1024
struct hmbtrace_throttle_v1 {
	/* Throttled functions of the hooks, slot (address >> 4) % entries: the address (0: none), visits since. */
	struct {
		uint64_t addr;
		uint64_t after;
	} func[HMB_THROTTLE_ENTRIES];
	/* Throttled regions, slot region % entries: the region (an empty slot holds slot+1), visits since. */
	uint32_t region[HMB_THROTTLE_ENTRIES];
	uint64_t after[HMB_THROTTLE_ENTRIES];
};

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
/* Initial-exec: the program reaches the library's variable through one GOT entry and the thread pointer. */
extern __thread struct hmbtrace_throttle_v1 *hmbtrace_throttle_v1 __attribute__((tls_model("initial-exec")));

/*
 * hmbtrace_count_visit counts a visit in an entry of the cache in one
 * instruction on x86-64, which a signal handler's probe of the same thread
 * cannot split.
 */
static inline __attribute__((always_inline, no_instrument_function)) void hmbtrace_count_visit(uint64_t *n)
{
#if defined(__x86_64__)
	__asm__ __volatile__("addq $1, %0" : "+m"(*n));
#else
	(*n)++; /* a load, an add and a store: a signal handler's count in between is lost */
#endif
}

/* hmb_enter and hmb_leave for a region the inline path did not find in the cache. */
void hmbtrace_enter_miss_v1(uint32_t region) HMB_PROBE_CALL;
void hmbtrace_leave_miss_v1(uint32_t region) HMB_PROBE_CALL;

/*
 * hmbtrace_cached reads the region of slot i: an atomic load, so that a
 * loop of probes with no call in it still sees the library empty the slot
 * (hmb_finalize) rather than test a copy the compiler kept from before.
 */
static inline __attribute__((always_inline, no_instrument_function)) uint32_t
hmbtrace_cached(const struct hmbtrace_throttle_v1 *c, uint32_t i)
{
	return __atomic_load_n(&c->region[i], __ATOMIC_RELAXED);
}

#if !defined(HMB_NO_INLINE_PROBES)
static inline __attribute__((always_inline, no_instrument_function)) void hmbtrace_enter_inline(uint32_t region)
{
	struct hmbtrace_throttle_v1 *c = hmbtrace_throttle_v1;
	uint32_t i = region % HMB_THROTTLE_ENTRIES;
	if (__builtin_expect(c != NULL && hmbtrace_cached(c, i) == region, 1)) {
		hmbtrace_count_visit(&c->after[i]);
		return;
	}
	hmbtrace_enter_miss_v1(region);
}

static inline __attribute__((always_inline, no_instrument_function)) void hmbtrace_leave_inline(uint32_t region)
{
	struct hmbtrace_throttle_v1 *c = hmbtrace_throttle_v1;
	if (__builtin_expect(c != NULL && hmbtrace_cached(c, region % HMB_THROTTLE_ENTRIES) == region, 1)) {
		return;
	}
	hmbtrace_leave_miss_v1(region);
}

/*
 * Function-like: &hmb_enter and (hmb_enter)(r) still name the library's
 * functions; a declaration of one of them after this header must be
 * written void (hmb_enter)(uint32_t), or come with HMB_NO_INLINE_PROBES.
 */
#define hmb_enter(region) hmbtrace_enter_inline(region)
#define hmb_leave(region) hmbtrace_leave_inline(region)
#endif
#endif

/*
 * hmb_send and hmb_recv record a point-to-point message of bytes bytes with
 * tag tag, sent to or received from peer, an MPI world rank, at the
 * calling thread's current calling depth.
 */
void hmb_send(int peer, uint32_t tag, uint64_t bytes);
void hmb_recv(int peer, uint32_t tag, uint64_t bytes);

/*
 * hmb_enter_collective enters region, a collective operation (MPI_Bcast,
 * MPI_Allreduce, ...) whose root is the world rank root (-1 if it has none)
 * and in which this process contributes or receives bytes bytes; leave it
 * with hmb_leave. Its enter and leave belong to the collective event class,
 * which HMB_REDUCTION=class may shed before enter and leave; calls entered
 * inside it go with it.
 */
void hmb_enter_collective(uint32_t region, int root, uint64_t bytes);

/*
 * Communicators and requests, as an MPI wrapper records them (issue 16).
 * Peers and roots are world ranks (-1 root: none); comm is an id from
 * hmb_comm_define, 0 for none (readers take a rank peer's message without
 * one as on MPI_COMM_WORLD). Every send and receive, blocking or not, is
 * also counted in the location's exact communication matrix, at the probe,
 * whatever the buffer later sheds.
 *
 * hmb_comm_define records the creation of a communicator: its name
 * ("MPI_COMM_WORLD", "MPI_COMM_SELF", or NULL or "" for a derived one), the
 * communicator it was made from (0 for world and self), its members as
 * world ranks in the order of its own ranks, and for an inter-communicator
 * (nremote > 0) the remote group, members being the local group. It
 * returns the id probes take, >= 1; 0 if measurement is off or the
 * definition is invalid (a parent not defined, a negative rank; the reason
 * in hmb_last_error). Thread-safe; it calls into the library's runtime.
 * Define MPI_COMM_WORLD and MPI_COMM_SELF first, at MPI_Init.
 */
uint32_t hmb_comm_define(const char *name, uint32_t parent, const int32_t *members, int nmembers,
			 const int32_t *remote, int nremote);

/*
 * hmb_send_comm and hmb_recv_comm are hmb_send and hmb_recv on
 * communicator comm. They take the direct path as hmb_send does.
 */
void hmb_send_comm(int peer, uint32_t tag, uint64_t bytes, uint32_t comm);
void hmb_recv_comm(int peer, uint32_t tag, uint64_t bytes, uint32_t comm);

/*
 * A blocking MPI call in one probe less: hmb_enter_send enters region and
 * records a send (hmb_send_comm) inside it, as a wrapper does before
 * MPI_Send; hmb_recv_leave records a receive (hmb_recv_comm) and leaves
 * region, as a wrapper does after MPI_Recv returns. A peer < 0 records no
 * message (MPI_PROC_NULL, a failed call): the enter or leave alone.
 */
void hmb_enter_send(uint32_t region, int peer, uint32_t tag, uint64_t bytes, uint32_t comm);
void hmb_recv_leave(uint32_t region, int peer, uint32_t tag, uint64_t bytes, uint32_t comm);

/*
 * Non-blocking point-to-point. request names the operation from its start
 * to its completion: a number unique to the calling thread over the run,
 * which the caller chooses (a per-process counter), never an MPI_Request
 * value, which MPI reuses.
 *
 * hmb_isend: a send starts (MPI_Isend, or MPI_Start of a persistent send).
 * hmb_isend_complete: its request completes (in MPI_Wait, MPI_Test, ...).
 * hmb_irecv_request: a receive starts (MPI_Irecv, or MPI_Start of a
 * persistent receive). hmb_irecv: its request completes with the message
 * from peer. hmb_request_cancelled: a request was cancelled.
 *
 * These, and the non-blocking collectives below, take the direct path as
 * hmb_send does: written in place by the probe. Where it cannot be taken
 * (the first message to a peer, which adds its line to the matrix; a full
 * bin) the record is replayed in Go at once, and under the staging
 * settings it is staged as 64 bytes.
 */
void hmb_isend(int peer, uint32_t tag, uint64_t bytes, uint32_t comm, uint64_t request);
void hmb_isend_complete(uint64_t request);
void hmb_irecv_request(uint64_t request);
void hmb_irecv(int peer, uint32_t tag, uint64_t bytes, uint32_t comm, uint64_t request);
void hmb_request_cancelled(uint64_t request);

/*
 * hmb_enter_collective_comm is hmb_enter_collective with the bytes sent
 * (contributed) and received, and the communicator. It takes the direct
 * path as hmb_enter_collective does.
 */
void hmb_enter_collective_comm(uint32_t region, int root, uint64_t sent, uint64_t received, uint32_t comm);

/*
 * Non-blocking collectives. hmb_collective_request records the request,
 * inside the region of the call that starts the operation (entered with
 * hmb_enter, e.g. MPI_Iallreduce); hmb_collective_complete records where
 * it completes (in MPI_Wait, ...): region is the call that started it, and
 * root, sent, received and comm describe it as for
 * hmb_enter_collective_comm.
 */
void hmb_collective_request(uint64_t request);
void hmb_collective_complete(uint32_t region, int root, uint64_t sent, uint64_t received, uint32_t comm,
			     uint64_t request);

/*
 * Tasks that can be suspended and resumed, on another thread too (OpenMP
 * explicit tasks: the OpenMP adapter calls these). hmb_task_create records
 * the creation of a task on the calling thread, inside the region that
 * creates it, and returns its id: unique in the process over the run, never
 * 0. hmb_task_switch records that the calling thread now runs task, which
 * starts or resumes here (0: the thread's implicit task, its own code in its
 * innermost team); hmb_task_complete that task completed on it. The task's
 * regions are entered and left on the thread that runs them, as any other,
 * between the switch to the task and the switch away from it. Each is a
 * record of the OpenMP paradigm's class at the calling depth; the OTF2
 * export writes ThreadTaskCreate, ThreadTaskSwitch and ThreadTaskComplete.
 * hmb_task_create and hmb_task_switch(0) cost about a C probe each (written
 * in place by the calling thread, as hmb_enter); hmb_task_switch to a task
 * and hmb_task_complete are a call into Go each, which keeps what resumes a
 * task that hmb_task_suspend may stop: use the _tied forms for the others.
 */
uint64_t hmb_task_create(void);
void hmb_task_switch(uint64_t task);
void hmb_task_complete(uint64_t task);

/*
 * hmb_task_switch_tied and hmb_task_complete_tied are hmb_task_switch and
 * hmb_task_complete for a tied task: one never suspended with
 * hmb_task_suspend (OpenMP's tied tasks; every task of GCC's libgomp). They
 * cost about a C probe each. A task takes one form or the other for its
 * whole life.
 */
void hmb_task_switch_tied(uint64_t task);
void hmb_task_complete_tied(uint64_t task);

/*
 * hmb_task_direct_records returns how many task records the calling thread
 * wrote in place (the C probes' direct path) rather than through Go: for
 * tests and benchmarks.
 */
uint64_t hmb_task_direct_records(void);

/*
 * hmb_task_suspend records that task, which the calling thread runs, stops
 * with regions open that it entered since the thread's last switch to it,
 * and will resume from elsewhere (another thread, or another scheduling
 * point): an untied task whose code returned to the scheduler. The thread
 * leaves those regions now, and the switch that resumes the task, on any
 * thread, enters them again, so that every thread's regions stay nested.
 */
void hmb_task_suspend(uint64_t task);

/*
 * One-sided communication (MPI windows), as libhmbtrace-mpi records it,
 * after OTF2's RMA records (Knuepfer et al. for Score-P). Ranks are world
 * ranks; -1 is all of the window's processes (MPI_Win_lock_all) or none.
 *
 * hmb_win_define records the creation of a window on communicator comm
 * (an id of hmb_comm_define) and returns the id RMA records take, >= 1; 0
 * if measurement is off or comm is not defined (the reason in
 * hmb_last_error). hmb_win_name names it (MPI_Win_set_name).
 * hmb_rma_group_define returns the id of the group of processes whose
 * world ranks are given, in the order of the group's ranks (the group of
 * MPI_Win_post or MPI_Win_start): the same members give the same id. These
 * three call into the library's runtime and are thread-safe.
 *
 * hmb_rma records an RMA event of kind HMB_RMA_* at the calling thread's
 * current depth: win, the target rank, bytes sent and received, id (the
 * matching id that ties an operation to its completion, or a lock's id),
 * aux (a lock, atomic or sync type, or a collective operation: OTF2's
 * numbering, HMB_RMA_LOCK_*, ...), level (HMB_RMA_LEVEL_* bits) and group,
 * each meaningful for the kinds OTF2 gives it (see encode/rma.go). It is
 * replayed in Go at once on a thread whose probes are direct, else staged
 * as an MPI record; like messages, RMA events are kept longest. A kind out
 * of HMB_RMA_WIN_CREATE..HMB_RMA_OP_COMPLETE_REMOTE is dropped and counted
 * (hmb_dropped).
 */
#define HMB_RMA_WIN_CREATE 20
#define HMB_RMA_WIN_DESTROY 21
#define HMB_RMA_COLLECTIVE_BEGIN 22
#define HMB_RMA_COLLECTIVE_END 23
#define HMB_RMA_GROUP_SYNC 24
#define HMB_RMA_REQUEST_LOCK 25
#define HMB_RMA_ACQUIRE_LOCK 26
#define HMB_RMA_TRY_LOCK 27
#define HMB_RMA_RELEASE_LOCK 28
#define HMB_RMA_SYNC 29
#define HMB_RMA_WAIT_CHANGE 30
#define HMB_RMA_PUT 31
#define HMB_RMA_GET 32
#define HMB_RMA_ATOMIC 33
#define HMB_RMA_OP_COMPLETE_BLOCKING 34
#define HMB_RMA_OP_COMPLETE_NON_BLOCKING 35
#define HMB_RMA_OP_TEST 36
#define HMB_RMA_OP_COMPLETE_REMOTE 37

#define HMB_RMA_LOCK_EXCLUSIVE 0
#define HMB_RMA_LOCK_SHARED 1
#define HMB_RMA_ATOMIC_ACCUMULATE 0
#define HMB_RMA_ATOMIC_COMPARE_AND_SWAP 3
#define HMB_RMA_ATOMIC_FETCH_AND_ACCUMULATE 7
#define HMB_RMA_SYNC_MEMORY 0
#define HMB_RMA_LEVEL_NONE 0
#define HMB_RMA_LEVEL_PROCESS 1
#define HMB_RMA_LEVEL_MEMORY 2
#define HMB_RMA_COLL_BARRIER 0
#define HMB_RMA_COLL_CREATE_HANDLE 17
#define HMB_RMA_COLL_DESTROY_HANDLE 18
#define HMB_RMA_COLL_CREATE_HANDLE_AND_ALLOCATE 21
#define HMB_RMA_COLL_DESTROY_HANDLE_AND_DEALLOCATE 22

uint32_t hmb_win_define(uint32_t comm);
void hmb_win_name(uint32_t win, const char *name);
uint32_t hmb_rma_group_define(const int32_t *members, int nmembers);
void hmb_rma(unsigned kind, uint32_t win, int remote, uint64_t bytes, uint64_t received, uint64_t id, uint32_t aux,
	     uint32_t level, uint32_t group);

/*
 * hmb_phase declares region as the progress loop: each of its leaves, on
 * any thread, ends one iteration of that thread's dynamic phase profile
 * (as HMB_PHASE does by name). A measurement has one phase region.
 */
void hmb_phase(uint32_t region);

/*
 * hmb_set_rank sets the process's rank in a parallel run: the trace file is
 * HMB_OUTPUT/<name>.<rank>.hmb. An MPI wrapper calls it at MPI_Init; until
 * then (or without it) the rank is HMB_RANK, else the launcher's world rank
 * (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID, ...), else 0.
 * If that name holds the trace of a process that ran at the same time, it is
 * kept, and this one is written to <name>.<rank>.pid<PID>.hmb with a line on
 * stderr.
 */
void hmb_set_rank(int rank);

/* hmb_clock returns the current time in the ticks the probes use. */
uint64_t hmb_clock(void);

/* hmb_start_ticks returns hmb_clock() at the start of the measurement (0 without one). */
uint64_t hmb_start_ticks(void);

/*
 * hmb_clock_sync records that at local time ticks (of hmb_clock) the clock
 * of the reference process (rank 0 of an MPI run) read ticks + offset, and
 * that the reference's measurement started at reference_start in its own
 * clock. Readers map this process's times onto the reference's with these
 * points; one at the start and one at the end also correct drift.
 */
void hmb_clock_sync(uint64_t ticks, int64_t offset, uint64_t reference_start);

/*
 * hmb_thread_name names the calling thread's location ("thread <tid>" by
 * default). The trace carries the last name given.
 */
void hmb_thread_name(const char *name);

/*
 * hmb_thread_team records the calling thread's place in OpenMP's thread
 * teams in its location's definition (the OpenMP adapter calls it with the
 * name): its thread number in each of the levels enclosing teams, from the
 * outermost in (at most 16 kept). The trace carries the last place given;
 * readers group a nested team's threads under the thread that forked it.
 */
void hmb_thread_team(int levels, const int *numbers);

/*
 * hmb_finalize ends the measurement: it takes every thread's staged probes,
 * leaves the regions still open, and writes the trace file. Threads may
 * still be probing: their probes up to that moment are in the trace, later
 * ones are dropped and counted (hmb_dropped). It returns 0 on success and -1
 * on failure (the reason in hmb_last_error); a second call returns the first
 * one's result. The library registers it with atexit at hmb_init.
 */
int hmb_finalize(void);

/*
 * hmb_last_error returns the message of the last failure of hmb_init,
 * hmb_region or hmb_finalize, or of the last usage error of the probes (a
 * leave of a region not open, an undefined region, ...), whichever came
 * last; "" if there was none. The probes count usage errors and go on; at
 * exit one line on stderr says how many there were. The string stays valid
 * for the life of the process.
 */
const char *hmb_last_error(void);

/*
 * hmb_dropped returns how many probes the library dropped without
 * replaying them into a location: after hmb_finalize, while the
 * measurement could not start, or in a signal handler that re-entered a
 * probe or found its thread's staging array full. They
 * cannot be in the trace file; when there are any at exit, the library
 * says so on stderr with the count of each cause, e.g. "hmbtrace: 3 probes
 * dropped, not in the trace: 3 after the measurement ended".
 */
uint64_t hmb_dropped(void);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_H */
