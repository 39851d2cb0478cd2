/*
 * ompt.c - LLVM's and Intel's OpenMP runtimes (libomp) seen through OMPT,
 * the tool interface of OpenMP 5: libomp calls ompt_start_tool, which
 * this library defines, at its start, and the tool's callbacks at every
 * parallel region, implicit task, barrier, worksharing construct, mutex
 * and task. HMB_OPENMP=0 turns the tool off (ompt_start_tool returns NULL).
 *
 * The OMPT types are the ABI the OpenMP 5.1 specification defines
 * (omp-tools.h), declared in ompt_abi.h so that the adapter builds with any
 * C compiler, without clang's headers.
 *
 * Tasks. OMPT tells a task's creation (task_create: hmb_task_create on
 * the creating thread gives it its id) and each switch between tasks on a
 * thread (task_schedule). A switch to an explicit task records the switch,
 * and the first one enters its region "!$omp task @file:line" on the
 * thread that runs it; its completion leaves the region, records the
 * completion, and the switch to the task the thread resumes (0: its
 * implicit task). A task suspended at a scheduling point inside it (a
 * taskwait, a taskyield, a barrier) while others run there stays open: they
 * nest inside it. A task that libomp leaves for the task below it on the
 * thread without completing it has returned to the scheduler: an untied
 * task's part, which may resume on another thread. It is suspended
 * (hmb_task_suspend leaves the regions it has open), and the switch that
 * resumes it, on any thread, enters them again: every thread's stack stays
 * well nested, and the switch records give each task its own stack in the
 * OTF2 export, as Score-P has it (Knüpfer et al.). Only an untied task
 * (ompt_task_untied at its creation) can be suspended so: a tied task's
 * switches and completion are hmb_task_switch_tied and
 * hmb_task_complete_tied, which cost about a C probe, where the untied
 * task's are a call into Go each.
 */
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hmbtrace.h"
#include "omp.h"
#include "ompt_abi.h"

#define NOINST HMB_OMP_NOINST
#define EXPORT __attribute__((visibility("default"))) NOINST

/*
 * The thread's state that every parallel region's callbacks touch, in one
 * block: a callback finds all of it from one address, and the counts and
 * the outermost levels' places share a cache line. opened holds the
 * thread's open regions whose end is a later callback (nopen of them),
 * with their kind, so that an end leaves what its begin entered; path the
 * thread numbers from the outermost team in (level of them), as in
 * hmb_omp_name; worker and joined are described below, nforked and
 * nrunning count forked and running.
 */
#define OPEN_MAX 64
#define LEVELS 16
static HMB_OMP_TLS struct {
	int nopen, level, worker, joined, nforked, nrunning;
	unsigned owned; /* bit i: the region forked at depth i (< FORKED) is in the thread's stacks */
	int path[LEVELS];
	struct {
		uint32_t region;
		int kind;
	} opened[OPEN_MAX];
} me;

NOINST static void push(int kind, uint32_t region)
{
	if (me.nopen < OPEN_MAX) {
		me.opened[me.nopen].kind = kind;
		me.opened[me.nopen].region = region;
		if (region != 0) {
			hmb_enter(region);
		}
	}
	me.nopen++;
}

NOINST static void pop(int kind)
{
	if (me.nopen > OPEN_MAX) {
		me.nopen--;
	} else if (me.nopen > 0 && me.opened[me.nopen - 1].kind == kind) {
		me.nopen--;
		if (me.opened[me.nopen].region != 0) {
			hmb_leave(me.opened[me.nopen].region);
		}
	}
}

/*
 * The parallel construct's return address at each level of the thread's
 * implicit tasks (1-based), or the struct parallel that has it (the
 * forking thread's, alive while the region is: read only when a
 * construct is named, so that the team's threads need not read it).
 */
struct parallel;
static HMB_OMP_TLS const void *parallel_at[LEVELS + 1];
static HMB_OMP_TLS const struct parallel *parallel_of[LEVELS + 1];

