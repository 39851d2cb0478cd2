/*
 * runtime.c - the slow path of the C probes: the measurement's state, the
 * registry of threads and their staging arrays, the replay of staged records
 * into Go, hmb_init and hmb_finalize.
 *
 * Lock order: hmb_mu (state changes, registry), then a thread's lock (its
 * staging array and location). A thread never takes hmb_mu while it holds
 * its own lock. The direct path (direct.h) takes no lock: hmb_finalize
 * stops it with a membarrier before it takes the threads' records.
 *
 * Go readiness: a call into Go before the Go runtime of the library was
 * started by its constructor blocks forever, and instrumented code may run
 * earlier (constructors of the program, or of other libraries). Until the
 * Go side's init has said it is ready, probes only stage, and the arrays
 * grow instead of being replayed.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hmbtrace.h"
#include "shim.h"
#include "direct.h"
#include "_cgo_export.h"

extern char **environ;

/*
 * Records of a thread's staging array: 64 KiB, replayed in one call into Go.
 * (-DHMB_STAGING_RECORDS=n changes it, to measure the staging on its own.)
 */
#ifndef HMB_STAGING_RECORDS
#define HMB_STAGING_RECORDS 4096
#endif
/* Before Go is ready an array grows instead, up to this many records (16 MiB). */
#define HMB_PREREADY_MAX_RECORDS (1u << 20)
/*
 * How long hmb_init and hmb_finalize wait for the Go runtime to be ready, and
 * how long the first probe of the process does: long enough for Go's start
 * (a few ms), short enough for a constructor that runs before it.
 */
#define HMB_READY_TIMEOUT_NS (5 * 1000000000LL)
#define HMB_PROBE_READY_TIMEOUT_NS (200 * 1000000LL)

/* The measurement's states. */
enum {
	ST_UNINIT,    /* hmb_init has not run: probes stage */
	ST_RUNNING,   /* measuring */
	ST_DISABLED,  /* HMB_ENABLE=0: probes do nothing */
	ST_FAILED,    /* hmb_init failed: probes are dropped and counted */
	ST_CLOSING,   /* hmb_finalize is taking the threads' records */
	ST_FINALIZED, /* the trace is written: probes are dropped and counted */
	ST_FORKED,    /* a child of fork: the Go runtime is not there, probes do nothing */
};

__thread struct hmb_thread *hmb_self __attribute__((tls_model("initial-exec")));

/*
 * hmbtrace_throttle_v1 points at the thread's caches of throttled regions
 * and functions (hmb_thread's thr_funcs, thr_region, thr_after), for the
 * inline probes of hmbtrace.h and the hooks of libhmbtrace-hooks.a: the
 * public struct is a view of those three fields, whose layout it fixes.
 */
__thread struct hmbtrace_throttle_v1 *hmbtrace_throttle_v1 __attribute__((tls_model("initial-exec")));
_Static_assert(HMB_THROTTLE_ENTRIES == HMB_THR_CACHE && HMB_THROTTLE_ENTRIES == HMB_FUNC_CACHE,
	       "hmbtrace.h's cache size is the library's");
_Static_assert(offsetof(struct hmb_thread, thr_region) - offsetof(struct hmb_thread, thr_funcs) ==
			       offsetof(struct hmbtrace_throttle_v1, region) &&
		       offsetof(struct hmb_thread, thr_after) - offsetof(struct hmb_thread, thr_funcs) ==
			       offsetof(struct hmbtrace_throttle_v1, after) &&
		       offsetof(struct hmb_thread, thr_taken) - offsetof(struct hmb_thread, thr_funcs) ==
			       sizeof(struct hmbtrace_throttle_v1),
	       "hmbtrace_throttle_v1 is the layout of hmb_thread's caches");
_Static_assert(sizeof(((struct hmbtrace_throttle_v1 *)0)->func[0]) == sizeof(struct hmb_thr_func) &&
		       offsetof(struct hmb_thr_func, addr) == 0 && offsetof(struct hmb_thr_func, after) == 8,
	       "hmbtrace_throttle_v1's function entries are hmb_thr_func");
int hmb_use_tsc;

static pthread_mutex_t hmb_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int hmb_state = ST_UNINIT;
/* Set by hmb_init (HMB_SURVIVE): every thread makes its location at its first probe (hmb_locate). */
static int hmb_locate_early;
static struct hmb_thread *hmb_threads, *hmb_threads_tail; /* guarded by hmb_mu */
static int hmb_final_result;                               /* guarded by hmb_mu */
static _Atomic uint64_t hmb_dropped_by[HMB_DROP_WHYS]; /* probes dropped, by cause (hmb_dropped sums them) */
static _Atomic int hmb_at_exit; /* hmb_exiting: open regions are where the process exits */
static const char *_Atomic hmb_error = "";

static pthread_once_t hmb_once = PTHREAD_ONCE_INIT;
static pthread_key_t hmb_key;
static int hmb_key_ok;

static pthread_mutex_t hmb_ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hmb_ready_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int hmb_go_ready;

static void hmb_thread_exit(void *arg) HMB_NOINST;
static void hmb_atexit_finalize(void) HMB_NOINST;
static void hmb_atexit_report(void) HMB_NOINST;

/* hmb_error_ns is when hmb_error was set (CLOCK_MONOTONIC), to order it
 * against the usage errors the Go side notes (hmb_last_error). */
static _Atomic uint64_t hmb_error_ns;

HMB_NOINST static uint64_t hmb_monotonic_ns(void);

HMB_NOINST static void hmb_set_error_at(const char *msg, uint64_t ns)
{
	char *copy = strdup(msg);
	if (copy != NULL) {
		/* The old message is left to readers that may still hold it. */
		atomic_store(&hmb_error, copy);
		atomic_store(&hmb_error_ns, ns);
	}
}

HMB_NOINST static void hmb_set_error(const char *msg)
{
	hmb_set_error_at(msg, hmb_monotonic_ns());
}

/*
 * hmb_user_error is hmb_set_error for a failure of a call the program
 * made (hmb_region and the like, which hold no lock): the thread's staged
 * probes are replayed first, so that a usage error among them, which came
 * before in the program, is not taken for the later one.
 */
HMB_NOINST static void hmb_user_error(const char *msg)
{
	if (atomic_load(&hmb_state) == ST_RUNNING) {
		hmb_flush_staged();
	}
	hmb_set_error(msg);
}

HMB_NOINST static void hmb_drop(enum hmb_drop_why why, uint64_t n)
{
	if (n > 0) {
		atomic_fetch_add_explicit(&hmb_dropped_by[why < HMB_DROP_WHYS ? why : HMB_DROP_INTERNAL], n,
					  memory_order_relaxed);
	}
}

/* hmb_dropped_total is the count of probes dropped, all causes. */
HMB_NOINST static uint64_t hmb_dropped_total(void)
{
	uint64_t n = 0;
	for (int i = 0; i < HMB_DROP_WHYS; i++) {
		n += atomic_load_explicit(&hmb_dropped_by[i], memory_order_relaxed);
	}
	return n;
}

/* hmb_drop_state is the cause of a drop that the measurement's state decides: ended or never running. */
HMB_NOINST static enum hmb_drop_why hmb_drop_state(void)
{
	int st = atomic_load(&hmb_state);
	return st == ST_FINALIZED || st == ST_CLOSING ? HMB_DROP_ENDED : HMB_DROP_NOT_MEASURED;
}

/* What the report at exit says of each cause's count. */
static const char *const hmb_drop_text[HMB_DROP_WHYS] = {
	[HMB_DROP_ENDED] = "after the measurement ended",
	[HMB_DROP_NOT_MEASURED] = "while the measurement could not start or had failed",
	[HMB_DROP_SIGNAL] = "in signal handlers that interrupted a probe or a call into Go",
	[HMB_DROP_STAGING_FULL] = "with the thread's staging array full",
	[HMB_DROP_GO_THREAD] = "on threads of the library's Go runtime",
	[HMB_DROP_INTERRUPTED] = "on threads stopped inside a probe when the measurement ended",
	[HMB_DROP_UNDECODED] = "staged records the library could not decode",
	[HMB_DROP_MPI] = "MPI events the wrappers could not record (out of memory, a rank, communicator or window "
			 "they could not translate)",
	[HMB_DROP_MPI_ACTIVE] = "completions of MPI requests still active at MPI_Finalize or freed while active",
	[HMB_DROP_INTERNAL] = "records of no known kind (a defect of hmbtrace: please report it)",
	[HMB_DROP_FORKED] = "in a child of fork",
};

/* hmb_drop_causes_of writes into buf each cause's count of by: "12 after ..., 3 in ...". */
HMB_NOINST void hmb_drop_causes_of(const uint64_t by[HMB_DROP_WHYS], char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < HMB_DROP_WHYS && at < size; i++) {
		if (by[i] > 0) {
			int k = snprintf(buf + at, size - at, "%s%llu %s", at > 0 ? ", " : "", (unsigned long long)by[i],
					 hmb_drop_text[i]);
			at = k < 0 ? size : at + (size_t)k;
		}
	}
}

HMB_NOINST void hmb_drops_now(uint64_t by[HMB_DROP_WHYS])
{
	for (int i = 0; i < HMB_DROP_WHYS; i++) {
		by[i] = atomic_load_explicit(&hmb_dropped_by[i], memory_order_relaxed);
	}
}

/* The drops the collective end of an MPI run said for this rank
 * (hmb_drops_said), and whether it did; the process's rank as
 * hmb_set_rank gave it, -1 without one: the report at exit names it. */
