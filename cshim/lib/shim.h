/*
 * shim.h - internals of libhmbtrace's C side, shared by its C files and
 * the Go exports (exports.go). Not installed.
 *
 * An enter, leave, message or collective takes the direct path of direct.h
 * where it can. Else a probe appends one record (two for a message or a
 * collective, HMB_MPI_RECORDS for one with a communicator or a request) to
 * its thread's staging array and publishes the new end with
 * a release store; nothing else. The slow path (array full, first probe of
 * a thread, thread exit, finalize, and at once for a thread on the direct
 * path) replays the staged records into the thread's Go location.
 */
#ifndef HMBTRACE_SHIM_H
#define HMBTRACE_SHIM_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HMB_NOINST __attribute__((no_instrument_function))
#define HMB_HIDDEN __attribute__((visibility("hidden")))

/*
 * hmb_record is one staged probe. word holds the kind in its top 4 bits and
 * the region id or function address below; a message's second record holds
 * the peer in time and the byte count in word, a collective's the root and
 * the byte count. An MPI record (HMB_KIND_MPI: a message or collective with
 * a communicator, a request's record) holds its encode.Kind in word and
 * takes HMB_MPI_RECORDS records: peer or root in [1].time, tag and comm<<32
 * in [1].word, bytes in [2].time, request in [2].word, received bytes in
 * [3].time, region in [3].word. The layout and the kinds are mirrored by
 * cshim.Record in Go.
 */
typedef struct hmb_record {
	uint64_t time;
	uint64_t word;
} hmb_record;

enum {
	HMB_KIND_SHIFT = 60,
	HMB_KIND_ENTER = 1,
	HMB_KIND_LEAVE = 2,
	HMB_KIND_FUNC_ENTER = 3,
	HMB_KIND_FUNC_EXIT = 4,
	HMB_KIND_SEND = 5,
	HMB_KIND_RECV = 6,
	HMB_KIND_COLL = 7,
	HMB_KIND_MPI = 8,
	HMB_MPI_RECORDS = 4,
};
/* The encode.Kind values of the MPI records (encode/record.go), in an MPI record's word;
 * exports.go checks them against Go's at compile time. */
enum {
	HMB_ENC_SEND = 3,
	HMB_ENC_RECV = 4,
	HMB_ENC_COLLECTIVE = 6,
	HMB_ENC_ISEND = 7,
	HMB_ENC_ISEND_COMPLETE = 8,
	HMB_ENC_IRECV_REQUEST = 9,
	HMB_ENC_IRECV = 10,
	HMB_ENC_REQUEST_CANCELLED = 11,
	HMB_ENC_COLL_REQUEST = 12,
	HMB_ENC_COLL_COMPLETE = 13,
	HMB_ENC_TASK_CREATE = 14,
	HMB_ENC_TASK_SWITCH = 15,
	HMB_ENC_TASK_COMPLETE = 16,
	HMB_ENC_TASK_SUSPEND = 17,
};

#define HMB_PAYLOAD_MASK ((UINT64_C(1) << HMB_KIND_SHIFT) - 1)

/* Nesting levels of OpenMP teams a thread's place keeps (hmb_thread_team). */
#define HMB_TEAM_LEVELS 16

/* No Go location yet (hmbgo_thread failed, or was not called). */
#define HMB_NO_INDEX UINT32_MAX

/* Depths whose direct drops a thread counts itself; deeper ones go through Go. */
#define HMB_DIRECT_DEPTHS 128
/* Entries of a thread's cache of function regions (-finstrument-functions). */
#define HMB_FUNC_CACHE 1024
/* Entries of a thread's cache of the regions throttled on its location (hmb_enter, hmb_leave). */
#define HMB_THR_CACHE 1024
/*
 * What an empty slot i of that cache holds: no region of that slot (region % HMB_THR_CACHE != i), not even 0.
 * A new thread's slots but slot 0 hold 0, no region of theirs either: registering writes one page, not four.
 */
#define HMB_THR_EMPTY(i) ((uint32_t)(i) + 1)
#define HMB_THR_IS_EMPTY(i, r) ((r) % HMB_THR_CACHE != (uint32_t)(i))

struct hmb_go_location; /* direct.h */

