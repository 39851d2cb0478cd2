/*
 * gomp.c - GCC's OpenMP (libgomp, which has no OMPT) seen by interposing
 * the entry points the compiler calls: this library is linked before
 * libgomp (or preloaded), so the program's calls reach these wrappers,
 * which record the construct and call libgomp's function, found with
 * dlsym(RTLD_NEXT).
 *
 * What the calls cannot tell is approximated, as OPARI2 does for Score-P
 * (Knüpfer et al.):
 *  - The implicit barrier at the end of a parallel region is inside
 *    libgomp, where each thread waits at its own time without a call.
 *    Each thread's "!$omp implicit barrier" begins when its part of the
 *    body returns to the wrapper, where it counts its arrival in the
 *    region's join word. Thread 0, unless it arrived last, ends it with its
 *    implicit task when GOMP_parallel returns: libgomp's barrier is behind
 *    it. The other threads wait on the word until the whole team has
 *    arrived, which is when libgomp's barrier would let them go, before
 *    they end theirs and return to it; thread 0 never waits there, so the
 *    team meets no extra barrier round (see struct body). A region in which tasks were created before thread 0
 *    arrived ends with libgomp's GOMP_barrier on every thread instead,
 *    which runs the tasks inside the implicit barrier as libgomp would;
 *    a task created by another thread after thread 0 arrived may run
 *    after its thread's implicit barrier (the first time at that
 *    construct: the construct then takes the barrier from its start).
 *    With OMP_CANCELLATION=true no GOMP_barrier is added (a cancelled
 *    region must not meet one): tasks then run after it.
 *  - GCC schedules a loop with schedule(static) (the default) inline: no
 *    call starts it, and its implicit barrier is a GOMP_barrier call, as is
 *    the one at the end of a single construct: "!$omp barrier @file:line"
 *    stands for explicit and such implicit barriers alike. Loops with
 *    dynamic, guided, runtime or ordered schedules and sections are
 *    regions, and their implicit barrier (in GOMP_loop_end,
 *    GOMP_sections_end) is an "!$omp implicit barrier" inside them.
 *  - A barrier or nested parallel region that ends an outlined function
 *    is a tail call from it: the return address is then the adapter's
 *    own, in body(), and the construct is named after the outlined
 *    function instead of its line (sites.c). All such calls of one
 *    function share that name: the call sites are not in the stack.
 *  - A single construct's body follows GOMP_single_start with no call at
 *    its end: "!$omp single" is the decision alone (the body with
 *    copyprivate, which ends in GOMP_single_copy_end).
 *  - A lock is held from omp_set_lock to omp_unset_lock across any code:
 *    only the wait, the omp_set_lock call, is a region.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hmbtrace.h"
#include "omp.h"

#define NOINST HMB_OMP_NOINST
#define EXPORT __attribute__((visibility("default"))) NOINST

int hmb_ompt_active;

void GOMP_barrier(void);

/*
 * libgomp itself, when the program does not load it: a link with
 * --as-needed (Debian's g++) drops libgomp when this library defines
 * every GOMP_* function the program calls. Code GCC compiled for OpenMP
 * needs it, so it is loaded then.
 */
NOINST static void *libgomp(void)
{
	static void *handle;
	void *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
	if (h == NULL) {
		h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
		__atomic_store_n(&handle, h, __ATOMIC_RELEASE);
	}
	return h;
}

/* next finds libgomp's function name, or ends the program that called it. */
NOINST static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f == NULL && libgomp() != NULL) {
		f = dlsym(libgomp(), name);
	}
	if (f == NULL) {
		char msg[256];
		int n = snprintf(msg, sizeof msg,
				 "hmbtrace-omp: %s: not found in the OpenMP runtime linked after libhmbtrace-omp "
				 "nor in libgomp.so.1 (link with -fopenmp): %s\n", name, dlerror());
		if (n > 0) {
			write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
		}
		abort();
	}
	return f;
}

/* REAL(f) is libgomp's f, looked up on the first call. */
#define REAL(f)                                                                          \
	static __typeof__(f) *real_##f;                                                  \
	if (__builtin_expect(real_##f == NULL, 0)) {                                     \
		__atomic_store_n(&real_##f, (__typeof__(f) *)next(#f), __ATOMIC_RELAXED); \
	}

/* OpenMP queries: libgomp's, found in the process (this library does not link it). */
static int (*q_level)(void), (*q_ancestor)(int), (*q_num_threads)(void), (*q_thread_num)(void);
/* OMP_CANCELLATION, which the program cannot change once it runs. */
static int cancellation;

/*
 * How a thread waits at the end of a region for the team (join_wait).
 * When the team fits the CPUs the threads run on, it spins join_spins
 * pauses before it sleeps, as libgomp's own barriers do after
 * OMP_WAIT_POLICY and GOMP_SPINCOUNT (a count with k, M, G or T, or
 * "infinite").
 *
 * When the team has more threads than CPUs, the thread it waits for
 * likely needs the waiter's CPU: a spin only delays it (an MPI rank bound
 * to one core with two threads spun 300000 pauses per region, and ran
 * 10-20 times slower than untraced), and a sleep costs a wake-up and,
 * worse, a second sleep: the woken thread is not yet in libgomp's barrier
 * when thread 0 reaches it, so thread 0 sleeps there too, where untraced
 * it would have found the team in it and gone on (TeaLeaf, 2 ranks of 2
 * threads on a core each: 0.29 s traced against 0.16 s plain; 0.19 s with
 * the yields below). So the waiter yields the CPU instead, join_yields
 * times at most, as many as libgomp spins then (100, 1000 with
 * OMP_WAIT_POLICY=active, no more than GOMP_SPINCOUNT): the scheduler
 * runs the other threads of its CPU, and the waiter runs again when they
 * arrived or their time slice ended. With no other thread on its CPU a
 * yield returns at once, a spin of a system call's length. Only then it
 * sleeps. A passive policy sleeps at once in both cases. What remains
 * over plain libgomp is one switch per region when a thread other than
 * thread 0 arrives first: it must run again after thread 0 arrived and
 * before libgomp's barrier lets thread 0 go.
 */
static unsigned long long join_spins = 300000;
static unsigned long long join_yields = 100;
static long available_cpus;

/*
 * count_cpus counts the CPUs the program's threads may run on, as libgomp
 * does (gomp_available_cpus): the initial thread's affinity mask, which a
 * launcher such as mpirun narrows to the rank's cores. With OMP_PROC_BIND,
 * libgomp has already bound that thread to the first place, so the CPUs of
 * all places count instead.
 */
NOINST static long count_cpus(void)
{
	int (*proc_bind)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_proc_bind");
	int (*num_places)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_num_places");
	int (*place_procs)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "omp_get_place_num_procs");
	if (proc_bind != NULL && num_places != NULL && place_procs != NULL && proc_bind() != 0) {
		long n = 0;
		for (int p = 0, np = num_places(); p < np; p++) {
			n += place_procs(p);
		}
		if (n > 0) {
			return n;
		}
	}
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
		return CPU_COUNT(&set);
	}
	return sysconf(_SC_NPROCESSORS_ONLN); /* a mask wider than cpu_set_t */
}