static uint64_t hmb_drops_told[HMB_DROP_WHYS];
static int hmb_drops_told_set, hmb_rank = -1;

HMB_NOINST void hmb_drops_said(const uint64_t by[HMB_DROP_WHYS])
{
	memcpy(hmb_drops_told, by, sizeof hmb_drops_told);
	hmb_drops_told_set = 1;
}

/*
 * hmb_events counts the probes among staged records: a message or collective takes two, an MPI
 * record HMB_MPI_RECORDS (cshim.Probes).
 */
HMB_NOINST static uint64_t hmb_events(const hmb_record *from, const hmb_record *to)
{
	uint64_t n = 0;
	for (const hmb_record *p = from; p < to; p++, n++) {
		unsigned kind = (unsigned)(p->word >> HMB_KIND_SHIFT);
		if (kind == HMB_KIND_SEND || kind == HMB_KIND_RECV || kind == HMB_KIND_COLL) {
			p++;
		} else if (kind == HMB_KIND_MPI) {
			p += HMB_MPI_RECORDS - 1;
		}
	}
	return n;
}

/*
 * hmb_setup runs once before any thread stages: it chooses the clock the way
 * the Go side does (HMB_CLOCK, else the TSC where it is invariant) and tells
 * Go at hmb_init, creates the key whose destructor flushes exiting threads,
 * and registers hmb_finalize to run at exit.
 */
HMB_NOINST static void hmb_setup(void)
{
	int tsc = 0;
#if defined(__x86_64__)
	unsigned a, b, c, d;
	tsc = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) != 0;
	const char *v = getenv("HMB_CLOCK");
	if (v != NULL) {
		while (*v == ' ' || *v == '\t') {
			v++;
		}
		if (strncmp(v, "monotonic", 9) == 0) {
			tsc = 0;
		}
	}
#endif
	hmb_use_tsc = tsc;
	hmb_key_ok = pthread_key_create(&hmb_key, hmb_thread_exit) == 0;
	/* atexit runs them in reverse: finalize first, then the report. */
	atexit(hmb_atexit_report);
	atexit(hmb_atexit_finalize);
}

/*
 * A child of fork() has the library's memory but not the Go runtime's
 * threads: calling into Go there would hang. The parent's trace is the
 * parent's; the child is not traced. Its probes are dropped and counted
 * (hmb_dropped counts the child's own, from 0), its hmb_finalize returns
 * -1 if it dropped any, and it says so once on stderr as it exits.
 */
static void hmb_forked(void) HMB_NOINST;
static void hmb_forked(void)
{
	atomic_store(&hmb_state, ST_FORKED);
	for (int i = 0; i < HMB_DROP_WHYS; i++) {
		atomic_store(&hmb_dropped_by[i], 0);
	}
	/* The child's only thread: no lock, nobody else walks the list. */
	hmb_direct_on = 0;
	hmb_go_forked();
	for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
		th->loc = NULL;
		/* The throttled visits the caches counted are the parent's too; the child's go the slow way. */
		memset(th->thr_funcs, 0, sizeof th->thr_funcs);
		for (size_t i = 0; i < HMB_THR_CACHE; i++) {
			th->thr_region[i] = HMB_THR_EMPTY(i);
			th->thr_after[i] = 0;
		}
		th->thr_taken = 0;
		/* What the array holds is the parent's, which the parent replays. */
		th->cut = atomic_load_explicit(&th->cur, memory_order_relaxed);
		th->taken = NULL;
	}
}

/* hmb_forked_drop counts a child's probes staged in its thread's array since the last count. */
HMB_NOINST static void hmb_forked_drop(struct hmb_thread *th)
{
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	if (th->buf != NULL && th->cut != NULL && c > th->cut) {
		hmb_drop(HMB_DROP_FORKED, hmb_events(th->cut, c));
	}
	atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
	th->cut = th->buf;
}

__attribute__((constructor)) HMB_NOINST static void hmb_load(void)
{
	pthread_atfork(NULL, NULL, hmb_forked);
}

void hmb_shim_go_ready(void)
{
	pthread_mutex_lock(&hmb_ready_mu);
	atomic_store(&hmb_go_ready, 1);
	pthread_cond_broadcast(&hmb_ready_cond);
	pthread_mutex_unlock(&hmb_ready_mu);
}

/*
 * How long hmb_finalize waits for another thread to finish a direct probe:
 * the grace for a thread that does not run (stopped, or blocked in a
 * signal handler that interrupted the probe), the limit for one that is
 * runnable, which a loaded machine may leave waiting for a CPU longer
 * than the grace (TestHammerUnderFinalize on a busy 2-core VM).
 */
#define HMB_DIRECT_GRACE_NS (500 * 1000000LL)
#define HMB_DIRECT_LIMIT_NS (30 * 1000000000LL)

/*
 * hmb_runnable says whether thread tid of this process is running or
 * waiting for a CPU (state R in /proc), so that its direct probe will end.
 */
HMB_NOINST static int hmb_runnable(long tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return 0;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) {
		return 0;
	}
	buf[n] = 0;
	/* "tid (comm) S ...": the name may hold spaces and parentheses. */
	char *p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] == 'R';
}

HMB_NOINST static uint64_t hmb_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* hmb_wait_ready waits up to timeout ns for the Go runtime, reporting whether it is ready. */
HMB_NOINST static int hmb_wait_ready(long long timeout)
{
	if (atomic_load(&hmb_go_ready)) {
		return 1;
	}
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	long long ns = deadline.tv_nsec + timeout;
	deadline.tv_sec += ns / 1000000000LL;
	deadline.tv_nsec = ns % 1000000000LL;
	pthread_mutex_lock(&hmb_ready_mu);
	while (!atomic_load(&hmb_go_ready)) {
		if (pthread_cond_timedwait(&hmb_ready_cond, &hmb_ready_mu, &deadline) == ETIMEDOUT) {
			break;
		}
	}
	pthread_mutex_unlock(&hmb_ready_mu);
	return atomic_load(&hmb_go_ready);
}

HMB_NOINST static void hmb_not_ready(void)
{
	hmb_set_error("hmbtrace: the library's Go runtime did not start (called from a constructor "
		      "that runs before the library's own?)");
}

/*
 * Registering for private expedited membarriers (hmb_direct_start) costs
 * a process that has more than one thread an RCU grace period: 12-20 ms
 * here, most of a traced program's start (hmb_init took 16-27 ms, of which
 * the Go side 4). A process of one thread registers in microseconds, so
 * the library registers as it is loaded, before the Go runtime's
 * constructor starts its threads (a constructor of priority 101 runs
 * before those of default priority in the same object). hmb_mb_loaded
 * holds the outcome: 1 registered, -errno failed, 0 not tried (loaded into
 * a process that had threads already, by dlopen: hmb_direct_start
 * registers then).
 */
static int hmb_mb_loaded;

/* hmb_one_thread reports whether the process has a single thread. */
HMB_NOINST static int hmb_one_thread(void)
{
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return 0;
	}
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) {
		return 0;
	}
	buf[n] = 0;
	/* The command name may hold spaces and ')': fields count from the last ')'. */
	char *p = strrchr(buf, ')');
	if (p == NULL) {
		return 0;
	}
	/* num_threads is field 20; after ')' come fields 3, 4, ... */
	for (int field = 2; field < 20 && p != NULL; field++) {
		p = strchr(p + 1, ' ');
	}
	return p != NULL && strtol(p + 1, NULL, 10) == 1;
}

__attribute__((constructor(101))) HMB_NOINST static void hmb_mb_register(void)
{
	if (hmb_one_thread()) {
		hmb_mb_loaded = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1 : -errno;
	}
}

/*
 * hmb_direct_start says whether the probes may take the direct path:
 * hmb_finalize can stop them (membarrier). Otherwise they stage, and the
 * reason is told once. (That their view of the Go location is right is
 * checked when the library is built: golayout.h.)
 */
HMB_NOINST static int hmb_direct_start(void)
{
	int err = 0;
	if (hmb_mb_loaded < 0) {
		err = -hmb_mb_loaded;
	} else if (hmb_mb_loaded == 0 && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
		err = errno;
	}
	if (err != 0) {
		fprintf(stderr, "hmbtrace: membarrier: %s: the C probes stage their records instead of writing them\n",
			strerror(err));
		return 0;
	}
	return 1;
}

/*
 * hmb_init_locked starts the Go side. lazy says a probe or another call
 * asked, not the program's hmb_init: its failure is then told on stderr,
 * since nobody else would. fn is the function whose -finstrument-functions
 * probe asked (0: none): the Go side reads the symbols of its object before
 * the probe's timestamp, where it would otherwise check the executable for
 * calls of the hooks first.
 */