/*
 * hmb_thread is a C thread's staging state. cur and end are the probes'
 * fields: the owner advances cur with release stores and probes until end;
 * hmb_finalize reads cur with an acquire load and moves end back to buf to
 * stop the probes' fast path. Everything else is guarded by lock.
 *
 * The large arrays come first and the small fields last, next to the
 * first staging array (runtime.c, hmb_thread_mem): a new thread touches
 * the page of its small fields and first records, and its cache's slot 0.
 */
struct hmb_thread {
	uint64_t drops[HMB_DIRECT_DEPTHS];  /* enters and leaves at closed depths, for Go */
	uint64_t mdrops[HMB_DIRECT_DEPTHS]; /* messages at closed depths or class */
	uint64_t cdrops[HMB_DIRECT_DEPTHS]; /* collectives' records at closed depths or class */
	/*
	 * A region throttled on the thread's location is off for the rest of
	 * the run, so its probes need none of the location: the caches below
	 * say which regions are, as the probes learnt it (direct.h,
	 * hmb_thr_learn), and count their visits since in C memory that
	 * outlives the location, with no mark, clock or Go memory. The counts
	 * go into the location's profile (its after) when an entry is
	 * replaced, when the thread exits and at hmb_finalize (runtime.c).
	 * Owner only, and hmb_finalize once the thread's direct path is shut.
	 */
	struct hmb_func {
		uint64_t addr;   /* function address, 0: none */
		uint32_t region; /* its region, 0: not known */
	} funcs[HMB_FUNC_CACHE]; /* slot (addr >> 4) % HMB_FUNC_CACHE */
	struct hmb_thr_func {
		uint64_t addr; /* funcs[slot].addr if its region is throttled, else 0 */
		uint64_t after;
	} thr_funcs[HMB_FUNC_CACHE];
	/* Slot region % HMB_THR_CACHE: the region, or HMB_THR_EMPTY(slot), and its count. */
	uint32_t thr_region[HMB_THR_CACHE];
	uint64_t thr_after[HMB_THR_CACHE];
	uint64_t thr_taken;    /* visits of both caches hmb_finalize took from their counts (under lock) */

	_Alignas(64) _Atomic(hmb_record *) cur;
	_Atomic(hmb_record *) end;
	/* The direct path (direct.h): owner only, but for hmb_finalize's wait on in_direct. */
	_Atomic int in_direct;
	struct hmb_go_location *loc;       /* the pinned Go location, NULL: no direct path */
	_Atomic(uint64_t) *epoch_word;     /* the pool's epoch */
	size_t ndrops;                      /* drops, mdrops, cdrops[0..ndrops) may be non-zero */
	int flush_next;                     /* a collective is staged: the next probe replays it */

	pthread_mutex_t lock;
	hmb_record *buf; /* the staging array; NULL once the thread exited */
	size_t cap;      /* its length in records */
	size_t window;   /* records it stages before its location is made (runtime.c, hmb_locate) */
	hmb_record *cut; /* closed: records from here on came after hmb_finalize */
	hmb_record *taken; /* NULL, or the collective end replayed the array up to here (runtime.c, hmb_take_staged) */
	uint32_t index;  /* the Go location, HMB_NO_INDEX until it exists */
	long tid;
	char *name;  /* from hmb_thread_name, or NULL */
	int team_levels;                 /* from hmb_thread_team, 0: none */
	int team[HMB_TEAM_LEVELS];
	int closed;  /* hmb_finalize took its records */
	int exited;  /* its thread-exit destructor ran */
	int interrupted; /* hmb_finalize found it stopped inside a direct probe */
	_Atomic int in_slow; /* owner only (and its signal handlers): a probe is in the slow path */
	int go_way;          /* how its calls into Go are made: HMB_GO_UNDECIDED, _OWN or _PROXIED (goproxy.c) */
	uintptr_t stack_lo;  /* the thread's own stack, stack_size bytes from here; 0, 0 if not known (sigstack.c) */
	size_t stack_size;
	struct hmb_thread *next;
} __attribute__((aligned(64)));

/* The hooks index both function caches by the address's bits 4..13 as an offset (probes.c). */
_Static_assert(sizeof(struct hmb_func) == 16 && sizeof(struct hmb_thr_func) == 16, "16-byte function cache entries");
_Static_assert((HMB_FUNC_CACHE & (HMB_FUNC_CACHE - 1)) == 0 && (HMB_THR_CACHE & (HMB_THR_CACHE - 1)) == 0,
	       "caches of a power of two entries");