NOINST static void join_setup(void)
{
	available_cpus = count_cpus();
	const char *p = getenv("OMP_WAIT_POLICY");
	if (p != NULL && strcasecmp(p, "passive") == 0) {
		join_spins = 0;
	} else if (p != NULL && strcasecmp(p, "active") == 0) {
		join_spins = 30000000000ull;
		join_yields = 1000;
	}
	const char *c = getenv("GOMP_SPINCOUNT");
	if (c != NULL && (strcasecmp(c, "infinite") == 0 || strcasecmp(c, "infinity") == 0)) {
		join_spins = ~0ull;
	} else if (c != NULL) {
		char *end;
		unsigned long long v = strtoull(c, &end, 10);
		if (end != c) { /* libgomp ignores what it cannot read too */
			switch (*end) {
			case 'k':
			case 'K':
				v *= 1000ull;
				break;
			case 'M':
				v *= 1000000ull;
				break;
			case 'G':
				v *= 1000000000ull;
				break;
			case 'T':
				v *= 1000000000000ull;
				break;
			}
			join_spins = v;
		}
	}
	if (join_yields > join_spins) {
		join_yields = join_spins;
	}
}

/* Whether the wrappers record: 0 until setup ran, then ON or OFF. */
enum { ON = 1, OFF = 2 };
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int enabled;

NOINST static void setup(void)
{
	if (dlsym(RTLD_DEFAULT, "omp_get_level") == NULL) {
		libgomp(); /* dropped by --as-needed: the caller is GCC's code */
	}
	q_level = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_level");
	q_ancestor = (int (*)(int))dlsym(RTLD_DEFAULT, "omp_get_ancestor_thread_num");
	q_num_threads = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_num_threads");
	q_thread_num = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_thread_num");
	join_setup();
	int (*q_cancellation)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_cancellation");
	cancellation = q_cancellation != NULL && q_cancellation();
	int on = !hmb_omp_env_off() && !hmb_ompt_active && q_level != NULL && q_ancestor != NULL &&
		 q_num_threads != NULL && q_thread_num != NULL;
	atomic_store_explicit(&enabled, on ? ON : OFF, memory_order_release);
}

/* on reports whether the wrappers record: after the first call, one load and no call. */
NOINST static inline int on(void)
{
	int e = atomic_load_explicit(&enabled, memory_order_acquire);
	if (__builtin_expect(e == 0, 0)) {
		pthread_once(&once, setup);
		e = atomic_load_explicit(&enabled, memory_order_relaxed);
	}
	return e == ON;
}

NOINST static inline void enter(uint32_t r)
{
	if (r != 0) {
		hmb_enter(r);
	}
}

NOINST static inline void leave(uint32_t r)
{
	if (r != 0) {
		hmb_leave(r);
	}
}

/*
 * The constructs a thread has open whose end is a later call: their
 * region and kind, so that the end leaves what its start entered.
 */
#define OPEN_MAX 64
struct open {
	uint32_t region;
	int kind;
};
static HMB_OMP_TLS struct open opened[OPEN_MAX];
static HMB_OMP_TLS int nopen;

NOINST static void push(int kind, uint32_t region)
{
	if (nopen < OPEN_MAX) {
		opened[nopen].kind = kind;
		opened[nopen].region = region;
		enter(region);
	}
	nopen++;
}

NOINST static void pop(int kind)
{
	if (nopen > OPEN_MAX) {
		nopen--;
	} else if (nopen > 0 && opened[nopen - 1].kind == kind) {
		nopen--;
		leave(opened[nopen].region);
	}
}

/* close_to leaves what a body left open (a construct ended by a call libgomp made itself). */
NOINST static void close_to(int depth)
{
	while (nopen > depth) {
		nopen--;
		if (nopen < OPEN_MAX) {
			leave(opened[nopen].region);
		}
	}
}

#define SITE(kind) hmb_omp_site(kind, __builtin_return_address(0), NULL)

/* name_thread names the calling thread after its OpenMP thread numbers, when they changed. */
NOINST static void name_thread(void)
{
	static HMB_OMP_TLS int named_level, named[16];
	int level = q_level();
	int anc[16], same = level == named_level;
	if (level > 16) {
		level = 16;
	}
	for (int l = 1; l <= level; l++) {
		anc[l - 1] = q_ancestor(l);
		same = same && anc[l - 1] == named[l - 1];
	}
	if (same) {
		return; /* the team's place of the last region: a thread's common case */
	}
	hmb_omp_name(level, anc);
	named_level = level;
	memcpy(named, anc, (size_t)level * sizeof anc[0]);
}

/* The explicit task the thread runs (hmb_task_create's id), 0 in its implicit task. */
static HMB_OMP_TLS uint64_t current_task;

/*
 * The join word of a parallel region (struct body's): how many of the
 * team's threads arrived at its end, and what happened to the region.
 */
#define J_COUNT 0x0fffffffu /* the arrivals */
#define J_SLEEP (1u << 28) /* a thread sleeps on the word: the last arrival wakes it */
#define J_LATE (1u << 29) /* tasks were created after thread 0 arrived */
#define J_TASKED (1u << 30) /* tasks were created before: the region ends in GOMP_barrier */
#define J_ZERO (1u << 31) /* thread 0 arrived */

/*
 * A parallel region's body as every thread of the team runs it: in one
 * cache line, which each worker reads once and writes once (the join).
 */