HMB_NOINST static int hmb_init_locked(int lazy, uint64_t fn)
{
	switch (atomic_load(&hmb_state)) {
	case ST_RUNNING:
	case ST_DISABLED:
		return 0;
	case ST_CLOSING:
	case ST_FINALIZED:
		hmb_set_error("hmbtrace: hmb_init after hmb_finalize: a process writes one trace");
		return -1;
	case ST_FORKED:
		hmb_set_error("hmbtrace: hmb_init in a child of fork: only the parent measures");
		return -1;
	}
	pthread_once(&hmb_once, hmb_setup);
	/* The Go runtime copied the environment at load time; hand it the current HMB_* values. */
	int n = 0;
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		n += strncmp(*e, "HMB_", 4) == 0;
	}
	char **env = calloc((size_t)n + 1, sizeof *env);
	if (env == NULL) {
		hmb_set_error("hmbtrace: hmb_init: out of memory");
		atomic_store(&hmb_state, ST_FAILED);
		return -1;
	}
	n = 0;
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, "HMB_", 4) == 0) {
			env[n++] = *e;
		}
	}
	char *err = NULL;
	int direct = 0;
	int rc = HMB_GO(hmbgo_start(env, n, hmb_use_tsc, fn, &err, &direct, &hmb_locate_early));
	free(env);
	if (rc < 0) {
		hmb_set_error(err != NULL ? err : "hmbtrace: hmb_init failed");
		if (lazy) {
			fprintf(stderr, "%s (probes are dropped)\n", atomic_load(&hmb_error));
		}
		free(err);
		atomic_store(&hmb_state, ST_FAILED);
		return -1;
	}
	if (rc == 1 && direct) {
		hmb_direct_on = hmb_direct_start();
	}
	atomic_store_explicit(&hmb_state, rc == 1 ? ST_RUNNING : ST_DISABLED, memory_order_release);
	return 0;
}

/*
 * hmb_start starts the measurement for hmb_init (implicit 0), whose caller
 * gets the error, or for another call that needs it running (implicit 1),
 * whose failure is then told on stderr, once: the state stays failed.
 */
HMB_NOINST static int hmb_start(int implicit)
{
	if (atomic_load(&hmb_state) == ST_FORKED) {
		return hmb_init_locked(0, 0); /* which only says no: hmb_mu may be held by a thread of the parent */
	}
	if (!hmb_wait_ready(HMB_READY_TIMEOUT_NS)) {
		hmb_not_ready();
		return -1;
	}
	pthread_mutex_lock(&hmb_mu);
	int rc = hmb_init_locked(implicit, 0);
	pthread_mutex_unlock(&hmb_mu);
	return rc;
}

HMB_NOINST int hmb_init(void)
{
	return hmb_start(0);
}

/*
 * hmb_lazy_init starts the measurement for a probe. The first probe of the
 * process waits a little for Go, so that the measurement starts before the
 * probes' timestamps (the Go runtime of a library starts in a thread of its
 * own, while main may already run); later ones, and the first if Go did not
 * come, stage without waiting. fn: the function a probe enters, else 0.
 */
HMB_NOINST static void hmb_lazy_init(uint64_t fn)
{
	static _Atomic int waited;
	if (!atomic_load(&hmb_go_ready) && !atomic_exchange(&waited, 1)) {
		hmb_wait_ready(HMB_PROBE_READY_TIMEOUT_NS);
	}
	if (atomic_load(&hmb_go_ready) && atomic_load(&hmb_state) == ST_UNINIT) {
		pthread_mutex_lock(&hmb_mu);
		if (atomic_load(&hmb_state) == ST_UNINIT) {
			hmb_init_locked(1, fn);
		}
		pthread_mutex_unlock(&hmb_mu);
	}
}

/*
 * A thread's structure and its first staging array, carved from chunks of
 * HMB_THREAD_CHUNK mapped at once. Not malloc: a thread's first malloc
 * makes it an arena of its own (a read of /sys/devices/system/cpu/online,
 * a 64 MiB mapping and an mprotect, under the process's mapping lock that
 * every page fault takes too), and a team of 1,024 threads registering at
 * once queued there. The pages are zero, so only those a thread touches
 * are ever backed; structures are never given back (an exited thread's
 * stays in the list), its staging array's pages are (hmb_release).
 */
#define HMB_THREAD_CHUNK 64
#define HMB_NAME_INLINE 48
struct hmb_thread_mem {
	struct hmb_thread th; /* its small fields last, in the page of name and buf's first records */
	char name[HMB_NAME_INLINE]; /* th's name when it fits: no malloc, a thread's first of which costs */
	hmb_record buf[HMB_STAGING_RECORDS];
};
static pthread_mutex_t hmb_thread_mem_mu = PTHREAD_MUTEX_INITIALIZER;
static struct hmb_thread_mem *hmb_thread_chunk;
static size_t hmb_thread_chunk_used = HMB_THREAD_CHUNK;

/* hmb_thread_mem returns a zeroed structure and staging array, or NULL. */
HMB_NOINST static struct hmb_thread_mem *hmb_thread_mem(void)
{
	pthread_mutex_lock(&hmb_thread_mem_mu);
	if (hmb_thread_chunk_used == HMB_THREAD_CHUNK) {
		void *p = mmap(NULL, HMB_THREAD_CHUNK * sizeof(struct hmb_thread_mem), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			pthread_mutex_unlock(&hmb_thread_mem_mu);
			return NULL;
		}
		hmb_thread_chunk = p;
		hmb_thread_chunk_used = 0;
	}
	struct hmb_thread_mem *m = &hmb_thread_chunk[hmb_thread_chunk_used++];
	pthread_mutex_unlock(&hmb_thread_mem_mu);
	return m;
}

/* hmb_inline_name returns the room for thread th's name that came with it. */
HMB_NOINST static char *hmb_inline_name(struct hmb_thread *th)
{
	return ((struct hmb_thread_mem *)(void *)th)->name;
}

/* hmb_first_buf returns thread th's first staging array, which came with it. */
HMB_NOINST static hmb_record *hmb_first_buf(struct hmb_thread *th)
{
	return ((struct hmb_thread_mem *)(void *)th)->buf;
}

/*
 * How many records a thread stages before it makes its location (but a
 * program's own thread that calls Go itself): enough for a team's first
 * regions, few enough that its probes soon take the direct path and that
 * replaying them costs little more than that path would have.
 */
#define HMB_FIRST_WINDOW 64

/*
 * hmb_register gives the calling thread its staging array, or returns
 * NULL; by_probe says a probe registers it, not hmb_thread_name or
 * hmb_thread_team. It sets the thread's window (hmb_locate).
 */
HMB_NOINST static struct hmb_thread *hmb_register(int by_probe)
{
	pthread_once(&hmb_once, hmb_setup);
	struct hmb_thread_mem *mem = hmb_thread_mem();
	if (mem == NULL) {
		return NULL;
	}
	struct hmb_thread *th = &mem->th;
	hmb_record *buf = mem->buf;
	th->thr_region[0] = HMB_THR_EMPTY(0); /* the others hold 0 (shim.h) */
	pthread_mutex_init(&th->lock, NULL);
	th->buf = buf;
	th->cap = HMB_STAGING_RECORDS;
	th->window = hmb_locate_early || (by_probe && hmb_go_own(th)) ? 0 : HMB_FIRST_WINDOW;
	th->index = HMB_NO_INDEX;
	th->tid = (long)syscall(SYS_gettid);
	hmb_stack_bounds(th);
	atomic_init(&th->cur, buf);
	atomic_init(&th->end, buf + (th->window > 0 ? th->window : th->cap));

	pthread_mutex_lock(&hmb_mu);
	int st = atomic_load(&hmb_state);
	if (st != ST_UNINIT && st != ST_RUNNING) {
		pthread_mutex_unlock(&hmb_mu);
		pthread_mutex_destroy(&th->lock);
		return NULL; /* its memory stays unused in its chunk: a rare case, at the end of a run */
	}
	if (hmb_threads_tail != NULL) {
		hmb_threads_tail->next = th;
	} else {
		hmb_threads = th;
	}
	hmb_threads_tail = th;
	pthread_mutex_unlock(&hmb_mu);

	if (hmb_key_ok) {
		pthread_setspecific(hmb_key, th);
	}
	hmb_self = th;
	hmbtrace_throttle_v1 = (struct hmbtrace_throttle_v1 *)(void *)th->thr_funcs;
	return th;
}

/*
 * A thread's location is made by its first call into Go that needs it,
 * not when the thread registers: hmb_register is C alone, and the thread
 * stages its records (its probes are not direct) until its first replay:
 * when it has staged its window of records, when a record must reach Go
 * at once, at its exit or at hmb_finalize. That call makes the location
 * and replays the records in one. Why: a C thread's first call into Go costs
 * the Go runtime a thread (an M) of its own, or costs the thread a trip
 * to goproxy.c's proxy, and a team of 1,024 threads starting at once paid
 * that in its first parallel region (85 us a thread, 2.9x the region's
 * plain time). Its records then stay exact: each waits in order in the
 * array. How many it stages first is its window, HMB_FIRST_WINDOW; none
 * for a thread that calls Go itself (goproxy.c) and registered by
 * probing (a program's own thread), and for all under HMB_SURVIVE, whose
 * events must be in the surviving mapping as they come
 * (hmb_locate_early): those make their location at their first probe,
 * direct from the first.
 */

/* The calls into Go a thread's location makes, each for hmb_go_via: its arguments and a function that calls. */
struct hmb_location_call {
	struct hmb_thread *th;
	int direct;
	void *loc, *epoch;
	hmb_record *from; /* records to replay into it once it exists, n of them */
	size_t n;
	uint64_t malformed;
};