/*
 * hmb_go_thread is set on the library's own threads, which run none of the
 * program's code: those the Go runtime made (gothreads.c) and goproxy.c's
 * proxies.
 */
extern __thread int hmb_go_thread __attribute__((tls_model("initial-exec"))) HMB_HIDDEN;
/*
 * hmb_in_go counts the calls into Go the calling thread is inside. A signal
 * handler's probe that interrupts one must not call into Go again (Go
 * cannot take a callback on a thread that runs Go code: "exitsyscall:
 * syscall frame is no longer valid"), so the slow path drops it then.
 * HMB_GO(call) makes such a call with the count raised, and, on the
 * alternate signal stack (a handler's call), with the thread's
 * asynchronous signals blocked (sigstack.c).
 */
extern __thread int hmb_in_go __attribute__((tls_model("initial-exec"))) HMB_HIDDEN;
extern __thread struct hmb_thread *hmb_self
	__attribute__((tls_model("initial-exec"))) HMB_HIDDEN;
/* hmb_stack_bounds reads the calling thread's own stack into th (sigstack.c). */
void hmb_stack_bounds(struct hmb_thread *th) HMB_NOINST HMB_HIDDEN;
/*
 * hmb_signal_stack_ask asks the kernel whether the calling thread runs on
 * its alternate signal stack; hmb_on_signal_stack asks only when the stack
 * pointer is not in th's own stack (th NULL: not registered). A signal
 * handler runs there, and its calls into Go must be made with care
 * (sigstack.c).
 */
int hmb_signal_stack_ask(void) HMB_NOINST HMB_HIDDEN;
HMB_NOINST static inline int hmb_on_signal_stack(struct hmb_thread *th)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if (__builtin_expect(th != NULL && sp - th->stack_lo < th->stack_size, 1)) {
		return 0;
	}
	return hmb_signal_stack_ask();
}
/* hmb_go_block_signals blocks the calling thread's asynchronous signals, keeping the old mask in *old; 0 if it failed. */
int hmb_go_block_signals(sigset_t *old) HMB_NOINST HMB_HIDDEN;
struct hmb_go_guard {
	int blocked;
	sigset_t old;
};
HMB_NOINST static inline void hmb_go_begin(struct hmb_go_guard *g)
{
	hmb_in_go++;
	g->blocked = hmb_on_signal_stack(hmb_self) && hmb_go_block_signals(&g->old);
}
HMB_NOINST static inline void hmb_go_done(struct hmb_go_guard *g)
{
	/* Counted down first: a signal that waited may call into Go itself, below this frame. */
	hmb_in_go--;
	if (g->blocked) {
		pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	}
}
#define HMB_GO(call)                                                                                                   \
	({                                                                                                             \
		struct hmb_go_guard hmb_go_guard_ __attribute__((cleanup(hmb_go_done)));                               \
		hmb_go_begin(&hmb_go_guard_);                                                                          \
		(call);                                                                                                \
	})

/*
 * hmb_go_via makes fn(arg), a call into Go, on the calling thread if it may
 * take a Go runtime thread (an M) of its own, else on one of goproxy.c's
 * proxy threads while the caller waits: a team of 1,024 threads calling Go
 * at once waits seconds for Ms. The way is the caller's, whichever
 * thread the call is for (hmb_finalize makes other threads' calls).
 * hmb_go_own decides the calling thread's way, th being its structure, and
 * reports whether it calls Go itself. hmb_go_gone forgets th's way at its
 * exit; hmb_go_forked resets the proxy in a child of fork.
 */
enum { HMB_GO_UNDECIDED = 0, HMB_GO_OWN = 1, HMB_GO_PROXIED = 2 };
void hmb_go_via(void (*fn)(void *), void *arg) HMB_NOINST HMB_HIDDEN;
int hmb_go_own(struct hmb_thread *th) HMB_NOINST HMB_HIDDEN;
void hmb_go_gone(struct hmb_thread *th) HMB_NOINST HMB_HIDDEN;
void hmb_go_forked(void) HMB_NOINST HMB_HIDDEN;
extern int hmb_use_tsc HMB_HIDDEN;

