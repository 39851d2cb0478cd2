/*
 * waitstate: an OpenMP loop with one slow thread, for the wait-state
 * analysis (analysis/waitstate). Three threads meet at an explicit barrier
 * in each of ROUNDS parallel regions; thread 2 computes until 5 ms after
 * thread 0 arrived at the barrier, thread 1 arrives with thread 0: the
 * wait at the explicit barrier is 2 x 5 ms a round, delayed by thread 2's
 * compute. Thread 2 learns when thread 0 arrived through a shared
 * variable, so that the planted time does not depend on how the scheduler
 * shares the cores. The compute is a busy loop on clock_gettime that
 * yields the core while its end is far.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hmbtrace.h>

#define ROUNDS 4
#define MS 1000000LL

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t arrived[ROUNDS];

/* compute spins until after of round's arrival, once published. */
static void compute(uint32_t region, int round, int64_t after)
{
	hmb_enter(region);
	int64_t ref, t;
	while ((ref = __atomic_load_n(&arrived[round], __ATOMIC_ACQUIRE)) == 0) {
		sched_yield();
	}
	while ((t = now()) < ref + after) {
		if (ref + after - t > 100000) {
			sched_yield();
		}
	}
	hmb_leave(region);
}

int main(void)
{
	uint32_t r_compute = hmb_region("compute");
	omp_set_num_threads(3);
	for (int round = 0; round < ROUNDS; round++) {
#pragma omp parallel
		{
			int me = omp_get_thread_num();
			if (me == 0) {
				__atomic_store_n(&arrived[round], now(), __ATOMIC_RELEASE);
			} else {
				compute(r_compute, round, me == 2 ? 5 * MS : 0);
			}
#pragma omp barrier
		}
	}
	printf("waitstate: %d rounds\n", ROUNDS);
	return 0;
}