/* hmb_location_go makes the thread's location if it has none, then replays the call's records. */
HMB_NOINST static void hmb_location_go(void *arg)
{
	struct hmb_location_call *c = arg;
	struct hmb_thread *th = c->th;
	if (th->index == HMB_NO_INDEX) {
		const char *name = th->name != NULL ? th->name : "";
		th->index = HMB_GO(hmbgo_thread(th->tid, (char *)name, strlen(name), c->direct, (int *)&th->in_direct, &c->loc, &c->epoch));
		if (th->index != HMB_NO_INDEX && th->team_levels > 0) {
			HMB_GO(hmbgo_thread_team(th->index, th->team_levels, th->team));
		}
	}
	if (th->index != HMB_NO_INDEX && (c->n > 0 || th->ndrops > 0)) {
		c->malformed = HMB_GO(hmbgo_replay(th->index, c->from, c->n, th->drops, th->mdrops, th->cdrops, th->ndrops));
	}
}

struct hmb_thread_call {
	struct hmb_thread *th;
	unsigned what; /* 0: thread_done, 1: thread_name, 2: thread_team, 3: func_region */
	uint64_t addr;
	uint32_t region;
};

HMB_NOINST static void hmb_thread_go(void *arg)
{
	struct hmb_thread_call *c = arg;
	struct hmb_thread *th = c->th;
	switch (c->what) {
	case 0:
		HMB_GO(hmbgo_thread_done(th->index));
		break;
	case 1:
		HMB_GO(hmbgo_thread_name(th->index, th->name, strlen(th->name)));
		break;
	case 2:
		HMB_GO(hmbgo_thread_team(th->index, th->team_levels, th->team));
		break;
	default:
		c->region = HMB_GO(hmbgo_func_region(th->index, c->addr));
	}
}

/* hmb_thread_call_go makes call what (struct hmb_thread_call) for th and returns its region. */
HMB_NOINST static uint32_t hmb_thread_call_go(struct hmb_thread *th, unsigned what, uint64_t addr)
{
	struct hmb_thread_call c = {.th = th, .what = what, .addr = addr};
	hmb_go_via(hmb_thread_go, &c);
	return c.region;
}

/*
 * hmb_locate_as makes sure the thread has its Go location (lock held), and,
 * for a thread that still probes, the pointers of its direct path unless
 * may_direct is 0; then it replays records [from, to) into it, in the same
 * call into Go. It reports whether the location exists; if not, the records
 * are counted as dropped.
 */
HMB_NOINST static int hmb_locate_as(struct hmb_thread *th, hmb_record *from, hmb_record *to, int may_direct)
{
	int located = th->index != HMB_NO_INDEX;
	if (located && from == to && th->ndrops == 0) {
		return 1;
	}
	/* Not direct for a thread hmb_finalize or its exit stopped probing. */
	struct hmb_location_call c = {
		.th = th,
		.direct = may_direct && hmb_direct_on && atomic_load(&hmb_state) == ST_RUNNING && !th->closed && !th->exited,
		.from = from,
		.n = (size_t)(to - from),
	};
	hmb_go_via(hmb_location_go, &c);
	if (th->index == HMB_NO_INDEX) {
		hmb_drop(hmb_drop_state(), hmb_events(from, to));
		return 0;
	}
	if (!located && c.loc != NULL && c.epoch != NULL) {
		th->epoch_word = c.epoch;
		th->loc = c.loc;
	}
	if (!located && th->buf != NULL && atomic_load_explicit(&th->end, memory_order_relaxed) != th->buf) {
		/* Past its window: the whole array, unless hmb_finalize closed it. */
		atomic_store_explicit(&th->end, th->buf + th->cap, memory_order_relaxed);
	}
	/* What Go could not decode is counted; the direct path's drops went first, before anything staged. */
	hmb_drop(HMB_DROP_UNDECODED, c.malformed);
	memset(th->drops, 0, th->ndrops * sizeof th->drops[0]);
	memset(th->mdrops, 0, th->ndrops * sizeof th->mdrops[0]);
	memset(th->cdrops, 0, th->ndrops * sizeof th->cdrops[0]);
	th->ndrops = 0;
	return 1;
}

/* hmb_locate is hmb_locate_as for the thread itself, or for hmb_finalize. */
HMB_NOINST static int hmb_locate(struct hmb_thread *th, hmb_record *from, hmb_record *to)
{
	return hmb_locate_as(th, from, to, 1);
}

/* hmb_location makes sure the thread has its Go location (lock held); see hmb_locate. */
HMB_NOINST static int hmb_location(struct hmb_thread *th)
{
	return hmb_locate(th, NULL, NULL);
}

/*
 * hmb_replay hands records to the thread's Go location, making it if
 * need be (lock held, measurement running or closing but not past this
 * thread). What Go could not decode is counted.
 */
HMB_NOINST static void hmb_replay(struct hmb_thread *th, hmb_record *from, hmb_record *to)
{
	if (from == to && th->ndrops == 0) {
		return;
	}
	hmb_locate(th, from, to);
}

/*
 * hmb_func_cache learns the region of the function at addr for the
 * thread's direct path (lock held), after its record was replayed.
 */
HMB_NOINST static void hmb_func_cache(struct hmb_thread *th, uint64_t addr)
{
	size_t i = (addr >> 4) % HMB_FUNC_CACHE;
	struct hmb_func *f = &th->funcs[i];
	if (th->loc == NULL || th->index == HMB_NO_INDEX || (f->addr == addr && f->region != 0)) {
		return;
	}
	uint32_t r = hmb_thread_call_go(th, 3, addr);
	if (r == 0) {
		return;
	}
	/*
	 * The entry is emptied first, then refilled, so that a signal
	 * handler's probe never finds the new address with the old region, or
	 * counts into it while its count goes to the profile.
	 */
	f->addr = 0;
	th->thr_funcs[i].addr = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (th->thr_funcs[i].after != 0) {
		hmb_thr_fold(th->loc, f->region, th->thr_funcs[i].after);
		th->thr_funcs[i].after = 0;
	}
	f->region = r;
	atomic_signal_fence(memory_order_seq_cst);
	f->addr = addr;
}

/*
 * hmb_thr_take empties the thread's caches of throttled regions (shim.h)
 * and takes the visits they counted: into the location's profile (fold),
 * or into the dropped count. own says the caller is the thread itself (its
 * exit, or the only thread of a child of fork), which clears the counts;
 * else (hmb_finalize, the thread's direct path shut) the owner may still
 * count a visit in an entry it looked at before it was emptied, so the
 * counts stay and thr_taken remembers what was taken: hmb_thr_late counts
 * the rest as dropped. Lock held.
 */
HMB_NOINST static void hmb_thr_take(struct hmb_thread *th, int fold, int own)
{
	uint64_t taken = 0, dropped = 0;
	for (size_t i = 0; i < HMB_FUNC_CACHE + HMB_THR_CACHE; i++) {
		uint32_t r;
		uint64_t *after;
		if (i < HMB_FUNC_CACHE) {
			if (th->thr_funcs[i].addr == 0) {
				continue; /* its count is 0 */
			}
			r = th->funcs[i].region;
			after = &th->thr_funcs[i].after;
			th->thr_funcs[i].addr = 0;
		} else {
			size_t k = i - HMB_FUNC_CACHE;
			r = th->thr_region[k];
			if (HMB_THR_IS_EMPTY(k, r)) {
				continue;
			}
			after = &th->thr_after[k];
			th->thr_region[k] = HMB_THR_EMPTY(k);
		}
		/* Emptied first: a signal handler's probe now takes the marked path. */
		atomic_signal_fence(memory_order_seq_cst);
		uint64_t n = __atomic_load_n(after, __ATOMIC_RELAXED);
		if (own) {
			*after = 0;
		}
		taken += n;
		if (fold && th->loc != NULL) {
			hmb_thr_fold(th->loc, r, n);
		} else {
			dropped += n;
		}
	}
	hmb_drop(HMB_DROP_ENDED, dropped);
	if (!own) {
		th->thr_taken += taken;
	}
}

/*
 * hmb_thr_late counts as dropped the visits a thread's owner counted in
 * its caches after hmb_finalize took them (hmb_thr_take): probes that
 * raced it, having looked at an entry before it was emptied. own: the
 * caller is the owner, which clears the counts. Lock held.
 */
HMB_NOINST static void hmb_thr_late(struct hmb_thread *th, int own)
{
	uint64_t n = 0;
	for (size_t i = 0; i < HMB_FUNC_CACHE; i++) {
		n += __atomic_load_n(&th->thr_funcs[i].after, __ATOMIC_RELAXED);
		if (own) {
			th->thr_funcs[i].after = 0;
		}
	}
	for (size_t i = 0; i < HMB_THR_CACHE; i++) {
		n += __atomic_load_n(&th->thr_after[i], __ATOMIC_RELAXED);
		if (own) {
			th->thr_after[i] = 0;
		}
	}
	hmb_drop(HMB_DROP_ENDED, n - th->thr_taken);
	th->thr_taken = own ? 0 : n;
}

/*
 * hmb_count_late counts, for a thread that hmb_finalize closed, the records
 * its owner staged after the cut (lock held).
 */
HMB_NOINST static void hmb_count_late(struct hmb_thread *th)
{
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	if (th->cut != NULL && c > th->cut) {
		hmb_drop(HMB_DROP_ENDED, hmb_events(th->cut, c));
	}
	th->cut = c;
}