void hmb_slow(uint64_t word, uint64_t ext_time, uint64_t ext_word, int n) HMB_NOINST HMB_HIDDEN;
/*
 * hmb_stage_collective stages a collective for a thread on the direct path,
 * to be replayed with its next probe (flush_next), guarded against signal
 * handlers like the slow path.
 */
void hmb_stage_collective(uint64_t word, uint64_t ext_time, uint64_t ext_word) HMB_NOINST HMB_HIDDEN;
/* hmb_stage_collective for a probe of n records (rec[0].time is set here). */
void hmb_stage_collective_n(hmb_record *rec, int n) HMB_NOINST HMB_HIDDEN;
/*
 * hmb_slow_n is hmb_slow_at for a probe of n records, at most
 * HMB_MPI_RECORDS: rec[0].time is the probe's time (0: read it).
 */
void hmb_slow_n(hmb_record *rec, int n) HMB_NOINST HMB_HIDDEN;
void hmb_send_comm_at(uint64_t t, int peer, uint32_t tag, uint64_t bytes, uint32_t comm) HMB_NOINST HMB_HIDDEN;

/*
 * hmb_stage_recs stages a probe of n records on a thread that stages (the
 * fast path of hmb_stage_n, for any n), else takes the slow path.
 */
void hmb_stage_recs(hmb_record *rec, int n) HMB_NOINST HMB_HIDDEN;
/* hmb_slow for a probe that read the clock already (t; 0: read it). */
void hmb_slow_at(uint64_t t, uint64_t word, uint64_t ext_time, uint64_t ext_word, int n) HMB_NOINST HMB_HIDDEN;
uint32_t hmb_region_n(const char *name, size_t nlen, const char *file, int line, int paradigm) HMB_NOINST HMB_HIDDEN;

/*
 * hmb_exiting says that the process is ending with functions still running:
 * exit called inside them (Fortran's STOP in a subroutine) or MPI_Abort.
 * hmb_finalize then leaves the regions still open without counting them as
 * usage errors.
 */
void hmb_exiting(void) HMB_NOINST;

/*
 * Why a probe was dropped. The report at exit gives the count of each
 * cause, so that a number on stderr says where to look: a total alone
 * hid a wrapper's defect (records of no known kind) behind a list of
 * every cause there is.
 */
enum hmb_drop_why {
	HMB_DROP_ENDED,        /* after the measurement ended (hmb_finalize) */
	HMB_DROP_NOT_MEASURED, /* while the measurement could not start or had failed */
	HMB_DROP_SIGNAL,       /* a signal handler's, interrupting a probe or a call into Go */
	HMB_DROP_STAGING_FULL, /* the thread's staging array full and unable to grow */
	HMB_DROP_GO_THREAD,    /* on a thread of the library's Go runtime */
	HMB_DROP_INTERRUPTED,  /* on a thread stopped inside a probe when the measurement ended */
	HMB_DROP_UNDECODED,    /* staged records the Go side could not decode */
	HMB_DROP_MPI,          /* MPI events the wrappers could not record */
	HMB_DROP_MPI_ACTIVE,   /* completions of MPI requests active at MPI_Finalize or freed while active */
	HMB_DROP_INTERNAL,     /* records of no known kind: a defect of the library */
	HMB_DROP_FORKED,       /* in a child of fork */
	HMB_DROP_WHYS
};

/*
 * hmb_count_dropped counts n probes, for the reason why, that
 * libhmbtrace-mpi or the probes could not record (out of memory, a
 * receive that completed where no wrapper saw it): they are reported with
 * the library's own (hmb_dropped).
 */
void hmb_count_dropped(enum hmb_drop_why why, uint64_t n) HMB_NOINST;

/*
 * hmb_drops_now copies the probes dropped so far, by cause. The collective
 * end of an MPI run sums them over the ranks, and rank 0 says the run's
 * once (hmb_drop_causes_of); hmb_drops_said then tells each rank the
 * counts said for it (by, from hmb_drops_now), so that its report at exit
 * names only what it dropped afterwards: one line for the run, not one per
 * rank.
 */
void hmb_drops_now(uint64_t by[HMB_DROP_WHYS]) HMB_NOINST;
void hmb_drops_said(const uint64_t by[HMB_DROP_WHYS]) HMB_NOINST;