/*
 * A worker (a thread other than a team's thread 0) whose implicit task
 * libomp has yet to end: libomp tells a worker's end of the barrier at the
 * end of a parallel region, and the end of its implicit task, only when
 * the worker is woken for the next region (or at exit). The adapter ends
 * the worker's implicit task when it reaches that barrier instead, and
 * ignores the late ends.
 */

/*
 * A parallel region: where it is, its regions and the path of the thread
 * that forked it, as far as its level. Its parallel data is a pointer to
 * it, or, for one of the forking thread's first FORKED (in its stacks, alive
 * as long as the thread), the pointer packed with the level and the
 * implicit tasks' region (PAR_PACKED): what the team's threads need at the
 * start of their implicit tasks, in the runtime's team structure that they
 * read anyway, so that those of an outermost region need not read this
 * one, which the forking thread has just written (a cache miss each).
 */
struct parallel {
	const void *ra;
	uint32_t region, task; /* the parallel region, and the implicit tasks' */
	uint32_t barrier;      /* the forking thread's implicit barrier at its end, once known (0: not yet) */
	int level;
	int path[LEVELS];
	/* One not in the stacks (malloc'd): the thread's count of forked regions at its begin, and the next one out that is malloc'd too. */
	int depth;
	struct parallel *outer;
} __attribute__((aligned(64)));

#define PAR_PACKED (1ull << 63)
#define PAR_PTR_BITS 41 /* the address >> 6: 47 bits, 64-byte aligned */
#define PAR_LEVEL_BITS 4
#define PAR_TASK_BITS 18

#define FORKED 8

/*
 * The explicit tasks the thread runs (their task_key), innermost last,
 * each at a scheduling point of the one before; 0 marks where an implicit
 * task begins. A task that the runtime leaves for the one below it without
 * completing it has returned to the scheduler with constructs open: an
 * untied task's part, which may resume on another thread. It is suspended
 * (hmb_task_suspend leaves its regions), and its constructs are opened
 * again where it resumes. A task left for a new one at a scheduling point
 * (a taskwait) is not: the new one nests inside it.
 */
#define RUNNING_MAX 256

/*
 * A thread's stacks of the regions it forked and the tasks it runs: 3 KiB
 * made at its first callback that needs them, never given back (a
 * region's data may point into them while the thread lives). Not in the
 * static TLS, which every thread of the process zeroes as it starts: with
 * GCC's libgomp, whose threads never use them, that was a page fault a
 * thread, 1,024 of them in a team's first region.
 */
struct stacks {
	struct parallel forked[FORKED];
	uint64_t running[RUNNING_MAX];
};
static HMB_OMP_TLS struct stacks *stacks;

/*
 * The thread's forked regions that are not in its stacks (malloc'd),
 * innermost first. A region's end finds its struct parallel here or in the
 * stacks, never through its parallel data: libomp (LLVM 14's
 * __kmp_join_call) reads that data for parallel_end from the team after it
 * has given the team back to its pool and released the fork-join lock, so
 * another thread's nested fork may have taken the team and set the data to
 * its own region by then. Freeing what that pointed to freed the other
 * thread's stacks (heap corruption in about 1 run of 100 of omp.c).
 */
static HMB_OMP_TLS struct parallel *spilled;

/* my_stacks returns the thread's stacks, made on first use; NULL if there is no memory for them. */
NOINST static struct stacks *my_stacks(void)
{
	struct stacks *s = stacks;
	if (__builtin_expect(s == NULL, 0)) {
		s = aligned_alloc(alignof(struct stacks), sizeof *s);
		if (s != NULL) {
			memset(s, 0, sizeof *s);
			stacks = s;
		}
	}
	return s;
}

NOINST const void *hmb_omp_parallel_at(int up)
{
	int l = me.level - up;
	if (up < 0 || l <= 0 || l > LEVELS) {
		return NULL;
	}
	return parallel_of[l] != NULL ? parallel_of[l]->ra : parallel_at[l];
}