struct body {
	void (*fn)(void *);
	void *data;
	uint32_t task, barrier, work;
	int work_kind;
	int end_barrier; /* the implicit barrier is seen (not the pre-4.9 ABI's GOMP_parallel_start) */
	int open; /* thread 0 left its implicit task and barrier open for the wrapper to leave */
	_Atomic uint32_t join;
} __attribute__((aligned(64)));

/* The body whose part the thread runs: where its tasks mark the region as tasked. */
static HMB_OMP_TLS struct body *running_body;

NOINST static void futex_wait(_Atomic uint32_t *w, uint32_t v)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

NOINST static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/*
 * mark_tasked notes that the thread creates a task in the region it runs
 * a part of: before thread 0 arrived at its end, the team ends it in
 * GOMP_barrier, which runs the tasks; after, the region is marked late
 * (the wrapper then makes its construct end in GOMP_barrier from the
 * next time on). Once per region: a load after the first.
 */
NOINST static void mark_tasked(void)
{
	struct body *b = running_body;
	if (b == NULL) {
		return;
	}
	uint32_t w = atomic_load_explicit(&b->join, memory_order_relaxed);
	while (!(w & (J_TASKED | J_LATE))) {
		uint32_t nw = w | ((w & J_ZERO) ? J_LATE : J_TASKED);
		if (atomic_compare_exchange_weak_explicit(&b->join, &w, nw, memory_order_acq_rel, memory_order_relaxed)) {
			if ((nw & J_TASKED) && (w & J_SLEEP)) {
				futex_wake(&b->join); /* the sleepers go to GOMP_barrier now */
			}
			return;
		}
	}
}

/*
 * join_wait waits until the team arrived or the region turned out tasked
 * (the thread then goes to GOMP_barrier; not with OMP_CANCELLATION, which
 * adds none), and returns the join word then: spinning or, when the team
 * has more threads than CPUs, yielding first, then asleep on it.
 */
NOINST static uint32_t join_wait(struct body *b, uint32_t n)
{
	int shared = available_cpus > 0 && n > (uint32_t)available_cpus;
	unsigned long long spins = shared ? 0 : join_spins, yields = shared ? join_yields : 0;
	if (shared && n > 4 * (uint32_t)available_cpus) {
		/*
		 * Far more threads than CPUs: a yield runs another waiter, which
		 * yields too, and a team of 1,024 on 2 CPUs made 100,000 of them
		 * per region. The yields are shared out instead, so that the team
		 * makes about as many as 4 threads per CPU would.
		 */
		yields = yields * 4 * (unsigned long long)available_cpus / n;
	}
	for (unsigned long long i = 0;; i++) {
		uint32_t w = atomic_load_explicit(&b->join, memory_order_acquire);
		if ((w & J_COUNT) >= n || ((w & J_TASKED) && !cancellation)) {
			return w;
		}
		if (i < spins) {
			__builtin_ia32_pause();
			continue;
		}
		if (i < spins + yields) {
			sched_yield();
			continue;
		}
		if (!(w & J_SLEEP)) {
			w = atomic_fetch_or_explicit(&b->join, J_SLEEP, memory_order_seq_cst) | J_SLEEP;
			if ((w & J_COUNT) >= n || ((w & J_TASKED) && !cancellation)) {
				return w;
			}
		}
		futex_wait(&b->join, w);
	}
}

NOINST static void body(void *arg)
{
	struct body *b = arg;
	name_thread();
	int depth = nopen;
	/* A team's implicit task, also on a thread that forks it from a task. */
	uint64_t up_task = current_task;
	current_task = 0;
	enter(b->task);
	if (b->work_kind != 0) {
		push(b->work_kind, b->work); /* the body's GOMP_*_end_nowait leaves it */
	}
	void (*up)(void *) = hmb_omp_running;
	struct body *up_body = running_body;
	hmb_omp_running = b->fn;
	running_body = b;
	b->fn(b->data);
	running_body = up_body;
	hmb_omp_running = up;
	close_to(depth);
	current_task = up_task;
	if (!b->end_barrier) {
		leave(b->task); /* GOMP_parallel_end's barrier ends the region */
		return;
	}
	enter(b->barrier);
	/*
	 * The arrival, seq_cst: a sleeper sets J_SLEEP and then reads the
	 * count, the last arrival adds to the count and then reads J_SLEEP;
	 * one of them sees the other's.
	 */
	uint32_t n = (uint32_t)q_num_threads();
	int zero = q_thread_num() == 0;
	uint32_t old = atomic_fetch_add_explicit(&b->join, 1 | (zero ? J_ZERO : 0), memory_order_seq_cst);
	uint32_t w = old + 1 + (zero ? J_ZERO : 0);
	if ((w & J_COUNT) >= n && (w & J_SLEEP)) {
		futex_wake(&b->join);
	}
	if (zero) {
		/*
		 * The last to arrive ends its barrier now: the others still have
		 * to record theirs before libgomp's barrier lets thread 0 go, a
		 * wait of the adapter's, not of the team.
		 */
		if ((!(old & J_TASKED) || cancellation) && (w & J_COUNT) < n) {
			b->open = 1; /* GOMP_parallel's return is its end */
			return;
		}
	} else if ((w & J_COUNT) < n && (!(w & J_TASKED) || cancellation)) {
		w = join_wait(b, n);
	}
	/* J_TASKED is final once thread 0 arrived, and set before it arrived: every thread decides alike. */
	if ((w & J_TASKED) && !cancellation) {
		REAL(GOMP_barrier);
		real_GOMP_barrier();
	}
	leave(b->barrier);
	leave(b->task);
}

/* join ends thread 0's implicit barrier and task once libgomp joined the team. */
NOINST static inline void join(struct body *b)
{
	if (b->open) {
		leave(b->barrier);
		leave(b->task);
	}
}

/*
 * The regions of the parallel constructs a thread forked last, by the
 * construct's call (ra), outlined function and work kind, and the body the
 * thread runs (a construct in it may be named after it: sites.c): one
 * lookup per region instead of four. Direct-mapped, per thread, so neither
 * locks nor atomics.
 */
#define PAR_CACHE 8
struct par_site {
	const void *ra;
	void (*fn)(void *), (*running)(void *);
	int work_kind;
	int tasky; /* it created tasks: it ends in GOMP_barrier from its start */
	uint32_t parallel, task, barrier, work;
};
static HMB_OMP_TLS struct par_site par_cache[PAR_CACHE];