/* hmb_grow doubles a staging array that cannot be replayed yet (lock held). */
HMB_NOINST static int hmb_grow(struct hmb_thread *th)
{
	if (th->cap >= HMB_PREREADY_MAX_RECORDS) {
		return 0;
	}
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	size_t used = (size_t)(c - th->buf);
	hmb_record *first = hmb_first_buf(th);
	hmb_record *nb = th->buf == first ? malloc(2 * th->cap * sizeof *nb) : realloc(th->buf, 2 * th->cap * sizeof *nb);
	if (nb == NULL) {
		return 0;
	}
	if (th->buf == first) {
		memcpy(nb, first, used * sizeof *nb);
	}
	th->buf = nb;
	th->cap *= 2;
	atomic_store_explicit(&th->cur, nb + used, memory_order_relaxed);
	atomic_store_explicit(&th->end, nb + th->cap, memory_order_relaxed);
	return 1;
}

/* hmb_release frees a thread's staging array; its probes then go straight to Go (lock held). */
HMB_NOINST static void hmb_release(struct hmb_thread *th)
{
	th->loc = NULL;
	hmb_record *first = hmb_first_buf(th);
	if (th->buf != first) {
		free(th->buf);
	}
	/* The whole pages of the first array go back to the system; they read as zero if touched again. */
	uintptr_t from = ((uintptr_t)first + 4095) & ~(uintptr_t)4095, to = (uintptr_t)(first + HMB_STAGING_RECORDS) & ~(uintptr_t)4095;
	if (to > from) {
		madvise((void *)from, to - from, MADV_DONTNEED);
	}
	th->buf = NULL;
	th->cut = NULL;
	th->taken = NULL;
	atomic_store(&th->cur, NULL);
	atomic_store(&th->end, NULL);
}

/*
 * hmb_settle ends a take of the collective end (hmb_take_staged) on the
 * owner's side (owner, lock held): the records staged since, from taken
 * on, move to the array's start, and its fast path opens again. Only the
 * owner may move them: a probe of its own that began before the take may
 * still be writing at taken.
 */
HMB_NOINST static void hmb_settle(struct hmb_thread *th)
{
	hmb_record *t = th->taken;
	if (__builtin_expect(t == NULL, 1)) {
		return;
	}
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	size_t n = (size_t)(c - t);
	memmove(th->buf, t, n * sizeof *t);
	th->taken = NULL;
	atomic_store_explicit(&th->cur, th->buf + n, memory_order_relaxed);
	atomic_store_explicit(&th->end, th->buf + th->cap, memory_order_relaxed);
}

/* hmb_unreplayed is where the thread's records not yet in Go begin (lock held). */
HMB_NOINST static hmb_record *hmb_unreplayed(const struct hmb_thread *th)
{
	return th->taken != NULL ? th->taken : th->buf;
}

/*
 * hmb_take_staged replays into Go, at the collective end of an MPI run,
 * what the process's other threads staged and did not replay: a thread
 * that is not direct keeps its records in its array until it fills or
 * the thread probes past its first window (a brief OpenMP region's
 * workers, which then idle), and the run's results, reduced from the
 * locations, lacked them while the trace held them. The owner may probe
 * meanwhile, without a lock: its fast path is shut (end at the array's
 * start) and the records replayed are remembered (taken); whatever it
 * stages from there on, its next slow path moves to the array's start
 * (hmb_settle). A location made here has no direct path: its pointers are
 * the owner's to read without a lock, so the thread keeps staging.
 */
HMB_NOINST static void hmb_take_staged(void)
{
	pthread_mutex_lock(&hmb_mu);
	if (atomic_load(&hmb_state) == ST_RUNNING) {
		for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
			if (th == hmb_self) {
				continue;
			}
			pthread_mutex_lock(&th->lock);
			if (th->buf != NULL && !th->closed && !th->exited && th->loc == NULL && th->taken == NULL &&
			    atomic_load_explicit(&th->cur, memory_order_relaxed) != th->buf) {
				atomic_store_explicit(&th->end, th->buf, memory_order_relaxed);
				/* Everything below c is whole: the owner publishes cur after its records. */
				hmb_record *c = atomic_load_explicit(&th->cur, memory_order_acquire);
				hmb_locate_as(th, th->buf, c, 0);
				th->taken = c;
			}
			pthread_mutex_unlock(&th->lock);
		}
	}
	pthread_mutex_unlock(&hmb_mu);
}

/*
 * hmb_stage_at appends records rec[0..n) to the thread's array at c, its
 * current end (lock held); on a direct thread, its next probe replays them
 * (flush_next, direct.h).
 */
HMB_NOINST static void hmb_stage_at(struct hmb_thread *th, hmb_record *c, const hmb_record *rec, int n)
{
	for (int i = 0; i < n; i++) {
		c[i] = rec[i];
	}
	if (th->loc != NULL) {
		th->flush_next = 1;
	}
	atomic_store_explicit(&th->cur, c + n, memory_order_release);
}

/* hmb_slow_locked is the slow path of a probe with a registered thread (lock held). */
HMB_NOINST static void hmb_slow_locked(struct hmb_thread *th, const hmb_record *rec, int n)
{
	if (th->closed) {
		hmb_count_late(th);
		hmb_drop(HMB_DROP_ENDED, 1);
		return;
	}
	hmb_settle(th);
	int st = atomic_load_explicit(&hmb_state, memory_order_acquire);
	if (th->buf == NULL) {
		/* The thread exited and its array is gone; a destructor still probes. */
		if (st == ST_RUNNING || st == ST_CLOSING) {
			hmb_replay(th, (hmb_record *)rec, (hmb_record *)rec + n);
		} else if (st != ST_DISABLED) {
			hmb_drop(HMB_DROP_ENDED, 1);
		}
		return;
	}
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	switch (st) {
	case ST_UNINIT: /* Go is not ready: keep everything */
		if (c + n > th->buf + th->cap && !hmb_grow(th)) {
			hmb_drop(HMB_DROP_STAGING_FULL, 1);
			return;
		}
		break;
	case ST_RUNNING:
	case ST_CLOSING:
		if (th->index == HMB_NO_INDEX && c + n <= th->buf + th->cap) {
			if (!hmb_locate_early && c + n <= th->buf + th->window) {
				break; /* its location waits for its first replay: staged */
			}
			/* Past its window: staged too, and the location made with their replay, in one call into Go. */
			for (int i = 0; i < n; i++) {
				c[i] = rec[i];
			}
			hmb_replay(th, th->buf, c + n);
			atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
			return;
		}
		if (th->index == HMB_NO_INDEX) {
			/* Full: the location is made with the array's replay, in one call into Go. */
			hmb_replay(th, th->buf, c);
			atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
			c = th->buf;
		}
		if (hmb_location(th) && th->loc != NULL) {
			/* A direct thread: the record goes to Go now with the rest,
			 * so that the array is empty and the direct path open again. */
			if (c + n > th->buf + th->cap) {
				hmb_replay(th, th->buf, c);
				c = th->buf;
			}
			for (int i = 0; i < n; i++) {
				c[i] = rec[i];
			}
			hmb_replay(th, th->buf, c + n);
			atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
			th->flush_next = 0;
			unsigned kind = (unsigned)(rec[0].word >> HMB_KIND_SHIFT);
			if (kind == HMB_KIND_FUNC_ENTER || kind == HMB_KIND_FUNC_EXIT) {
				hmb_func_cache(th, rec[0].word & HMB_PAYLOAD_MASK);
			}
			return;
		}
		hmb_replay(th, th->buf, c);
		atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
		break;
	case ST_FORKED:
		hmb_forked_drop(th);
		hmb_drop(HMB_DROP_FORKED, 1);
		return;
	case ST_DISABLED: /* staged before hmb_init said so: nothing to keep */
		hmb_release(th);
		return;
	default: /* ST_FAILED, or ST_FINALIZED for a thread that registered too late */
		hmb_drop(hmb_drop_state(), hmb_events(th->buf, c) + 1);
		atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
		return;
	}
	hmb_stage_at(th, atomic_load_explicit(&th->cur, memory_order_relaxed), rec, n);
}

/*
 * hmb_slow_owned is the slow path of a probe whose thread holds its lock
 * and in_slow. On the alternate signal stack, a handler's, it makes no call
 * into Go (sigstack.c): the record waits in the array, replayed with the
 * thread's next probe outside the handler, or, the array full, is dropped
 * and counted. (A closed thread's slow path calls no Go.)
 */
HMB_NOINST static void hmb_slow_owned(struct hmb_thread *th, const hmb_record *rec, int n)
{
	if (__builtin_expect(!hmb_on_signal_stack(th) || th->closed, 1)) {
		hmb_slow_locked(th, rec, n);
		return;
	}
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	if (th->buf == NULL || c + n > th->buf + th->cap) {
		hmb_drop(HMB_DROP_SIGNAL, 1);
		return;
	}
	hmb_stage_at(th, c, rec, n);
}

void hmb_slow(uint64_t word, uint64_t ext_time, uint64_t ext_word, int n)
{
	hmb_slow_at(0, word, ext_time, ext_word, n);
}

void hmb_slow_at(uint64_t t, uint64_t word, uint64_t ext_time, uint64_t ext_word, int n)
{
	hmb_record rec[2] = {{t, word}, {ext_time, ext_word}};
	hmb_slow_n(rec, n);
}

