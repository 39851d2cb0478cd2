/*
 * throttle_preempt: a C++-shaped hot loop (LULESH's accessors: short calls,
 * 10^5 per thread) on several threads, each preempted inside a different
 * number of its accessor calls (a 1 ms sleep stands for the scheduler), so
 * that the mean time per call differs widely between threads while the
 * calls themselves do not. Every thread must throttle the same regions:
 * the two accessors, and not "mixed", half of whose calls take 1 us.
 * Run with the default throttling settings.
 *
 * Prints "thread <i> preempted <n>" per thread.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <hmbtrace.h>

#define THREADS 4
#define ITERS 50
#define CALLS 2000 /* accessor calls per iteration and accessor: 10^5 per thread */

static uint32_t r_force, r_fx, r_x, r_mixed;
static double mesh[CALLS];

/* spin busy-waits ns nanoseconds: a call of known length, without a sleep. */
static void spin(long ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* The accessor calls to preempt on thread i: about i*i*6 of them (0, 6, 25, 55), spread evenly. */
static int preempted(int i, int call)
{
	int n = i * i * 6;
	return n > 0 && call % (ITERS * CALLS / n) == 7;
}

static void *work(void *arg)
{
	int i = (int)(intptr_t)arg, n = 0;
	volatile double sum = 0;
	for (int it = 0; it < ITERS; it++) {
		hmb_enter(r_force);
		for (int c = 0; c < CALLS; c++) {
			hmb_enter(r_fx);
			sum += mesh[c];
			if (preempted(i, it * CALLS + c)) {
				struct timespec ms = {0, 1000000};
				nanosleep(&ms, NULL);
				n++;
			}
			hmb_leave(r_fx);
			hmb_enter(r_x);
			sum += 2 * mesh[c];
			hmb_leave(r_x);
		}
		for (int c = 0; c < 200; c++) {
			hmb_enter(r_mixed);
			if (c % 2)
				spin(1000);
			hmb_leave(r_mixed);
		}
		hmb_leave(r_force);
	}
	printf("thread %d preempted %d\n", i, n);
	return NULL;
}

int main(void)
{
	if (hmb_init() != 0)
		return 1;
	r_force = hmb_region("CalcForceForNodes");
	r_fx = hmb_region("Domain::fx(int)");
	r_x = hmb_region("Domain::x(int)");
	r_mixed = hmb_region("mixed");
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, work, (void *)(intptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}
