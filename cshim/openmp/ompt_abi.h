/*
 * ompt_abi.h - the OMPT ABI (OpenMP 5.1, section 4; omp-tools.h), as much as
 * the adapter uses, declared here so that it builds with any C compiler,
 * without clang's headers; and the callbacks the adapter registers, which
 * the benchmark's null tool (cshim/bench/openmp_nulltool.c) registers too,
 * so that it measures what libomp itself spends with this tool attached.
 * Not installed.
 */
#ifndef HMB_OMPT_ABI_H
#define HMB_OMPT_ABI_H

#include <stdint.h>

typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;
typedef struct {
	ompt_data_t exit_frame, enter_frame;
	int exit_frame_flags, enter_frame_flags;
} ompt_frame_t;
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *name);
typedef void (*ompt_callback_t)(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef struct {
	int (*initialize)(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data);
	void (*finalize)(ompt_data_t *tool_data);
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

enum {
	ompt_callback_parallel_begin = 3,
	ompt_callback_parallel_end = 4,
	ompt_callback_task_create = 5,
	ompt_callback_task_schedule = 6,
	ompt_callback_implicit_task = 7,
	ompt_callback_mutex_released = 17,
	ompt_callback_work = 20,
	ompt_callback_masked = 21,
	ompt_callback_sync_region = 23,
	ompt_callback_mutex_acquire = 26,
	ompt_callback_mutex_acquired = 27,
};
enum { ompt_scope_begin = 1, ompt_scope_end = 2, ompt_scope_beginend = 3 };
enum {
	ompt_sync_region_barrier = 1,
	ompt_sync_region_barrier_implicit = 2,
	ompt_sync_region_barrier_explicit = 3,
	ompt_sync_region_barrier_implementation = 4,
	ompt_sync_region_taskwait = 5,
	ompt_sync_region_taskgroup = 6,
	ompt_sync_region_reduction = 7,
	ompt_sync_region_barrier_implicit_workshare = 8,
	ompt_sync_region_barrier_implicit_parallel = 9,
	ompt_sync_region_barrier_teams = 10,
};
enum {
	ompt_work_loop = 1,
	ompt_work_sections = 2,
	ompt_work_single_executor = 3,
	ompt_work_single_other = 4,
	ompt_work_workshare = 5,
	ompt_work_distribute = 6,
	ompt_work_taskloop = 7,
	ompt_work_scope = 8,
};
enum {
	ompt_mutex_lock = 1,
	ompt_mutex_test_lock = 2,
	ompt_mutex_nest_lock = 3,
	ompt_mutex_test_nest_lock = 4,
	ompt_mutex_critical = 5,
	ompt_mutex_atomic = 6,
	ompt_mutex_ordered = 7,
};
enum {
	ompt_task_initial = 1,
	ompt_task_implicit = 2,
	ompt_task_explicit = 4,
	ompt_task_target = 8,
	ompt_task_untied = 0x10000000,
};
enum {
	ompt_task_complete = 1,
	ompt_task_yield = 2,
	ompt_task_cancel = 3,
	ompt_task_detach = 4,
	ompt_task_early_fulfill = 5,
	ompt_task_late_fulfill = 6,
	ompt_task_switch = 7,
};

/* The signatures of the callbacks the adapter registers. */
typedef void ompt_callback_parallel_begin_t(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
					    unsigned requested, int flags, const void *ra);
typedef void ompt_callback_parallel_end_t(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *ra);
typedef void ompt_callback_implicit_task_t(int endpoint, ompt_data_t *parallel, ompt_data_t *task, unsigned actual,
					   unsigned index, int flags);
typedef void ompt_callback_sync_region_t(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task,
					 const void *ra);
typedef void ompt_callback_work_t(int wstype, int endpoint, ompt_data_t *parallel, ompt_data_t *task, uint64_t count,
				  const void *ra);
typedef void ompt_callback_masked_t(int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *ra);
typedef void ompt_callback_mutex_acquire_t(int kind, unsigned hint, unsigned impl, uint64_t wait_id, const void *ra);
typedef void ompt_callback_mutex_t(int kind, uint64_t wait_id, const void *ra);
typedef void ompt_callback_task_create_t(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *created,
					 int flags, int deps, const void *ra);
typedef void ompt_callback_task_schedule_t(ompt_data_t *prior, int status, ompt_data_t *next);

/*
 * HMB_OMPT_CALLBACKS(X) lists the callbacks the adapter registers: X(event,
 * name, type) for each, name the suffix of its function (on_<name> in
 * ompt.c).
 */
#define HMB_OMPT_CALLBACKS(X)                                                                  \
	X(ompt_callback_parallel_begin, parallel_begin, ompt_callback_parallel_begin_t)        \
	X(ompt_callback_parallel_end, parallel_end, ompt_callback_parallel_end_t)              \
	X(ompt_callback_implicit_task, implicit_task, ompt_callback_implicit_task_t)           \
	X(ompt_callback_sync_region, sync_region, ompt_callback_sync_region_t)                 \
	X(ompt_callback_work, work, ompt_callback_work_t)                                      \
	X(ompt_callback_masked, masked, ompt_callback_masked_t)                                \
	X(ompt_callback_mutex_acquire, mutex_acquire, ompt_callback_mutex_acquire_t)           \
	X(ompt_callback_mutex_acquired, mutex_acquired, ompt_callback_mutex_t)                 \
	X(ompt_callback_mutex_released, mutex_released, ompt_callback_mutex_t)                 \
	X(ompt_callback_task_create, task_create, ompt_callback_task_create_t)                 \
	X(ompt_callback_task_schedule, task_schedule, ompt_callback_task_schedule_t)

#endif /* HMB_OMPT_ABI_H */