/* parallel_pack returns p's parallel data: packed when it fits. */
NOINST static uint64_t parallel_pack(struct parallel *p, int packable)
{
	uintptr_t a = (uintptr_t)p;
	if (packable && p->level >= 0 && p->level < (1 << PAR_LEVEL_BITS) && p->task < (1u << PAR_TASK_BITS) &&
	    (a & 63) == 0 && (a >> 6) < (1ull << PAR_PTR_BITS)) {
		return PAR_PACKED | (uint64_t)p->task << (PAR_PTR_BITS + PAR_LEVEL_BITS) |
		       (uint64_t)p->level << PAR_PTR_BITS | (uint64_t)(a >> 6);
	}
	return (uint64_t)a;
}

/* parallel_unpack returns the struct parallel of parallel data v, and its level and implicit tasks' region. */
NOINST static inline struct parallel *parallel_unpack(uint64_t v, int *level_of, uint32_t *task)
{
	if (v & PAR_PACKED) {
		*level_of = (int)(v >> PAR_PTR_BITS) & ((1 << PAR_LEVEL_BITS) - 1);
		*task = (uint32_t)(v >> (PAR_PTR_BITS + PAR_LEVEL_BITS)) & ((1u << PAR_TASK_BITS) - 1);
		return (struct parallel *)(uintptr_t)((v & ((1ull << PAR_PTR_BITS) - 1)) << 6);
	}
	struct parallel *p = (struct parallel *)(uintptr_t)v;
	*level_of = p != NULL ? p->level : 0;
	*task = p != NULL ? p->task : 0;
	return p;
}

NOINST static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
				     unsigned requested, int flags, const void *ra)
{
	(void)task, (void)frame, (void)requested, (void)flags;
	/* Parallel regions nest on the thread that forks them: a stack, malloc beyond it. */
	struct stacks *s = my_stacks();
	int depth = me.nforked, own = s != NULL && depth < FORKED;
	struct parallel *p = own ? &s->forked[depth] : aligned_alloc(alignof(struct parallel), sizeof *p);
	me.nforked++;
	parallel->value = 0;
	if (p == NULL) {
		return;
	}
	if (own) {
		me.owned |= 1u << depth;
	} else {
		p->depth = depth;
		p->outer = spilled;
		spilled = p;
	}
	p->level = me.level;
	if (me.level > 0) { /* an outermost region's path is empty: no call to memcpy */
		memcpy(p->path, me.path, (size_t)(me.level < LEVELS ? me.level : LEVELS) * sizeof me.path[0]);
	}
	/* The slot's last region at this depth is most often this one again: its regions are known. */
	if (!own || p->ra != ra || p->region == 0 || p->task == 0) {
		p->ra = ra;
		p->region = hmb_omp_site(K_PARALLEL, ra, NULL);
		p->task = hmb_omp_site(K_IMPLICIT_TASK, ra, NULL); /* once for the team */
		p->barrier = 0;
	}
	parallel->value = parallel_pack(p, own);
	push(K_PARALLEL, p->region);
}

/* on_parallel_end ends the thread's innermost forked region; parallel, which may be another's by now (spilled), is not read. */
NOINST static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *ra)
{
	(void)parallel, (void)task, (void)flags, (void)ra;
	if (me.nforked <= 0) {
		return;
	}
	int depth = --me.nforked;
	if (depth < FORKED && (me.owned >> depth & 1)) {
		me.owned &= ~(1u << depth);
		pop(K_PARALLEL);
	} else if (spilled != NULL && spilled->depth == depth) {
		struct parallel *p = spilled;
		spilled = p->outer;
		pop(K_PARALLEL);
		free(p);
	} /* else its struct parallel could not be made: nothing was entered */
}

/* close_task leaves the innermost implicit task and what it left open (an untied task resumed elsewhere). */
NOINST static void close_task(void)
{
	while (me.nopen > 0) {
		int top = me.nopen - 1 < OPEN_MAX ? me.opened[me.nopen - 1].kind : 0;
		if (top == K_IMPLICIT_TASK) {
			pop(K_IMPLICIT_TASK);
			return;
		}
		if (top == 0) {
			me.nopen--;
		} else {
			pop(top);
		}
	}
}