/* par_site returns the construct's regions, and its cache entry (NULL when there is none) in *entry. */
NOINST static struct par_site par_site(const void *ra, void (*fn)(void *), int work_kind, struct par_site **entry)
{
	struct par_site *c = &par_cache[((uintptr_t)ra >> 2 ^ (uintptr_t)fn >> 4) % PAR_CACHE];
	*entry = NULL;
	if (__builtin_expect(c->ra == ra && c->fn == fn && c->work_kind == work_kind && c->running == hmb_omp_running &&
				     ra != NULL,
			     1)) {
		*entry = c;
		return *c;
	}
	struct par_site s = {ra, fn, hmb_omp_running, work_kind, 0, 0, 0, 0, 0};
	s.parallel = hmb_omp_site(K_PARALLEL, ra, (const void *)fn);
	s.task = hmb_omp_site(K_IMPLICIT_TASK, ra, (const void *)fn);
	s.barrier = hmb_omp_site(K_IMPLICIT_BARRIER, ra, (const void *)fn);
	s.work = work_kind != 0 ? hmb_omp_site(work_kind, ra, NULL) : 0;
	if (s.parallel != 0 || s.task != 0 || s.barrier != 0 || s.work != 0) {
		*c = s; /* not when the measurement is off: nothing to keep */
		*entry = c;
	}
	return s;
}

/* body_init prepares a body and reports whether it records anything (not when the measurement is off). */
NOINST static int body_init(struct body *b, const struct par_site *s, void (*fn)(void *), void *data, int work_kind)
{
	b->fn = fn;
	b->data = data;
	b->task = s->task;
	b->barrier = s->barrier;
	b->work_kind = work_kind;
	b->work = s->work;
	b->end_barrier = 1;
	b->open = 0;
	atomic_init(&b->join, s->tasky ? J_TASKED : 0);
	return b->task != 0 || b->barrier != 0 || b->work != 0;
}

/* joined ends thread 0's part once libgomp joined the team, and keeps whether the construct makes tasks. */
NOINST static inline void joined(struct body *b, struct par_site *entry)
{
	join(b);
	if (entry != NULL && (atomic_load_explicit(&b->join, memory_order_relaxed) & (J_TASKED | J_LATE))) {
		entry->tasky = 1;
	}
}

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
	REAL(GOMP_parallel);
	if (!on()) {
		real_GOMP_parallel(fn, data, num_threads, flags);
		return;
	}
	const void *ra = __builtin_return_address(0);
	struct par_site *entry;
	struct par_site ps = par_site(ra, fn, 0, &entry);
	uint32_t r = ps.parallel;
	struct body b;
	if (!body_init(&b, &ps, fn, data, 0) && r == 0) {
		real_GOMP_parallel(fn, data, num_threads, flags); /* nothing to record */
		return;
	}
	enter(r);
	real_GOMP_parallel(body, &b, num_threads, flags);
	joined(&b, entry);
	leave(r);
}

unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
	REAL(GOMP_parallel_reductions);
	if (!on()) {
		return real_GOMP_parallel_reductions(fn, data, num_threads, flags);
	}
	const void *ra = __builtin_return_address(0);
	struct par_site *entry;
	struct par_site ps = par_site(ra, fn, 0, &entry);
	uint32_t r = ps.parallel;
	struct body b;
	if (!body_init(&b, &ps, fn, data, 0) && r == 0) {
		return real_GOMP_parallel_reductions(fn, data, num_threads, flags);
	}
	enter(r);
	unsigned n = real_GOMP_parallel_reductions(body, &b, num_threads, flags);
	joined(&b, entry);
	leave(r);
	return n;
}

/* The combined parallel loops: each thread's body takes chunks and ends with GOMP_loop_end_nowait. */
#define PARALLEL_LOOP(f, ...)                                                                        \
	void f(void (*fn)(void *), void *data, unsigned num_threads, __VA_ARGS__, unsigned flags);     \
	EXPORT void f(void (*fn)(void *), void *data, unsigned num_threads, __VA_ARGS__, unsigned flags)
#define PARALLEL_LOOP_BODY(f, ...)                                               \
	{                                                                        \
		REAL(f);                                                         \
		if (!on()) {                                                     \
			real_##f(fn, data, num_threads, __VA_ARGS__, flags);     \
			return;                                                  \
		}                                                                \
		const void *ra = __builtin_return_address(0);                    \
		struct par_site *entry;                                          \
		struct par_site ps = par_site(ra, fn, K_FOR, &entry);            \
		uint32_t r = ps.parallel;                                        \
		struct body b;                                                   \
		if (!body_init(&b, &ps, fn, data, K_FOR) && r == 0) {            \
			real_##f(fn, data, num_threads, __VA_ARGS__, flags);     \
			return;                                                  \
		}                                                                \
		enter(r);                                                        \
		real_##f(body, &b, num_threads, __VA_ARGS__, flags);             \
		joined(&b, entry);                                               \
		leave(r);                                                        \
	}

PARALLEL_LOOP(GOMP_parallel_loop_static, long start, long end, long incr, long chunk)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_static, start, end, incr, chunk)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic, long start, long end, long incr, long chunk)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_dynamic, start, end, incr, chunk)
PARALLEL_LOOP(GOMP_parallel_loop_guided, long start, long end, long incr, long chunk)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_guided, start, end, incr, chunk)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, long start, long end, long incr, long chunk)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_nonmonotonic_dynamic, start, end, incr, chunk)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, long start, long end, long incr, long chunk)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_nonmonotonic_guided, start, end, incr, chunk)
PARALLEL_LOOP(GOMP_parallel_loop_runtime, long start, long end, long incr)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_runtime, start, end, incr)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_runtime, long start, long end, long incr)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_nonmonotonic_runtime, start, end, incr)
PARALLEL_LOOP(GOMP_parallel_loop_maybe_nonmonotonic_runtime, long start, long end, long incr)
PARALLEL_LOOP_BODY(GOMP_parallel_loop_maybe_nonmonotonic_runtime, start, end, incr)