/* hmb_drop_causes_of writes into buf each cause's count of by: "12 after ..., 3 in ...". */
void hmb_drop_causes_of(const uint64_t by[HMB_DROP_WHYS], char *buf, size_t size) HMB_NOINST;

/*
 * The collective end of an MPI run (libhmbtrace-mpi's MPI_Finalize wrapper,
 * measure's archive.go). hmb_run_end says whether the ranks write a run
 * archive (HMB_OUTPUT_LAYOUT), how many ranks share one file
 * (HMB_AGGREGATE) and how long each step waits for the other ranks
 * (HMB_COLLECTIVE_TIMEOUT); it returns 0 when the measurement does not
 * record. With begin set, the collective end begins: the calling thread's
 * staged records go to its location first (making it), since the end's
 * results are the rank's events so far. hmb_slot_capacity returns the bytes this rank's slot needs, its
 * trace now with the margin for what runs after MPI_Finalize, in a run of
 * world ranks. hmb_archive_create, called by a group's first rank, creates
 * the group's file for the n ranks given, each asking for its capacity, and
 * sets their slot offsets in order; -1 with hmb_last_error on failure (the
 * ranks then write their own files). hmb_archive_slot makes hmb_finalize
 * write this rank's trace into its slot at off. hmb_synced_ns sets *ns to
 * ticks (of hmb_clock) as ns since rank 0's start on its clock, as the
 * rank's file will have them (HMB_COLLECTIVE_TIMING's arrival); 0 before a
 * clock sync.
 */
int hmb_synced_ns(uint64_t ticks, int64_t *ns) HMB_NOINST;
int hmb_run_end(int begin, int *archive, int *aggregate, int64_t *timeout_ns) HMB_NOINST;
int64_t hmb_slot_capacity(int world) HMB_NOINST;
int hmb_archive_create(int group, int groups, int world, const int32_t *ranks, const int64_t *capacity, int n,
		       int64_t *offsets) HMB_NOINST;
void hmb_archive_slot(int group, int groups, int world, int64_t off, int64_t capacity) HMB_NOINST;

/*
 * The passes of the collective end: each reduces one kind of payload up
 * the ranks' binomial tree (cshim/runresults.go says what each holds).
 * hmb_pass_make sets *out to this rank's part (malloc'd, *n bytes; the
 * caller frees it), given what came down the tree before (in, or NULL);
 * hmb_pass_merge merges b (bn bytes), the part of the ranks after this
 * rank's running merge, into that merge: the one Go holds when held, else
 * a, this rank's own part; the result stays in Go (held), so a rank with
 * several children writes and reads its running merge never between
 * them; hmb_pass_held sets *out to the running merge, written, to send
 * up the tree, and lets it go; hmb_pass_set gives the root's measurement
 * the run's (the running merge when held, else p), for the archive's
 * results, and sets *next to what the next pass sends down the tree
 * (NULL, 0 when nothing); hmb_pass_end releases what the passes kept.
 * They return -1 with hmb_last_error on failure, 0 otherwise; a merge
 * that failed leaves what was held.
 */
enum hmb_pass {
	HMB_PASS_PROFILE = 1, /* summary.RunProfile */
	HMB_PASS_COMM,	      /* comm.Part: the exact communication matrix */
	HMB_PASS_CHOICE,      /* variation.Choice: the time-dominant region */
	HMB_PASS_SEGMENTS,    /* variation.Segments, cut as the choice's Cut says */
	HMB_PASS_PHASES,      /* trend.InSitu: the phase series */
	HMB_PASS_REPLAY,      /* the wait-state replay's rounds (cshim/replay.go), not merged */
	HMB_PASS_WAITSTATES,  /* waitstate.InSitu: the wait states replayed in-situ */
};
int hmb_pass_make(int pass, int rank, const char *in, size_t in_n, char **out, size_t *n) HMB_NOINST;
int hmb_pass_merge(int pass, const char *a, size_t an, int held, const char *b, size_t bn) HMB_NOINST;
int hmb_pass_held(int pass, char **out, size_t *n) HMB_NOINST;
int hmb_pass_set(int pass, const char *p, size_t n, int held, char **next, size_t *next_n) HMB_NOINST;
void hmb_pass_end(void) HMB_NOINST;