void hmb_slow_n(hmb_record *rec, int n)
{
	if (__builtin_expect(hmb_go_thread | hmb_in_go, 0)) {
		hmb_drop(hmb_go_thread ? HMB_DROP_GO_THREAD : HMB_DROP_SIGNAL, 1); /* a signal handler's probe on a Go thread or in a call into Go (gothreads.c, shim.h) */
		return;
	}
	struct hmb_thread *th = hmb_self;
	if (atomic_load_explicit(&hmb_state, memory_order_acquire) == ST_UNINIT) {
		hmb_lazy_init((unsigned)(rec[0].word >> HMB_KIND_SHIFT) == HMB_KIND_FUNC_ENTER ? rec[0].word & HMB_PAYLOAD_MASK : 0);
	}
	if (th == NULL) {
		int st = atomic_load_explicit(&hmb_state, memory_order_acquire);
		if (st == ST_DISABLED) {
			return;
		}
		if ((st != ST_UNINIT && st != ST_RUNNING) || (th = hmb_register(1)) == NULL) {
			hmb_drop(hmb_drop_state(), 1);
			return;
		}
	}
	if (th->in_direct || atomic_exchange(&th->in_slow, 1)) {
		hmb_drop(HMB_DROP_SIGNAL, 1); /* a signal handler probed while this thread was in a probe */
		return;
	}
	if (rec[0].time == 0) {
		rec[0].time = hmb_now();
	}
	pthread_mutex_lock(&th->lock);
	hmb_slow_owned(th, rec, n);
	pthread_mutex_unlock(&th->lock);
	th->in_slow = 0;
}

/*
 * hmb_thread_exit is the key's destructor: the exiting thread's records go to
 * its location, and its array is freed. The thread stays registered, so that
 * probes in later destructors still find it (and go straight to Go).
 */
static void hmb_thread_exit(void *arg)
{
	struct hmb_thread *th = arg;
	th->in_slow = 1;
	pthread_mutex_lock(&th->lock);
	th->exited = 1;
	int st = atomic_load_explicit(&hmb_state, memory_order_acquire);
	if (th->closed) {
		hmb_count_late(th);
		hmb_thr_late(th, 1);
		hmb_release(th);
	} else if (st == ST_RUNNING || st == ST_CLOSING) {
		hmb_settle(th);
		hmb_replay(th, th->buf, atomic_load_explicit(&th->cur, memory_order_relaxed));
		hmb_thr_take(th, 1, 1); /* its throttled visits into its profile */
		if (st == ST_RUNNING) {
			/* Its partly filled bins are sealed for a reduction to take at
			   once: a thread that is gone never probes again to hand
			   them back. */
			hmb_thread_call_go(th, 0, 0);
		}
		hmb_release(th);
	} else if (st == ST_FAILED) {
		hmb_drop(HMB_DROP_NOT_MEASURED, hmb_events(th->buf, atomic_load(&th->cur)));
		hmb_release(th);
	} else if (st == ST_FORKED) {
		hmb_forked_drop(th);
		hmb_release(th);
	} else if (st != ST_UNINIT) {
		hmb_release(th); /* disabled */
	}
	/* ST_UNINIT: the records wait in the array for hmb_init or hmb_finalize. */
	hmb_go_gone(th);
	pthread_mutex_unlock(&th->lock);
	th->in_slow = 0;
}

struct hmb_region_call {
	const char *name;
	size_t nlen;
	const char *file;
	int line, paradigm;
	uint32_t region;
};

HMB_NOINST static void hmb_region_go(void *arg)
{
	struct hmb_region_call *c = arg;
	c->region = HMB_GO(hmbgo_region((char *)c->name, c->nlen, (char *)c->file, strlen(c->file), c->line, c->paradigm));
}

HMB_NOINST uint32_t hmb_region_n(const char *name, size_t nlen, const char *file, int line, int paradigm)
{
	if (name == NULL) {
		hmb_user_error("hmbtrace: hmb_region: the name is NULL");
		return 0;
	}
	/*
	 * A name with a length (Fortran's) may hold a NUL. Trailing ones are
	 * a C habit (//c_null_char) and end the name; text after one would be
	 * lost silently, so that is a usage error, and the name ends there.
	 */
	const char *nul = memchr(name, 0, nlen);
	if (nul != NULL) {
		size_t at = (size_t)(nul - name);
		for (size_t i = at; i < nlen; i++) {
			if (name[i] != 0 && name[i] != ' ') {
				hmb_user_error("hmbtrace: hmb_region: the name has a NUL byte before its end; "
					      "it is taken up to the NUL");
				break;
			}
		}
		nlen = at;
	}
	int st = atomic_load(&hmb_state);
	if (st == ST_UNINIT) { /* a failed start is retried by hmb_init only */
		if (hmb_start(1) != 0) {
			return 0;
		}
		st = atomic_load(&hmb_state);
	}
	if (st != ST_RUNNING && st != ST_CLOSING) {
		return 0;
	}
	struct hmb_region_call c = {name, nlen, file != NULL ? file : "", line, paradigm, 0};
	hmb_go_via(hmb_region_go, &c);
	return c.region;
}

HMB_NOINST uint32_t hmb_region(const char *name)
{
	return hmb_region_n(name, name != NULL ? strlen(name) : 0, NULL, 0, HMB_PARADIGM_USER);
}

HMB_NOINST uint32_t hmb_region_ex(const char *name, const char *file, int line)
{
	return hmb_region_n(name, name != NULL ? strlen(name) : 0, file, line, HMB_PARADIGM_USER);
}

HMB_NOINST uint32_t hmb_region_paradigm(const char *name, int paradigm)
{
	if (paradigm < HMB_PARADIGM_USER || paradigm > HMB_PARADIGM_OPENMP) {
		hmb_user_error("hmbtrace: hmb_region_paradigm: paradigm out of range (want HMB_PARADIGM_USER to HMB_PARADIGM_OPENMP)");
		return 0;
	}
	return hmb_region_n(name, name != NULL ? strlen(name) : 0, NULL, 0, paradigm);
}

HMB_NOINST uint32_t hmb_comm_define(const char *name, uint32_t parent, const int32_t *members, int nmembers,
				    const int32_t *remote, int nremote)
{
	if (nmembers < 0 || nremote < 0 || (nmembers > 0 && members == NULL) || (nremote > 0 && remote == NULL)) {
		hmb_user_error("hmbtrace: hmb_comm_define: a group's count is negative, or its array NULL");
		return 0;
	}
	int st = atomic_load(&hmb_state);
	if (st == ST_UNINIT) {
		if (hmb_start(1) != 0) {
			return 0;
		}
		st = atomic_load(&hmb_state);
	}
	if (st != ST_RUNNING && st != ST_CLOSING) {
		return 0;
	}
	const char *n = name != NULL ? name : "";
	char *err = NULL;
	uint32_t id = HMB_GO(hmbgo_comm_define((char *)n, strlen(n), parent, (int32_t *)members, (size_t)nmembers,
					(int32_t *)remote, (size_t)nremote, &err));
	if (err != NULL) {
		hmb_set_error(err);
		free(err);
	}
	return id;
}

/* hmb_def_ready starts the measurement if nothing did, and tells whether
 * it takes definitions (rma.c). */
HMB_NOINST int hmb_def_ready(void)
{
	int st = atomic_load(&hmb_state);
	if (st == ST_UNINIT) {
		if (hmb_start(1) != 0) {
			return 0;
		}
		st = atomic_load(&hmb_state);
	}
	return st == ST_RUNNING || st == ST_CLOSING;
}

/* hmb_def_error keeps err, a message the Go side allocated, for hmb_last_error, and frees it. */
HMB_NOINST void hmb_def_error(char *err)
{
	if (err != NULL) {
		hmb_set_error(err);
		free(err);
	}
}

HMB_NOINST void hmb_thread_name(const char *name)
{
	if (name == NULL) {
		return;
	}
	hmb_lazy_init(0);
	struct hmb_thread *th = hmb_self;
	if (th == NULL) {
		int st = atomic_load(&hmb_state);
		if ((st != ST_UNINIT && st != ST_RUNNING) || (th = hmb_register(0)) == NULL) {
			return;
		}
	}
	size_t n = strlen(name);
	char *copy = n < HMB_NAME_INLINE ? NULL : strdup(name);
	if (n >= HMB_NAME_INLINE && copy == NULL) {
		return;
	}
	pthread_mutex_lock(&th->lock);
	if (th->name != hmb_inline_name(th)) {
		free(th->name);
	}
	if (copy == NULL) {
		copy = memcpy(hmb_inline_name(th), name, n + 1);
	}
	th->name = copy;
	int st = atomic_load(&hmb_state);
	if (th->index != HMB_NO_INDEX && !th->closed && (st == ST_RUNNING || st == ST_CLOSING)) {
		hmb_thread_call_go(th, 1, 0);
	}
	pthread_mutex_unlock(&th->lock);
}

/*
 * hmb_flush_staged replays the calling thread's staged records into its
 * location now, as a full array does (nothing on a direct thread, whose
 * array is empty): a task's suspension must reach the measurement before
 * another thread resumes the task.
 */
HMB_NOINST void hmb_flush_staged(void)
{
	struct hmb_thread *th = hmb_self;
	if (th == NULL || th->in_direct || atomic_exchange(&th->in_slow, 1)) {
		return;
	}
	pthread_mutex_lock(&th->lock);
	int st = atomic_load_explicit(&hmb_state, memory_order_acquire);
	if (th->buf != NULL && !th->closed && (st == ST_RUNNING || st == ST_CLOSING) && hmb_location(th)) {
		hmb_settle(th);
		hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
		if (c != th->buf) {
			hmb_replay(th, th->buf, c);
			atomic_store_explicit(&th->cur, th->buf, memory_order_relaxed);
		}
	}
	pthread_mutex_unlock(&th->lock);
	th->in_slow = 0;
}