void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count, unsigned flags);
EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count, unsigned flags)
{
	REAL(GOMP_parallel_sections);
	if (!on()) {
		real_GOMP_parallel_sections(fn, data, num_threads, count, flags);
		return;
	}
	const void *ra = __builtin_return_address(0);
	struct par_site *entry;
	struct par_site ps = par_site(ra, fn, K_SECTIONS, &entry);
	uint32_t r = ps.parallel;
	struct body b;
	if (!body_init(&b, &ps, fn, data, K_SECTIONS) && r == 0) {
		real_GOMP_parallel_sections(fn, data, num_threads, count, flags);
		return;
	}
	enter(r);
	real_GOMP_parallel_sections(body, &b, num_threads, count, flags);
	joined(&b, entry);
	leave(r);
}

/*
 * The ABI of GCC before 4.9: GOMP_parallel_start, then the master runs
 * the body itself, then GOMP_parallel_end, whose barrier ends the region
 * for every thread: the other threads' bodies get no extra barrier (the
 * master would not meet it), and the master's wait is the
 * GOMP_parallel_end call.
 */
struct old_region {
	struct body b;
	uint32_t parallel;
	int depth;
	struct old_region *up;
};
static HMB_OMP_TLS struct old_region *old_regions;

NOINST static struct old_region *old_start(const void *ra, void (*fn)(void *), void *data, int work_kind)
{
	struct old_region *o = aligned_alloc(alignof(struct old_region), sizeof *o); /* a body is a cache line */
	if (o == NULL) {
		return NULL;
	}
	struct par_site *entry; /* the old ABI's regions end in GOMP_parallel_end's barrier: no join word */
	struct par_site ps = par_site(ra, fn, work_kind, &entry);
	o->parallel = ps.parallel;
	if (!body_init(&o->b, &ps, fn, data, work_kind) && o->parallel == 0) {
		free(o);
		return NULL;
	}
	o->b.end_barrier = 0;
	o->up = old_regions;
	old_regions = o;
	enter(o->parallel);
	return o;
}

/* old_master enters the master's implicit task once the team exists. */
NOINST static void old_master(struct old_region *o)
{
	name_thread();
	o->depth = nopen;
	enter(o->b.task);
	if (o->b.work_kind != 0) {
		push(o->b.work_kind, o->b.work);
	}
}

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
EXPORT void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads)
{
	REAL(GOMP_parallel_start);
	struct old_region *o = on() ? old_start(__builtin_return_address(0), fn, data, 0) : NULL;
	if (o == NULL) {
		real_GOMP_parallel_start(fn, data, num_threads);
		return;
	}
	real_GOMP_parallel_start(body, &o->b, num_threads);
	old_master(o);
}

#define OLD_PARALLEL_LOOP(f, ...)                                                              \
	void f(void (*fn)(void *), void *data, unsigned num_threads, __VA_ARGS__);             \
	EXPORT void f(void (*fn)(void *), void *data, unsigned num_threads, __VA_ARGS__)
#define OLD_PARALLEL_LOOP_BODY(f, ...)                                                                          \
	{                                                                                                       \
		REAL(f);                                                                                        \
		struct old_region *o = on() ? old_start(__builtin_return_address(0), fn, data, K_FOR) : NULL; \
		if (o == NULL) {                                                                                \
			real_##f(fn, data, num_threads, __VA_ARGS__);                                           \
			return;                                                                                 \
		}                                                                                               \
		real_##f(body, &o->b, num_threads, __VA_ARGS__);                                                \
		old_master(o);                                                                                  \
	}

OLD_PARALLEL_LOOP(GOMP_parallel_loop_static_start, long start, long end, long incr, long chunk)
OLD_PARALLEL_LOOP_BODY(GOMP_parallel_loop_static_start, start, end, incr, chunk)
OLD_PARALLEL_LOOP(GOMP_parallel_loop_dynamic_start, long start, long end, long incr, long chunk)
OLD_PARALLEL_LOOP_BODY(GOMP_parallel_loop_dynamic_start, start, end, incr, chunk)
OLD_PARALLEL_LOOP(GOMP_parallel_loop_guided_start, long start, long end, long incr, long chunk)
OLD_PARALLEL_LOOP_BODY(GOMP_parallel_loop_guided_start, start, end, incr, chunk)
OLD_PARALLEL_LOOP(GOMP_parallel_loop_runtime_start, long start, long end, long incr)
OLD_PARALLEL_LOOP_BODY(GOMP_parallel_loop_runtime_start, start, end, incr)

void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned num_threads, unsigned count);
EXPORT void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned num_threads, unsigned count)
{
	REAL(GOMP_parallel_sections_start);
	struct old_region *o = on() ? old_start(__builtin_return_address(0), fn, data, K_SECTIONS) : NULL;
	if (o == NULL) {
		real_GOMP_parallel_sections_start(fn, data, num_threads, count);
		return;
	}
	real_GOMP_parallel_sections_start(body, &o->b, num_threads, count);
	old_master(o);
}

void GOMP_parallel_end(void);
EXPORT void GOMP_parallel_end(void)
{
	REAL(GOMP_parallel_end);
	struct old_region *o = old_regions;
	if (o == NULL) {
		real_GOMP_parallel_end();
		return;
	}
	old_regions = o->up;
	close_to(o->depth);
	enter(o->b.barrier);
	real_GOMP_parallel_end();
	leave(o->b.barrier);
	leave(o->b.task);
	leave(o->parallel);
	free(o);
}

/* Barriers. */

void GOMP_barrier(void);
EXPORT void GOMP_barrier(void)
{
	REAL(GOMP_barrier);
	if (!on()) {
		real_GOMP_barrier();
		return;
	}
	uint32_t r = SITE(K_BARRIER);
	enter(r);
	real_GOMP_barrier();
	leave(r);
}

bool GOMP_barrier_cancel(void);
EXPORT bool GOMP_barrier_cancel(void)
{
	REAL(GOMP_barrier_cancel);
	if (!on()) {
		return real_GOMP_barrier_cancel();
	}
	uint32_t r = SITE(K_BARRIER);
	enter(r);
	bool c = real_GOMP_barrier_cancel();
	leave(r);
	return c;
}

/* Loops: a start enters the loop, GOMP_loop_end (with its barrier) or _nowait leaves it. */
#define LOOP_START(T, f, ...)               \
	bool f(__VA_ARGS__);                \
	EXPORT bool f(__VA_ARGS__)
#define LOOP_START_BODY(f, ...)                                        \
	{                                                              \
		REAL(f);                                               \
		if (on()) {                                            \
			push(K_FOR, SITE(K_FOR));                      \
		}                                                      \
		return real_##f(__VA_ARGS__);                          \
	}