/* An implicit task's data: its region, and the thread's level and worker flag before it. */
#define TASK_EXPLICIT (1ull << 63)

/*
 * An explicit task's data points to its task_info, tagged with
 * TASK_EXPLICIT (a user-space pointer never has bit 63 set): made at its
 * creation, freed at its completion (a detached task's at its fulfillment).
 * A tied task, which is never suspended, needs no more than its id, its
 * region and whether it started: they are packed into its data instead
 * (TASK_PACKED), which spares the creating thread a malloc and the thread
 * that completes it a free of memory another thread wrote.
 */
#define TASK_PACKED (1ull << 62)
#define TASK_STARTED (1ull << 61)
#define PACKED_ID_BITS 40
#define PACKED_REGION_BITS 21
#define SAVED_MAX 16
struct task_info {
	uint64_t id; /* from hmb_task_create */
	uint32_t region;
	int started, done;
	int untied; /* only an untied task is ever suspended: a tied one's records take the direct path */
	_Atomic int active; /* a thread runs it, or has yet to record its suspension */
	int base; /* the thread's open constructs (nopen) when it last switched to the task */
	/* The task's constructs open when it was suspended, entered again where it resumes. */
	int nsaved;
	struct {
		uint32_t region;
		int kind;
	} saved[SAVED_MAX];
};

NOINST static inline struct task_info *explicit_task(const ompt_data_t *t)
{
	return t != NULL && (t->value & TASK_EXPLICIT) ? (struct task_info *)(uintptr_t)(t->value & ~TASK_EXPLICIT) : NULL;
}

/* task_key tells an explicit task by its data (0: none, an implicit or initial task). */
NOINST static inline uint64_t task_key(const ompt_data_t *t)
{
	if (t == NULL) {
		return 0;
	}
	if (t->value & TASK_EXPLICIT) {
		return t->value;
	}
	return (t->value & TASK_PACKED) ? t->value & ~TASK_STARTED : 0;
}

/* running_at returns the thread's running task i (stacks' running), 0 where there is none. */
NOINST static inline uint64_t running_at(int i)
{
	return i >= 0 && i < me.nrunning && i < RUNNING_MAX && stacks != NULL ? stacks->running[i] : 0;
}

/* set_running sets the thread's running task i to key, if its stacks hold it. */
NOINST static inline void set_running(int i, uint64_t key)
{
	struct stacks *s = my_stacks();
	if (i < RUNNING_MAX && s != NULL) {
		s->running[i] = key;
	}
}

/*
 * implicit_begin starts the thread's implicit task of the parallel region
 * whose data is parallel, as thread index of its team. A function of its
 * own, as implicit_end is, so that each saves only the registers it uses.
 */
NOINST __attribute__((noinline)) static void implicit_begin(ompt_data_t *parallel, ompt_data_t *task, unsigned index)
{
	int l;
	uint32_t r;
	uint64_t v = parallel != NULL ? parallel->value : 0;
	struct parallel *p = parallel_unpack(v, &l, &r);
	int prev = me.level;
	if (p != NULL && l > 0) {
		memcpy(me.path, p->path, (size_t)(l < LEVELS ? l : LEVELS) * sizeof me.path[0]);
	}
	if (l < LEVELS) {
		me.path[l] = (int)index;
	}
	me.level = l + 1;
	if (me.level <= LEVELS) {
		/* a packed one is the forking thread's own, alive with it; another is freed at its end */
		parallel_of[me.level] = (v & PAR_PACKED) ? p : NULL;
		parallel_at[me.level] = (v & PAR_PACKED) || p == NULL ? NULL : p->ra;
	}
	hmb_omp_name_at(me.level < LEVELS ? me.level : LEVELS, me.path);
	if (p == NULL) {
		r = hmb_omp_site(K_IMPLICIT_TASK, NULL, NULL);
	}
	task->value = (uint64_t)r | (uint64_t)(uint16_t)prev << 32 | (uint64_t)(me.worker != 0) << 48;
	me.worker = index != 0;
	me.joined = 0;
	set_running(me.nrunning, 0);
	me.nrunning++;
	push(K_IMPLICIT_TASK, r);
}

