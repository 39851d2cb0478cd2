/*
 * openmp_nulltool.c - an OMPT tool that registers exactly the callbacks the
 * OpenMP adapter registers (HMB_OMPT_CALLBACKS, cshim/openmp/ompt_abi.h)
 * and returns from each at once: what libomp itself spends on its tool
 * paths (the callbacks' calls, the data it keeps for a tool, the code
 * addresses it looks up) with a tool attached, which no adapter can avoid.
 * Linked into a clang -fopenmp program instead of libhmbtrace-omp (the
 * benchmark's openmp_bench_clang_null):
 *
 *     clang -O2 -fopenmp -o omp_null openmp_bench.c openmp_nulltool.c
 *
 * Built with -DHMB_NULLTOOL_COUNT, each callback counts its calls by
 * endpoint or kind, and the tool prints the counts at the runtime's end:
 * which callbacks fire per construct (cshim's TestOMPTCallbacksPerRegion).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "../openmp/ompt_abi.h" /* not -I: that directory's omp.h is not the runtime's */

#ifdef HMB_NULLTOOL_COUNT
/* Calls per callback (by name) and per its first argument where it has a kind or an endpoint. */
#define KINDS 16
#define COUNTERS(event, name, type) static _Atomic uint64_t n_##name[KINDS];
HMB_OMPT_CALLBACKS(COUNTERS)
#undef COUNTERS
#define COUNT(name, k) atomic_fetch_add_explicit(&n_##name[(unsigned)(k) < KINDS ? (unsigned)(k) : 0], 1, memory_order_relaxed)
#else
#define COUNT(name, k) (void)(k)
#endif

static void null_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
				unsigned requested, int flags, const void *ra)
{
	(void)task, (void)frame, (void)parallel, (void)requested, (void)flags, (void)ra;
	COUNT(parallel_begin, 0);
}

static void null_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *ra)
{
	(void)parallel, (void)task, (void)flags, (void)ra;
	COUNT(parallel_end, 0);
}

static void null_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task, unsigned actual,
			       unsigned index, int flags)
{
	(void)parallel, (void)task, (void)actual, (void)index;
	/* the initial task's in slot 0, not counted per region */
	COUNT(implicit_task, (flags & ompt_task_initial) ? 0 : endpoint);
}

static void null_sync_region(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra)
{
	(void)parallel, (void)task, (void)ra, (void)endpoint;
	COUNT(sync_region, kind);
}

static void null_work(int wstype, int endpoint, ompt_data_t *parallel, ompt_data_t *task, uint64_t count,
		      const void *ra)
{
	(void)endpoint, (void)parallel, (void)task, (void)count, (void)ra;
	COUNT(work, wstype);
}

static void null_masked(int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra)
{
	(void)parallel, (void)task, (void)ra;
	COUNT(masked, endpoint);
}

static void null_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id, const void *ra)
{
	(void)hint, (void)impl, (void)wait_id, (void)ra;
	COUNT(mutex_acquire, kind);
}

static void null_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	(void)wait_id, (void)ra;
	COUNT(mutex_acquired, kind);
}

static void null_mutex_released(int kind, uint64_t wait_id, const void *ra)
{
	(void)wait_id, (void)ra;
	COUNT(mutex_released, kind);
}

static void null_task_create(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *created, int flags, int deps,
			     const void *ra)
{
	(void)task, (void)frame, (void)created, (void)flags, (void)deps, (void)ra;
	COUNT(task_create, 0);
}

static void null_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	(void)prior, (void)next;
	COUNT(task_schedule, status);
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data)
{
	(void)device, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (set == NULL) {
		return 0;
	}
#define SET(event, name, type)                                            \
	do {                                                              \
		static type *const cb = null_##name; /* checks the signature */ \
		set(event, (ompt_callback_t)cb);                          \
	} while (0);
	HMB_OMPT_CALLBACKS(SET)
#undef SET
	return 1;
}

static void finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
#ifdef HMB_NULLTOOL_COUNT
	/* One line per callback and kind that fired: "ompt <name> <kind> <calls>". */
#define PRINT(event, name, type)                                                                           \
	for (int k = 0; k < KINDS; k++) {                                                                  \
		uint64_t n = atomic_load(&n_##name[k]);                                                    \
		if (n != 0) {                                                                              \
			fprintf(stderr, "ompt %s %d %llu\n", #name, k, (unsigned long long)n);             \
		}                                                                                          \
	}
	HMB_OMPT_CALLBACKS(PRINT)
#undef PRINT
#endif
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);
__attribute__((visibility("default"))) ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
										   const char *runtime_version)
{
	(void)omp_version, (void)runtime_version;
	static ompt_start_tool_result_t result = {initialize, finalize, {0}};
	return &result;
}