#define LONG_CHUNK(f)                                                                              \
	LOOP_START(long, f, long start, long end, long incr, long chunk, long *istart, long *iend) \
	LOOP_START_BODY(f, start, end, incr, chunk, istart, iend)
#define LONG_RUNTIME(f)                                                                \
	LOOP_START(long, f, long start, long end, long incr, long *istart, long *iend) \
	LOOP_START_BODY(f, start, end, incr, istart, iend)
#define ULL_CHUNK(f)                                                                                        \
	LOOP_START(ull, f, bool up, unsigned long long start, unsigned long long end, unsigned long long incr, \
		   unsigned long long chunk, unsigned long long *istart, unsigned long long *iend)            \
	LOOP_START_BODY(f, up, start, end, incr, chunk, istart, iend)
#define ULL_RUNTIME(f)                                                                                      \
	LOOP_START(ull, f, bool up, unsigned long long start, unsigned long long end, unsigned long long incr, \
		   unsigned long long *istart, unsigned long long *iend)                                       \
	LOOP_START_BODY(f, up, start, end, incr, istart, iend)

LONG_CHUNK(GOMP_loop_static_start)
LONG_CHUNK(GOMP_loop_dynamic_start)
LONG_CHUNK(GOMP_loop_guided_start)
LONG_CHUNK(GOMP_loop_nonmonotonic_dynamic_start)
LONG_CHUNK(GOMP_loop_nonmonotonic_guided_start)
LONG_RUNTIME(GOMP_loop_runtime_start)
LONG_RUNTIME(GOMP_loop_nonmonotonic_runtime_start)
LONG_RUNTIME(GOMP_loop_maybe_nonmonotonic_runtime_start)
LONG_CHUNK(GOMP_loop_ordered_static_start)
LONG_CHUNK(GOMP_loop_ordered_dynamic_start)
LONG_CHUNK(GOMP_loop_ordered_guided_start)
LONG_RUNTIME(GOMP_loop_ordered_runtime_start)
ULL_CHUNK(GOMP_loop_ull_static_start)
ULL_CHUNK(GOMP_loop_ull_dynamic_start)
ULL_CHUNK(GOMP_loop_ull_guided_start)
ULL_CHUNK(GOMP_loop_ull_nonmonotonic_dynamic_start)
ULL_CHUNK(GOMP_loop_ull_nonmonotonic_guided_start)
ULL_RUNTIME(GOMP_loop_ull_runtime_start)
ULL_RUNTIME(GOMP_loop_ull_nonmonotonic_runtime_start)
ULL_RUNTIME(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
ULL_CHUNK(GOMP_loop_ull_ordered_static_start)
ULL_CHUNK(GOMP_loop_ull_ordered_dynamic_start)
ULL_CHUNK(GOMP_loop_ull_ordered_guided_start)
ULL_RUNTIME(GOMP_loop_ull_ordered_runtime_start)

LOOP_START(long, GOMP_loop_start, long start, long end, long incr, long sched, long chunk, long *istart, long *iend,
	   uintptr_t *reductions, void **mem)
LOOP_START_BODY(GOMP_loop_start, start, end, incr, sched, chunk, istart, iend, reductions, mem)
LOOP_START(long, GOMP_loop_ordered_start, long start, long end, long incr, long sched, long chunk, long *istart,
	   long *iend, uintptr_t *reductions, void **mem)
LOOP_START_BODY(GOMP_loop_ordered_start, start, end, incr, sched, chunk, istart, iend, reductions, mem)
LOOP_START(ull, GOMP_loop_ull_start, bool up, unsigned long long start, unsigned long long end,
	   unsigned long long incr, long sched, unsigned long long chunk, unsigned long long *istart,
	   unsigned long long *iend, uintptr_t *reductions, void **mem)
LOOP_START_BODY(GOMP_loop_ull_start, up, start, end, incr, sched, chunk, istart, iend, reductions, mem)
LOOP_START(ull, GOMP_loop_ull_ordered_start, bool up, unsigned long long start, unsigned long long end,
	   unsigned long long incr, long sched, unsigned long long chunk, unsigned long long *istart,
	   unsigned long long *iend, uintptr_t *reductions, void **mem)
LOOP_START_BODY(GOMP_loop_ull_ordered_start, up, start, end, incr, sched, chunk, istart, iend, reductions, mem)

/* Doacross loops (ordered(n) with depend(sink/source)). */
LOOP_START(long, GOMP_loop_doacross_static_start, unsigned ncounts, long *counts, long chunk, long *istart, long *iend)
LOOP_START_BODY(GOMP_loop_doacross_static_start, ncounts, counts, chunk, istart, iend)
LOOP_START(long, GOMP_loop_doacross_dynamic_start, unsigned ncounts, long *counts, long chunk, long *istart, long *iend)
LOOP_START_BODY(GOMP_loop_doacross_dynamic_start, ncounts, counts, chunk, istart, iend)
LOOP_START(long, GOMP_loop_doacross_guided_start, unsigned ncounts, long *counts, long chunk, long *istart, long *iend)
LOOP_START_BODY(GOMP_loop_doacross_guided_start, ncounts, counts, chunk, istart, iend)
LOOP_START(long, GOMP_loop_doacross_runtime_start, unsigned ncounts, long *counts, long *istart, long *iend)
LOOP_START_BODY(GOMP_loop_doacross_runtime_start, ncounts, counts, istart, iend)
LOOP_START(long, GOMP_loop_doacross_start, unsigned ncounts, long *counts, long sched, long chunk, long *istart,
	   long *iend, uintptr_t *reductions, void **mem)
LOOP_START_BODY(GOMP_loop_doacross_start, ncounts, counts, sched, chunk, istart, iend, reductions, mem)

void GOMP_loop_end(void);
EXPORT void GOMP_loop_end(void)
{
	REAL(GOMP_loop_end);
	if (!on()) {
		real_GOMP_loop_end();
		return;
	}
	uint32_t r = SITE(K_IMPLICIT_BARRIER);
	enter(r);
	real_GOMP_loop_end();
	leave(r);
	pop(K_FOR);
}

bool GOMP_loop_end_cancel(void);
EXPORT bool GOMP_loop_end_cancel(void)
{
	REAL(GOMP_loop_end_cancel);
	if (!on()) {
		return real_GOMP_loop_end_cancel();
	}
	uint32_t r = SITE(K_IMPLICIT_BARRIER);
	enter(r);
	bool c = real_GOMP_loop_end_cancel();
	leave(r);
	pop(K_FOR);
	return c;
}

void GOMP_loop_end_nowait(void);
EXPORT void GOMP_loop_end_nowait(void)
{
	REAL(GOMP_loop_end_nowait);
	real_GOMP_loop_end_nowait();
	if (on()) {
		pop(K_FOR);
	}
}

/* Sections. */

unsigned GOMP_sections_start(unsigned count);
EXPORT unsigned GOMP_sections_start(unsigned count)
{
	REAL(GOMP_sections_start);
	if (on()) {
		push(K_SECTIONS, SITE(K_SECTIONS));
	}
	return real_GOMP_sections_start(count);
}

unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem);
EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem)
{
	REAL(GOMP_sections2_start);
	if (on()) {
		push(K_SECTIONS, SITE(K_SECTIONS));
	}
	return real_GOMP_sections2_start(count, reductions, mem);
}