/* hmb_thread_team keeps the place as hmb_thread_name keeps the name: for the location now or when it is made. */
HMB_NOINST void hmb_thread_team(int levels, const int *numbers)
{
	if (levels <= 0 || numbers == NULL) {
		return;
	}
	if (levels > HMB_TEAM_LEVELS) {
		levels = HMB_TEAM_LEVELS;
	}
	hmb_lazy_init(0);
	struct hmb_thread *th = hmb_self;
	if (th == NULL) {
		int st = atomic_load(&hmb_state);
		if ((st != ST_UNINIT && st != ST_RUNNING) || (th = hmb_register(0)) == NULL) {
			return;
		}
	}
	pthread_mutex_lock(&th->lock);
	th->team_levels = levels;
	memcpy(th->team, numbers, (size_t)levels * sizeof numbers[0]);
	int st = atomic_load(&hmb_state);
	if (th->index != HMB_NO_INDEX && !th->closed && (st == ST_RUNNING || st == ST_CLOSING)) {
		hmb_thread_call_go(th, 2, 0);
	}
	int now = th->index == HMB_NO_INDEX && hmb_locate_early;
	pthread_mutex_unlock(&th->lock);
	/*
	 * A runtime's thread that has its place has its name: under
	 * HMB_SURVIVE its location is made now, so that its probes take the
	 * direct path from the first; else at its first replay (hmb_locate).
	 */
	if (now) {
		hmb_flush_staged();
	}
}

HMB_NOINST int hmb_finalize(void)
{
	if (atomic_load(&hmb_state) == ST_FORKED) {
		/* No lock: a thread of the parent may have held it. Only this thread runs. */
		if (hmb_self != NULL) {
			hmb_forked_drop(hmb_self);
		}
		uint64_t n = hmb_dropped_total();
		if (n == 0) {
			return 0;
		}
		char msg[200];
		snprintf(msg, sizeof msg,
			 "hmbtrace: a child of fork is not traced: %llu probes dropped (only the parent measures)",
			 (unsigned long long)n);
		hmb_set_error(msg);
		return -1;
	}
	pthread_mutex_lock(&hmb_mu);
	int st = atomic_load(&hmb_state);
	if (st == ST_FINALIZED) {
		int rc = hmb_final_result;
		pthread_mutex_unlock(&hmb_mu);
		return rc;
	}
	if (st == ST_UNINIT && hmb_threads != NULL) {
		/* Probes staged before Go was ready, and nothing started it since. */
		pthread_mutex_unlock(&hmb_mu);
		if (!hmb_wait_ready(HMB_READY_TIMEOUT_NS)) {
			hmb_not_ready();
			return -1;
		}
		pthread_mutex_lock(&hmb_mu);
		hmb_init_locked(1, 0); /* the probes' start, not the program's: say why it failed */
		st = atomic_load(&hmb_state);
	}
	if (st != ST_RUNNING) {
		/* Nothing measured: no probe, HMB_ENABLE=0, or hmb_init failed. */
		hmb_final_result = st == ST_FAILED ? -1 : 0;
		for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
			pthread_mutex_lock(&th->lock);
			if (st == ST_FAILED && th->buf != NULL) {
				hmb_drop(HMB_DROP_NOT_MEASURED, hmb_events(th->buf, atomic_load(&th->cur)));
			}
			th->closed = 1;
			th->cut = atomic_load(&th->cur);
			atomic_store(&th->end, th->buf);
			pthread_mutex_unlock(&th->lock);
		}
		atomic_store(&hmb_state, ST_FINALIZED);
		int rc = hmb_final_result;
		pthread_mutex_unlock(&hmb_mu);
		return rc;
	}
	atomic_store(&hmb_state, ST_CLOSING);
	/* A signal handler that interrupted this thread's slow path (and called exit) holds its lock. */
	struct hmb_thread *self_in_slow = hmb_self != NULL && hmb_self->in_slow ? hmb_self : NULL;
	if (self_in_slow != NULL && pthread_mutex_trylock(&self_in_slow->lock) == 0) {
		pthread_mutex_unlock(&self_in_slow->lock);
		self_in_slow = NULL; /* not held: the handler came before or after */
	}
	if (self_in_slow != NULL) {
		self_in_slow->interrupted = 1;
	}
	if (hmb_direct_on) {
		/*
		 * Close every array, so that no probe starts on the direct path
		 * any more, and wait for those on it: the membarrier makes each
		 * probe's in_direct mark, or its check of the array, see the other.
		 */
		for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
			if (th != self_in_slow) {
				pthread_mutex_lock(&th->lock);
			}
			atomic_store_explicit(&th->end, th->buf, memory_order_relaxed);
			if (th != self_in_slow) {
				pthread_mutex_unlock(&th->lock);
			}
		}
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
			struct timespec drain = {0, 10 * 1000000}; /* best effort: let probes in flight finish */
			nanosleep(&drain, NULL);
		}
		uint64_t start = hmb_monotonic_ns();
		uint64_t deadline = start + HMB_DIRECT_GRACE_NS, limit = start + HMB_DIRECT_LIMIT_NS;
		for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
			/*
			 * The calling thread's own mark means a signal handler (or an
			 * atexit hook it ran) interrupted one of its probes, which will
			 * not go on before this returns; another thread's mark that
			 * stays past the grace, a thread stopped inside a probe.
			 */
			while (atomic_load_explicit(&th->in_direct, memory_order_acquire)) {
				uint64_t now = th == hmb_self ? 0 : hmb_monotonic_ns();
				if (th == hmb_self || now > limit || (now > deadline && !hmb_runnable(th->tid))) {
					th->interrupted = 1;
					break;
				}
				sched_yield();
			}
		}
	}
	for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
		if (th == self_in_slow) {
			/* Its probe holds the lock and will not go on before this returns. */
			atomic_store_explicit(&th->end, th->buf, memory_order_relaxed);
			if (th->index != HMB_NO_INDEX) {
				HMB_GO(hmbgo_interrupt(th->index));
			}
			hmb_thr_take(th, 0, 0); /* its location is the interrupted replay's */
			th->closed = 1;
			continue;
		}
		pthread_mutex_lock(&th->lock);
		/* Stop the owner's fast path, then take what it published. */
		atomic_store_explicit(&th->end, th->buf, memory_order_relaxed);
		hmb_record *c = atomic_load_explicit(&th->cur, memory_order_acquire);
		if (th->interrupted) {
			/*
			 * Its location is the unfinished probe's: Close leaves it as
			 * it is. What it staged or dropped since its last replay is
			 * counted. loc stays: the probe may still read it.
			 */
			if (th->index != HMB_NO_INDEX) {
				HMB_GO(hmbgo_interrupt(th->index));
			}
			uint64_t lost = th->buf != NULL ? hmb_events(th->buf, c) : 0;
			for (size_t d = 0; d < th->ndrops; d++) {
				lost += th->drops[d] + th->mdrops[d] + th->cdrops[d];
			}
			hmb_drop(HMB_DROP_INTERRUPTED, lost);
			hmb_thr_take(th, 0, 0);
			th->cut = c;
			th->closed = 1;
			pthread_mutex_unlock(&th->lock);
			continue;
		}
		hmb_replay(th, hmb_unreplayed(th), c);
		th->taken = NULL;
		hmb_location(th); /* also for a thread that only named itself */
		hmb_thr_take(th, 1, 0);
		th->loc = NULL; /* its probes never go direct again */
		th->cut = c;
		th->closed = 1;
		pthread_mutex_unlock(&th->lock);
	}
	char *err = HMB_GO(hmbgo_finalize(atomic_load(&hmb_at_exit)));
	hmb_final_result = 0;
	if (err != NULL) {
		hmb_set_error(err);
		free(err);
		hmb_final_result = -1;
	}
	atomic_store(&hmb_state, ST_FINALIZED);
	int rc = hmb_final_result;
	pthread_mutex_unlock(&hmb_mu);
	return rc;
}

void hmb_exiting(void)
{
	atomic_store(&hmb_at_exit, 1);
}

static void hmb_atexit_finalize(void)
{
	hmb_exiting();
	int st = atomic_load(&hmb_state);
	if (st != ST_FINALIZED && st != ST_FAILED && st != ST_FORKED && hmb_finalize() != 0) {
		fprintf(stderr, "%s\n", atomic_load(&hmb_error));
	}
}

/*
 * hmb_thr_sweep counts the throttled visits that raced hmb_finalize
 * (hmb_thr_late) of every thread, for hmb_dropped and the report at exit.
 * wait: block for the locks; else skip what is held (at exit, a signal
 * handler may hold one).
 */
HMB_NOINST static void hmb_thr_sweep(int wait)
{
	if (atomic_load(&hmb_state) != ST_FINALIZED || (wait ? pthread_mutex_lock(&hmb_mu) : pthread_mutex_trylock(&hmb_mu)) != 0) {
		return;
	}
	for (struct hmb_thread *th = hmb_threads; th != NULL; th = th->next) {
		if ((wait ? pthread_mutex_lock(&th->lock) : pthread_mutex_trylock(&th->lock)) != 0) {
			continue;
		}
		if (th->closed) {
			hmb_thr_late(th, 0);
		}
		pthread_mutex_unlock(&th->lock);
	}
	pthread_mutex_unlock(&hmb_mu);
}

