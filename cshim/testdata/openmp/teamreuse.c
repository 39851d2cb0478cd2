/*
 * teamreuse.c - the OMPT adapter driven by hand as libomp drives it when
 * two threads fork nested regions at once: libomp reads a region's
 * parallel data for parallel_end from its team after it has given the team
 * back to its pool (LLVM 14, __kmp_join_call), so another thread's fork may
 * have taken the team and set that data to its own region by then. Thread
 * a begins a region, thread b begins one with the same data (the team a's
 * join gave back), a ends its region, then b; each then enters and leaves
 * "after", which must be outside every parallel region. Not linked with an
 * OpenMP runtime: main starts the tool itself.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#include "hmbtrace.h"
#include "ompt_abi.h"

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);

static ompt_callback_t callbacks[32];

static int set_callback(int event, ompt_callback_t callback)
{
	if (event < 0 || event >= 32) {
		return 0;
	}
	callbacks[event] = callback;
	return 1;
}

static ompt_interface_fn_t lookup(const char *name)
{
	return strcmp(name, "ompt_set_callback") == 0 ? (ompt_interface_fn_t)set_callback : NULL;
}

static ompt_data_t team;      /* the team's parallel data, which a's region and then b's have */
static sem_t began, a_may_end, ended_a; /* b began its region; a may end its own; a left "after" */
static uint32_t after;

static void fork_region(ompt_data_t *task, const void *ra)
{
	ompt_frame_t frame = {0};
	((ompt_callback_parallel_begin_t *)callbacks[ompt_callback_parallel_begin])(task, &frame, &team, 2, 0, ra);
}

static void join_region(ompt_data_t *task, const void *ra)
{
	((ompt_callback_parallel_end_t *)callbacks[ompt_callback_parallel_end])(&team, task, 0, ra);
	hmb_enter(after);
	hmb_leave(after);
}

static void *thread_a(void *arg)
{
	(void)arg;
	ompt_data_t task = {0};
	fork_region(&task, (const void *)thread_a);
	sem_post(&began);
	sem_wait(&a_may_end);
	join_region(&task, (const void *)thread_a);
	sem_post(&ended_a);
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	ompt_data_t task = {0};
	sem_wait(&began);
	fork_region(&task, (const void *)thread_b);
	sem_post(&a_may_end);
	sem_wait(&ended_a);
	join_region(&task, (const void *)thread_b);
	return NULL;
}

int main(void)
{
	ompt_start_tool_result_t *tool = ompt_start_tool(201611, "teamreuse");
	if (tool == NULL || !tool->initialize(lookup, 0, &tool->tool_data) ||
	    callbacks[ompt_callback_parallel_begin] == NULL || callbacks[ompt_callback_parallel_end] == NULL) {
		fprintf(stderr, "teamreuse: the tool did not start\n");
		return 1;
	}
	after = hmb_region("after");
	sem_init(&began, 0, 0);
	sem_init(&a_may_end, 0, 0);
	sem_init(&ended_a, 0, 0);
	pthread_t a, b;
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done\n");
	return 0;
}