void GOMP_sections_end(void);
EXPORT void GOMP_sections_end(void)
{
	REAL(GOMP_sections_end);
	if (!on()) {
		real_GOMP_sections_end();
		return;
	}
	uint32_t r = SITE(K_IMPLICIT_BARRIER);
	enter(r);
	real_GOMP_sections_end();
	leave(r);
	pop(K_SECTIONS);
}

bool GOMP_sections_end_cancel(void);
EXPORT bool GOMP_sections_end_cancel(void)
{
	REAL(GOMP_sections_end_cancel);
	if (!on()) {
		return real_GOMP_sections_end_cancel();
	}
	uint32_t r = SITE(K_IMPLICIT_BARRIER);
	enter(r);
	bool c = real_GOMP_sections_end_cancel();
	leave(r);
	pop(K_SECTIONS);
	return c;
}

void GOMP_sections_end_nowait(void);
EXPORT void GOMP_sections_end_nowait(void)
{
	REAL(GOMP_sections_end_nowait);
	real_GOMP_sections_end_nowait();
	if (on()) {
		pop(K_SECTIONS);
	}
}

/* Single. */

bool GOMP_single_start(void);
EXPORT bool GOMP_single_start(void)
{
	REAL(GOMP_single_start);
	if (!on()) {
		return real_GOMP_single_start();
	}
	uint32_t r = SITE(K_SINGLE);
	enter(r);
	bool mine = real_GOMP_single_start();
	leave(r);
	return mine;
}

void *GOMP_single_copy_start(void);
EXPORT void *GOMP_single_copy_start(void)
{
	REAL(GOMP_single_copy_start);
	if (!on()) {
		return real_GOMP_single_copy_start();
	}
	push(K_SINGLE, SITE(K_SINGLE));
	void *data = real_GOMP_single_copy_start();
	if (data != NULL) {
		pop(K_SINGLE); /* another thread ran it; this one waited for its data */
	}
	return data;
}

void GOMP_single_copy_end(void *data);
EXPORT void GOMP_single_copy_end(void *data)
{
	REAL(GOMP_single_copy_end);
	real_GOMP_single_copy_end(data);
	if (on()) {
		pop(K_SINGLE);
	}
}

/* Mutual exclusion: the construct, and inside it the wait to acquire it. */

NOINST static void critical_enter(const void *ra)
{
	push(K_CRITICAL, hmb_omp_site(K_CRITICAL, ra, NULL));
	enter(hmb_omp_site(K_ACQUIRE, ra, NULL));
}

void GOMP_critical_start(void);
EXPORT void GOMP_critical_start(void)
{
	REAL(GOMP_critical_start);
	if (!on()) {
		real_GOMP_critical_start();
		return;
	}
	const void *ra = __builtin_return_address(0);
	critical_enter(ra);
	real_GOMP_critical_start();
	leave(hmb_omp_site(K_ACQUIRE, ra, NULL));
}

void GOMP_critical_end(void);
EXPORT void GOMP_critical_end(void)
{
	REAL(GOMP_critical_end);
	real_GOMP_critical_end();
	if (on()) {
		pop(K_CRITICAL);
	}
}

void GOMP_critical_name_start(void **pptr);
EXPORT void GOMP_critical_name_start(void **pptr)
{
	REAL(GOMP_critical_name_start);
	if (!on()) {
		real_GOMP_critical_name_start(pptr);
		return;
	}
	const void *ra = __builtin_return_address(0);
	critical_enter(ra);
	real_GOMP_critical_name_start(pptr);
	leave(hmb_omp_site(K_ACQUIRE, ra, NULL));
}

void GOMP_critical_name_end(void **pptr);
EXPORT void GOMP_critical_name_end(void **pptr)
{
	REAL(GOMP_critical_name_end);
	real_GOMP_critical_name_end(pptr);
	if (on()) {
		pop(K_CRITICAL);
	}
}

void GOMP_atomic_start(void);
EXPORT void GOMP_atomic_start(void)
{
	REAL(GOMP_atomic_start);
	if (on()) {
		push(K_ATOMIC, SITE(K_ATOMIC));
	}
	real_GOMP_atomic_start();
}

void GOMP_atomic_end(void);
EXPORT void GOMP_atomic_end(void)
{
	REAL(GOMP_atomic_end);
	real_GOMP_atomic_end();
	if (on()) {
		pop(K_ATOMIC);
	}
}

void GOMP_ordered_start(void);
EXPORT void GOMP_ordered_start(void)
{
	REAL(GOMP_ordered_start);
	if (on()) {
		push(K_ORDERED, SITE(K_ORDERED));
	}
	real_GOMP_ordered_start();
}

void GOMP_ordered_end(void);
EXPORT void GOMP_ordered_end(void)
{
	REAL(GOMP_ordered_end);
	real_GOMP_ordered_end();
	if (on()) {
		pop(K_ORDERED);
	}
}

/* Locks: the wait of omp_set_lock, from C and from Fortran. */
#define LOCK(f, kind)                                 \
	void f(void *lock);                           \
	EXPORT void f(void *lock)                     \
	{                                             \
		REAL(f);                              \
		if (!on()) {                          \
			real_##f(lock);               \
			return;                       \
		}                                     \
		uint32_t r = SITE(kind);              \
		enter(r);                             \
		real_##f(lock);                       \
		leave(r);                             \
	}
