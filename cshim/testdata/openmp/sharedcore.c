/*
 * sharedcore.c - parallel regions whose threads share one core (the test
 * runs it under taskset), in which the other threads reach the region's
 * end first and wait there while thread 0 computes: thread 0 yields the
 * core at the start of its part, so that the others, runnable since the
 * fork, run theirs first. It prints the context switches the process
 * made per region (getrusage: all its threads), voluntary ones (a thread
 * that slept) and involuntary ones (a thread that was preempted or
 * yielded).
 *
 *     sharedcore REGIONS WORK_US
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double thread_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sharedcore REGIONS WORK_US\n");
		return 2;
	}
	int regions = atoi(argv[1]);
	double work = atof(argv[2]);
	volatile double sink = 0;
	long parts = 0;
	struct rusage a, b;
	getrusage(RUSAGE_SELF, &a);
	for (int r = 0; r < regions; r++) {
#pragma omp parallel reduction(+ : parts)
		{
			if (omp_get_thread_num() == 0) {
				sched_yield();
				/* Computing, not sleeping: thread 0 needs the core the others wait on. */
				double end = thread_us() + work;
				while (thread_us() < end) {
					sink = sink + 1;
				}
			}
			parts++;
		}
	}
	getrusage(RUSAGE_SELF, &b);
	printf("parts %ld voluntary %.3f involuntary %.3f\n", parts,
	       (double)(b.ru_nvcsw - a.ru_nvcsw) / regions, (double)(b.ru_nivcsw - a.ru_nivcsw) / regions);
	return 0;
}