/*
 * hmb_results_only says whether the collective end writes only the run's
 * results (HMB_OUTPUT_EVENTS=none): rank 0 an archive of them, created
 * with hmb_archive_create of no ranks; hmb_results_written, once it did,
 * makes every rank's exit write nothing.
 */
int hmb_results_only(void) HMB_NOINST;
void hmb_results_written(int world) HMB_NOINST;

/*
 * The unification of the run's definitions at the collective end, in the
 * same tree: hmb_run_definitions sets *out to this rank's tables now
 * (malloc'd, *n bytes); hmb_run_defs_merge, hmb_run_defs_held and
 * hmb_run_set_definitions merge them, send them up and give rank 0's
 * measurement the run's, for the archive, as hmb_pass_merge,
 * hmb_pass_held and hmb_pass_set do a pass's parts. -1 with
 * hmb_last_error on failure.
 */
int hmb_run_definitions(char **out, size_t *n) HMB_NOINST;
int hmb_run_defs_merge(const char *a, size_t an, int held, const char *b, size_t bn) HMB_NOINST;
int hmb_run_defs_held(char **out, size_t *n) HMB_NOINST;
int hmb_run_set_definitions(const char *p, size_t n, int held) HMB_NOINST;

/*
 * hmb_flush_staged replays the calling thread's staged records now (task
 * suspension), making its location first if it has none (a thread given
 * its team place: its probes are then direct from the first).
 */
void hmb_flush_staged(void) HMB_NOINST HMB_HIDDEN;
/* For the definitions of rma.c: hmb_def_ready starts the measurement if
 * nothing did and tells whether it takes definitions; hmb_def_error keeps
 * and frees an error message from Go. */
int hmb_def_ready(void) HMB_NOINST HMB_HIDDEN;
void hmb_def_error(char *err) HMB_NOINST HMB_HIDDEN;

/* Called by the Go side's init: calls into Go no longer wait forever. */
void hmb_shim_go_ready(void) HMB_NOINST;

/* For the Fortran module: strings come as C descriptors (ISO_Fortran_binding.h). */
void hmb_init_f(int *ierr) HMB_NOINST;
void hmb_finalize_f(int *ierr) HMB_NOINST;

/*
 * hmb_clock_read reads the clock the Go side reads: the TSC if tsc (on
 * x86-64), else CLOCK_MONOTONIC in ns. Each library says which it was
 * told: libhmbtrace in hmb_use_tsc, libhmbtrace-mpi in its own state.
 */
HMB_NOINST static inline uint64_t hmb_clock_read(int tsc)
{
#if defined(__x86_64__)
	if (__builtin_expect(tsc, 1)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	(void)tsc;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* hmb_now reads the clock the Go side reads. */
HMB_NOINST static inline uint64_t hmb_now(void)
{
	return hmb_clock_read(hmb_use_tsc);
}

/*
 * hmb_stage_n records a probe of n records (1, or 2 for a message or a
 * collective): the probes' fast path. The second record, ext_time and
 * ext_word, is not timed. n is a constant at every call: at -O2 each probe
 * compiles to what it did when hmb_stage and hmb_stage2 were two copies of
 * this code.
 */
HMB_NOINST static inline void hmb_stage_n(int n, uint64_t word, uint64_t ext_time, uint64_t ext_word)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL, 1)) {
		hmb_record *p = atomic_load_explicit(&th->cur, memory_order_relaxed);
		if (__builtin_expect(p + (n - 1) < atomic_load_explicit(&th->end, memory_order_relaxed), 1)) {
			p[0].time = hmb_now();
			p[0].word = word;
			if (n == 2) {
				p[1].time = ext_time;
				p[1].word = ext_word;
			}
			atomic_store_explicit(&th->cur, p + n, memory_order_release);
			return;
		}
	}
	hmb_slow(word, ext_time, ext_word, n);
}

/* hmb_stage records a probe of one record. */
HMB_NOINST static inline void hmb_stage(uint64_t word)
{
	hmb_stage_n(1, word, 0, 0);
}

/* hmb_stage2 records a probe of two records (a message or a collective). */
HMB_NOINST static inline void hmb_stage2(uint64_t word, uint64_t ext_time, uint64_t ext_word)
{
	hmb_stage_n(2, word, ext_time, ext_word);
}

#endif /* HMBTRACE_SHIM_H */