LOCK(omp_set_lock, K_LOCK)
LOCK(omp_set_nest_lock, K_NEST_LOCK)
LOCK(omp_set_lock_, K_LOCK)
LOCK(omp_set_nest_lock_, K_NEST_LOCK)

/*
 * Tasks. A task's body is wrapped, so that the thread that runs it, when
 * and wherever libgomp runs it, records the switch to the task,
 * "!$omp task @file:line" around its body, its completion and the switch
 * back to the task it interrupted. The wrapper's header goes in front of
 * the task's data, which libgomp copies with the task; a copy function
 * (C++ firstprivate) is wrapped to copy the header and construct the rest
 * from the original. libgomp never suspends a task in the middle and
 * resumes it elsewhere (it runs untied tasks as tied): a task runs whole,
 * as a call inside the barrier, taskwait, taskgroup end or task creation
 * of the thread that runs it, so its regions nest on that thread's stack.
 */
struct task_head {
	void (*fn)(void *);
	void (*cpyfn)(void *, void *);
	void *orig;
	uint64_t id; /* from hmb_task_create */
	uint32_t region;
	long off;
};

NOINST static void task_body(void *arg)
{
	struct task_head *h = arg;
	int depth = nopen;
	uint64_t up_task = current_task;
	current_task = h->id;
	hmb_task_switch_tied(h->id); /* libgomp never suspends a task */
	enter(h->region);
	void (*up)(void *) = hmb_omp_running;
	hmb_omp_running = h->fn;
	h->fn((char *)arg + h->off);
	hmb_omp_running = up;
	close_to(depth);
	leave(h->region);
	hmb_task_complete_tied(h->id);
	current_task = up_task;
	hmb_task_switch_tied(up_task);
}

NOINST static void task_copy(void *dst, void *src)
{
	struct task_head *s = src;
	memcpy(dst, s, sizeof *s);
	s->cpyfn((char *)dst + s->off, s->orig);
}

void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
	       bool if_clause, unsigned flags, void **depend, int priority, void *detach);
EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
		      bool if_clause, unsigned flags, void **depend, int priority, void *detach)
{
	REAL(GOMP_task);
	if (!on()) {
		real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	const void *ra = __builtin_return_address(0);
	uint32_t create = hmb_omp_site(K_TASK_CREATE, ra, NULL);
	uint32_t run = hmb_omp_site(K_TASK, ra, NULL);
	long align = arg_align > (long)alignof(struct task_head) ? arg_align : (long)alignof(struct task_head);
	long off = ((long)sizeof(struct task_head) + align - 1) / align * align;
	long size = off + (arg_size > 0 ? arg_size : 0);
	alignas(64) char local[512];
	char *buf = local;
	if (size > (long)sizeof local || align > 64) {
		buf = aligned_alloc((size_t)align, (size_t)((size + align - 1) / align * align));
		if (buf == NULL) { /* record the creation only */
			enter(create);
			mark_tasked();
			real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
			leave(create);
			return;
		}
	}
	struct task_head *h = (struct task_head *)buf;
	h->fn = fn;
	h->cpyfn = cpyfn;
	h->orig = data;
	h->region = run;
	h->off = off;
	if (cpyfn == NULL && arg_size > 0) {
		memcpy(buf + off, data, (size_t)arg_size);
	}
	enter(create);
	mark_tasked();
	h->id = hmb_task_create();
	real_GOMP_task(task_body, buf, cpyfn != NULL ? task_copy : NULL, size, align, if_clause, flags, depend,
		       priority, detach);
	leave(create);
	if (buf != local) {
		free(buf);
	}
}

#define AROUND(f, kind)                 \
	void f(void);                   \
	EXPORT void f(void)             \
	{                               \
		REAL(f);                \
		if (!on()) {            \
			real_##f();     \
			return;         \
		}                       \
		uint32_t r = SITE(kind); \
		enter(r);               \
		real_##f();             \
		leave(r);               \
	}
AROUND(GOMP_taskwait, K_TASKWAIT)
AROUND(GOMP_taskyield, K_TASKYIELD)

void GOMP_taskwait_depend(void **depend);
EXPORT void GOMP_taskwait_depend(void **depend)
{
	REAL(GOMP_taskwait_depend);
	if (!on()) {
		real_GOMP_taskwait_depend(depend);
		return;
	}
	uint32_t r = SITE(K_TASKWAIT);
	enter(r);
	real_GOMP_taskwait_depend(depend);
	leave(r);
}

void GOMP_taskgroup_start(void);
EXPORT void GOMP_taskgroup_start(void)
{
	REAL(GOMP_taskgroup_start);
	if (on()) {
		push(K_TASKGROUP, SITE(K_TASKGROUP));
	}
	real_GOMP_taskgroup_start();
}

void GOMP_taskgroup_end(void);
EXPORT void GOMP_taskgroup_end(void)
{
	REAL(GOMP_taskgroup_end);
	real_GOMP_taskgroup_end();
	if (on()) {
		pop(K_TASKGROUP);
	}
}

/* A taskloop's tasks carry their bounds in their data, which leaves no room for a header: the construct only. */
void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
		   unsigned flags, unsigned long num_tasks, int priority, long start, long end, long step);
EXPORT void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
			  long arg_align, unsigned flags, unsigned long num_tasks, int priority, long start, long end,
			  long step)
{
	REAL(GOMP_taskloop);
	if (!on()) {
		real_GOMP_taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
		return;
	}
	uint32_t r = SITE(K_TASKLOOP);
	enter(r);
	mark_tasked();
	real_GOMP_taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
	leave(r);
}

void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
		       unsigned flags, unsigned long num_tasks, int priority, unsigned long long start,
		       unsigned long long end, unsigned long long step);
EXPORT void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
			      long arg_align, unsigned flags, unsigned long num_tasks, int priority,
			      unsigned long long start, unsigned long long end, unsigned long long step)
{
	REAL(GOMP_taskloop_ull);
	if (!on()) {
		real_GOMP_taskloop_ull(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end,
				       step);
		return;
	}
	uint32_t r = SITE(K_TASKLOOP);
	enter(r);
	mark_tasked();
	real_GOMP_taskloop_ull(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step);
	leave(r);
}