/* implicit_end ends the thread's implicit task whose data is task, unless it ended at its barrier. */
NOINST __attribute__((noinline)) static void implicit_end(ompt_data_t *task)
{
	while (me.nrunning > 0) {
		me.nrunning--;
		if (me.nrunning >= RUNNING_MAX || stacks == NULL || stacks->running[me.nrunning] == 0) {
			break;
		}
	}
	if (!me.joined) {
		close_task();
	}
	me.joined = 0;
	me.level = (int)(uint16_t)(task->value >> 32);
	me.worker = (int)(task->value >> 48) & 1;
}

NOINST static void on_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task, unsigned actual,
				    unsigned index, int flags)
{
	(void)actual;
	if (flags & ompt_task_initial) {
		return; /* the program's own thread outside any parallel region */
	}
	if (endpoint == ompt_scope_begin) {
		implicit_begin(parallel, task, index);
	} else if (endpoint == ompt_scope_end) {
		implicit_end(task);
	}
}

NOINST static int sync_kind(int kind)
{
	switch (kind) {
	case ompt_sync_region_barrier:
	case ompt_sync_region_barrier_explicit:
		return K_BARRIER;
	case ompt_sync_region_taskwait:
		return K_TASKWAIT;
	case ompt_sync_region_taskgroup:
		return K_TASKGROUP;
	case ompt_sync_region_reduction:
		return K_REDUCTION;
	default: /* implicit, implementation, teams */
		return K_IMPLICIT_BARRIER;
	}
}

/*
 * implicit_barrier returns the region of an implicit barrier at code
 * address ra in the parallel region whose data is parallel: on the forking
 * thread, the barrier at the region's end, whose address libomp gives as
 * the region's, kept in the region's struct parallel once known.
 */
NOINST static inline uint32_t implicit_barrier(ompt_data_t *parallel, const void *ra)
{
	int l;
	uint32_t r;
	struct parallel *p = parallel != NULL && !me.worker ? parallel_unpack(parallel->value, &l, &r) : NULL;
	if (p == NULL || p->ra != ra || ra == NULL) {
		return hmb_omp_site(K_IMPLICIT_BARRIER, ra, NULL);
	}
	if (p->barrier == 0) {
		p->barrier = hmb_omp_site(K_IMPLICIT_BARRIER, ra, NULL);
	}
	return p->barrier;
}

NOINST static void on_sync_region(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra)
{
	(void)parallel, (void)task;
	int k = sync_kind(kind);
	/* The barrier at the end of a parallel region; libomp before 5.1's kinds gives it no code address. */
	if (me.worker && (kind == ompt_sync_region_barrier_implicit_parallel ||
		       (kind == ompt_sync_region_barrier_implicit && ra == NULL))) {
		if (endpoint == ompt_scope_begin && !me.joined) {
			close_task();
			me.joined = 1;
		}
		return;
	}
	if (endpoint == ompt_scope_begin) {
		push(k, k == K_IMPLICIT_BARRIER ? implicit_barrier(parallel, ra) : hmb_omp_site(k, ra, NULL));
	} else if (endpoint == ompt_scope_end) {
		pop(k);
	}
}

NOINST static int work_kind(int wstype)
{
	switch (wstype) {
	case ompt_work_loop:
		return K_FOR;
	case ompt_work_sections:
		return K_SECTIONS;
	case ompt_work_single_executor:
	case ompt_work_single_other:
		return K_SINGLE;
	case ompt_work_workshare:
		return K_WORKSHARE;
	case ompt_work_distribute:
		return K_DISTRIBUTE;
	case ompt_work_taskloop:
		return K_TASKLOOP;
	default:
		return K_SCOPE;
	}
}

NOINST static void on_work(int wstype, int endpoint, ompt_data_t *parallel, ompt_data_t *task, uint64_t count,
			   const void *ra)
{
	(void)parallel, (void)task, (void)count;
	int k = work_kind(wstype);
	if (endpoint == ompt_scope_begin) {
		push(k, hmb_omp_site(k, ra, NULL));
	} else if (endpoint == ompt_scope_end) {
		pop(k);
	}
}