static void hmb_atexit_report(void)
{
	hmb_thr_sweep(0);
	if (atomic_load(&hmb_state) == ST_FORKED) {
		if (hmb_self != NULL) {
			hmb_forked_drop(hmb_self);
		}
		uint64_t n = hmb_dropped_total();
		if (n > 0) {
			fprintf(stderr, "hmbtrace: process %ld, a child of fork, is not traced: %llu probes dropped\n",
				(long)getpid(), (unsigned long long)n);
		}
		return;
	}
	uint64_t by[HMB_DROP_WHYS], n = 0;
	hmb_drops_now(by);
	for (int i = 0; i < HMB_DROP_WHYS; i++) {
		by[i] -= hmb_drops_told[i]; /* counts only grow */
		n += by[i];
	}
	if (n > 0) {
		char causes[1024], who[32] = "";
		hmb_drop_causes_of(by, causes, sizeof causes);
		if (hmb_rank >= 0) {
			snprintf(who, sizeof who, "rank %d: ", hmb_rank);
		}
		/* After the collective end rank 0 said the run's drops up to MPI_Finalize, for all ranks. */
		fprintf(stderr, "hmbtrace: %s%llu probes dropped%s, not in the trace: %s\n", who, (unsigned long long)n,
			hmb_drops_told_set ? " after MPI_Finalize" : "", causes);
	}
}

void hmb_stage_collective(uint64_t word, uint64_t ext_time, uint64_t ext_word)
{
	hmb_record rec[2] = {{0, word}, {ext_time, ext_word}};
	hmb_stage_collective_n(rec, 2);
}

void hmb_stage_collective_n(hmb_record *rec, int n)
{
	struct hmb_thread *th = hmb_self;
	if (th->in_direct || atomic_exchange(&th->in_slow, 1)) {
		hmb_drop(HMB_DROP_SIGNAL, 1); /* a signal handler's, inside a probe of its thread */
		return;
	}
	rec[0].time = hmb_now();
	pthread_mutex_lock(&th->lock);
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	if (th->loc != NULL && !th->closed && c + n <= atomic_load_explicit(&th->end, memory_order_relaxed)) {
		hmb_stage_at(th, c, rec, n);
	} else {
		hmb_slow_owned(th, rec, n);
	}
	pthread_mutex_unlock(&th->lock);
	th->in_slow = 0;
}

void hmb_count_dropped(enum hmb_drop_why why, uint64_t n)
{
	hmb_drop(why, n);
}

/*
 * hmb_last_error is the later of the library's last failure and the last
 * usage error the probes met (a leave of a region not open, an undefined
 * region...), which the measurement notes as it replays the probes: the
 * calling thread's staged ones are replayed first, so that its own misuse
 * is seen at once.
 */
HMB_NOINST const char *hmb_last_error(void)
{
	int st = atomic_load(&hmb_state);
	if (atomic_load(&hmb_go_ready) && (st == ST_RUNNING || st == ST_CLOSING || st == ST_FINALIZED)) {
		if (st == ST_RUNNING) {
			hmb_flush_staged();
		}
		uint64_t at = 0;
		char *usage = HMB_GO(hmbgo_last_usage(&at));
		if (usage != NULL) {
			if (at > atomic_load(&hmb_error_ns)) {
				hmb_set_error_at(usage, at);
			}
			free(usage);
		}
	}
	return atomic_load(&hmb_error);
}

HMB_NOINST uint64_t hmb_dropped(void)
{
	if (atomic_load(&hmb_state) == ST_FORKED && hmb_self != NULL && !hmb_self->in_slow) {
		hmb_forked_drop(hmb_self); /* the child's staged probes count when asked */
	}
	hmb_thr_sweep(1);
	return hmb_dropped_total();
}

/* hmb_running starts the measurement if needed and says whether it runs. */
HMB_NOINST static int hmb_running(void)
{
	int st = atomic_load(&hmb_state);
	if (st == ST_UNINIT) {
		if (hmb_start(1) != 0) {
			return 0;
		}
		st = atomic_load(&hmb_state);
	}
	return st == ST_RUNNING;
}

HMB_NOINST void hmb_phase(uint32_t region)
{
	if (hmb_running()) {
		HMB_GO(hmbgo_phase(region));
	}
}

HMB_NOINST void hmb_set_rank(int rank)
{
	if (rank < 0) {
		hmb_set_error("hmbtrace: hmb_set_rank: a rank is 0 or more");
		return;
	}
	hmb_rank = rank;
	if (hmb_running()) {
		HMB_GO(hmbgo_set_rank(rank));
	}
}

HMB_NOINST uint64_t hmb_clock(void)
{
	pthread_once(&hmb_once, hmb_setup); /* hmb_setup picks the clock */
	return hmb_now();
}

HMB_NOINST uint64_t hmb_start_ticks(void)
{
	return hmb_running() ? HMB_GO(hmbgo_start_ticks()) : 0;
}

HMB_NOINST void hmb_clock_sync(uint64_t ticks, int64_t offset, uint64_t reference_start)
{
	if (hmb_running()) {
		HMB_GO(hmbgo_clock_sync(ticks, offset, reference_start));
	}
}

HMB_NOINST int hmb_synced_ns(uint64_t ticks, int64_t *ns)
{
	return hmb_running() ? HMB_GO(hmbgo_synced_ns(ticks, ns)) : 0;
}

HMB_NOINST int hmb_run_end(int begin, int *archive, int *aggregate, int64_t *timeout_ns)
{
	*archive = 0;
	*aggregate = 1;
	*timeout_ns = 0;
	if (!hmb_running()) {
		return 0;
	}
	if (begin) {
		/* A thread that staged no more than its first window (a program of
		   few calls) has no location yet: without it, the run's results
		   lacked the rank, and without the other threads' (an OpenMP
		   team's), their events. */
		hmb_flush_staged();
		hmb_take_staged();
	}
	HMB_GO(hmbgo_run_end(archive, aggregate, timeout_ns));
	return 1;
}

HMB_NOINST int64_t hmb_slot_capacity(int world)
{
	return hmb_running() ? HMB_GO(hmbgo_slot_capacity(world)) : 0;
}

HMB_NOINST int hmb_archive_create(int group, int groups, int world, const int32_t *ranks, const int64_t *capacity,
				  int n, int64_t *offsets)
{
	if (!hmb_running()) {
		hmb_set_error("hmbtrace: hmb_archive_create: the measurement does not record");
		return -1;
	}
	char *err = HMB_GO(hmbgo_archive_create(group, groups, world, (int32_t *)ranks, (int64_t *)capacity, n, offsets));
	if (err != NULL) {
		hmb_set_error(err);
		free(err);
		return -1;
	}
	return 0;
}

HMB_NOINST void hmb_archive_slot(int group, int groups, int world, int64_t off, int64_t capacity)
{
	if (hmb_running()) {
		HMB_GO(hmbgo_archive_slot(group, groups, world, off, capacity));
	}
}

/* pass_error keeps Go's error message (malloc'd) for hmb_last_error. */
HMB_NOINST static int pass_error(char *err)
{
	if (err != NULL) {
		hmb_set_error(err);
		free(err);
		return -1;
	}
	return 0;
}

HMB_NOINST int hmb_pass_make(int pass, int rank, const char *in, size_t in_n, char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!hmb_running()) {
		hmb_set_error("hmbtrace: the collective end: the measurement does not record");
		return -1;
	}
	return pass_error(HMB_GO(hmbgo_pass_make(pass, rank, (char *)in, in_n, out, n)));
}

HMB_NOINST int hmb_pass_merge(int pass, const char *a, size_t an, int held, const char *b, size_t bn)
{
	return pass_error(HMB_GO(hmbgo_pass_merge(pass, (char *)a, an, held, (char *)b, bn)));
}

HMB_NOINST int hmb_pass_held(int pass, char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return pass_error(HMB_GO(hmbgo_pass_held(pass, out, n)));
}

HMB_NOINST int hmb_pass_set(int pass, const char *p, size_t n, int held, char **next, size_t *next_n)
{
	*next = NULL;
	*next_n = 0;
	if (!hmb_running()) {
		return 0;
	}
	return pass_error(HMB_GO(hmbgo_pass_set(pass, (char *)p, n, held, next, next_n)));
}

HMB_NOINST int hmb_results_only(void)
{
	return hmb_running() && HMB_GO(hmbgo_results_only());
}

HMB_NOINST void hmb_results_written(int world)
{
	if (hmb_running()) {
		HMB_GO(hmbgo_results_written(world));
	}
}

HMB_NOINST void hmb_pass_end(void)
{
	HMB_GO(hmbgo_pass_end());
}

/* The unification of the run's definitions at the collective end, as the
 * run profile's reduction (shim.h). */

HMB_NOINST int hmb_run_definitions(char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!hmb_running()) {
		hmb_set_error("hmbtrace: hmb_run_definitions: the measurement does not record");
		return -1;
	}
	char *err = HMB_GO(hmbgo_run_definitions(out, n));
	if (err != NULL) {
		hmb_set_error(err);
		free(err);
		return -1;
	}
	return 0;
}

HMB_NOINST int hmb_run_defs_merge(const char *a, size_t an, int held, const char *b, size_t bn)
{
	return pass_error(HMB_GO(hmbgo_run_defs_merge((char *)a, an, held, (char *)b, bn)));
}

HMB_NOINST int hmb_run_defs_held(char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return pass_error(HMB_GO(hmbgo_run_defs_held(out, n)));
}

HMB_NOINST int hmb_run_set_definitions(const char *p, size_t n, int held)
{
	if (!hmb_running()) {
		return 0;
	}
	return pass_error(HMB_GO(hmbgo_run_set_definitions((char *)p, n, held)));
}