NOINST static void on_masked(int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra)
{
	(void)parallel, (void)task;
	if (endpoint == ompt_scope_begin) {
		push(K_MASKED, hmb_omp_site(K_MASKED, ra, NULL));
	} else if (endpoint == ompt_scope_end) {
		pop(K_MASKED);
	}
}

/*
 * Mutual exclusion: critical, atomic and ordered are regions from the
 * wait to the release, with the wait for critical as "!$omp critical wait"
 * inside; a lock's wait is a region, the time it is held is not (it spans
 * any code).
 */
NOINST static int mutex_kind(int kind)
{
	switch (kind) {
	case ompt_mutex_critical:
		return K_CRITICAL;
	case ompt_mutex_atomic:
		return K_ATOMIC;
	case ompt_mutex_ordered:
		return K_ORDERED;
	case ompt_mutex_nest_lock:
		return K_NEST_LOCK;
	case ompt_mutex_lock:
		return K_LOCK;
	default:
		return 0; /* a test does not wait */
	}
}

NOINST static void on_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id, const void *ra)
{
	(void)hint, (void)impl, (void)wait_id;
	int k = mutex_kind(kind);
	if (k == 0) {
		return;
	}
	if (k == K_CRITICAL || k == K_ATOMIC || k == K_ORDERED) {
		push(k, hmb_omp_site(k, ra, NULL));
	}
	push(K_ACQUIRE, k == K_CRITICAL ? hmb_omp_site(K_ACQUIRE, ra, NULL) : k == K_LOCK || k == K_NEST_LOCK ? hmb_omp_site(k, ra, NULL) : 0);
}

NOINST static void on_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	(void)wait_id, (void)ra;
	if (mutex_kind(kind) != 0) {
		pop(K_ACQUIRE);
	}
}

NOINST static void on_mutex_released(int kind, uint64_t wait_id, const void *ra)
{
	(void)wait_id, (void)ra;
	int k = mutex_kind(kind);
	if (k == K_CRITICAL || k == K_ATOMIC || k == K_ORDERED) {
		pop(k);
	}
}

NOINST static void on_task_create(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *created, int flags,
				  int deps, const void *ra)
{
	(void)task, (void)frame, (void)deps;
	if (created == NULL || !(flags & ompt_task_explicit)) {
		return;
	}
	uint32_t region = hmb_omp_site(K_TASK, ra, NULL);
	int untied = (flags & ompt_task_untied) != 0;
	if (!untied && region < (1u << PACKED_REGION_BITS)) {
		uint64_t id = hmb_task_create();
		if (id < (1ull << PACKED_ID_BITS)) {
			created->value = TASK_PACKED | (uint64_t)region << PACKED_ID_BITS | id;
			return;
		}
		/* ids past 2^40: the task_info below, with another id (this one is a creation without a run) */
	}
	struct task_info *t = calloc(1, sizeof *t);
	if (t == NULL) {
		return; /* not recorded */
	}
	t->region = region;
	t->untied = untied;
	t->id = hmb_task_create();
	created->value = TASK_EXPLICIT | (uint64_t)(uintptr_t)t;
}

/* suspend leaves p, the thread's running task, at a point its code returned from with constructs open. */
NOINST static void suspend(struct task_info *p)
{
	p->nsaved = 0;
	for (int i = p->base; i < me.nopen && i < OPEN_MAX && p->nsaved < SAVED_MAX; i++) {
		p->saved[p->nsaved].region = me.opened[i].region;
		p->saved[p->nsaved].kind = me.opened[i].kind;
		p->nsaved++;
	}
	if (me.nopen > p->base) {
		me.nopen = p->base; /* hmb_task_suspend leaves their regions */
	}
	hmb_task_suspend(p->id);
	atomic_store_explicit(&p->active, 0, memory_order_release);
}

/*
 * wait_suspended waits for the thread that suspended n to have recorded it
 * (a bounded wait: past it, n resumes without its regions, and the leaves
 * are usage errors): libomp hands an untied task's next part to the queue
 * before the part returns, so another thread may pick it up before the
 * first reports the switch away from it.
 */
NOINST static void wait_suspended(struct task_info *n)
{
	for (int i = 0; i < 100000 && atomic_load_explicit(&n->active, memory_order_acquire); i++) {
		sched_yield();
	}
}

NOINST static void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	struct task_info *p = explicit_task(prior), *n = explicit_task(next);
	uint64_t pk = task_key(prior), nk = task_key(next);
	if (status == ompt_task_early_fulfill) {
		return; /* a detached task's event, not a switch */
	}
	if (status == ompt_task_late_fulfill) {
		if (p != NULL && p->done) {
			prior->value = 0;
			free(p);
		}
		return;
	}
	int done = status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_detach;
	if (pk != 0) {
		int top = running_at(me.nrunning - 1) == pk && me.nrunning <= RUNNING_MAX;
		if (done) {
			pop(K_TASK);
			if (p == NULL) {
				hmb_task_complete_tied(pk & ((1ull << PACKED_ID_BITS) - 1));
			} else if (p->untied) {
				hmb_task_complete(p->id);
			} else {
				hmb_task_complete_tied(p->id);
			}
			if (p != NULL) {
				p->done = 1;
			}
			if (top) {
				me.nrunning--;
			}
		} else if (p != NULL && top && (me.nrunning == 1 ? nk == 0 : running_at(me.nrunning - 2) == nk)) {
			/* Only an untied task returns to the scheduler so; a tied one is packed and never does. */
			suspend(p);
			me.nrunning--;
		}
	}
	if (nk != 0) {
		int below = running_at(me.nrunning - 1) == nk && me.nrunning > 0;
		int started;
		if (n != NULL) {
			if (!below && n->started) {
				wait_suspended(n);
			}
			atomic_store_explicit(&n->active, 1, memory_order_relaxed);
			if (n->untied) {
				hmb_task_switch(n->id);
			} else {
				hmb_task_switch_tied(n->id);
			}
			started = n->started;
			n->started = 1;
		} else {
			hmb_task_switch_tied(nk & ((1ull << PACKED_ID_BITS) - 1));
			started = (next->value & TASK_STARTED) != 0;
			next->value |= TASK_STARTED;
		}
		if (!below) {
			set_running(me.nrunning, nk);
			me.nrunning++;
			if (n != NULL) {
				n->base = me.nopen;
			}
		}
		if (!started) {
			push(K_TASK, n != NULL ? n->region : (uint32_t)(nk >> PACKED_ID_BITS) & ((1u << PACKED_REGION_BITS) - 1));
		} else if (n != NULL) {
			/* hmb_task_switch entered their regions again */
			for (int i = 0; i < n->nsaved; i++, me.nopen++) {
				if (me.nopen < OPEN_MAX) {
					me.opened[me.nopen].region = n->saved[i].region;
					me.opened[me.nopen].kind = n->saved[i].kind;
				}
			}
			n->nsaved = 0;
		}
	} else if (pk != 0) {
		hmb_task_switch(0); /* back in the implicit task */
	}
	if (p != NULL && done && status != ompt_task_detach) {
		prior->value = 0;
		free(p);
	}
}

NOINST static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data)
{
	(void)device, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (set == NULL) {
		return 0;
	}
	hmb_ompt_active = 1;
#define SET(event, name, type)                                                  \
	do {                                                                    \
		static type *const on = on_##name; /* checks the signature */ \
		set(event, (ompt_callback_t)on);                                \
	} while (0);
	HMB_OMPT_CALLBACKS(SET)
#undef SET
	return 1; /* keep the tool */
}

NOINST static void finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);
EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
	(void)omp_version, (void)runtime_version;
	static ompt_start_tool_result_t result = {initialize, finalize, {0}};
	if (hmb_omp_env_off()) {
		return NULL;
	}
	return &result;
}
