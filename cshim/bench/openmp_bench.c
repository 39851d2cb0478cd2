/*
 * openmp_bench.c - what the OpenMP adapter adds to a construct: empty
 * parallel regions, barriers and tasks, timed per construct. Built plain
 * and with libhmbtrace-omp (see the guide's OpenMP section, docs/guide.md):
 *
 *     gcc -O2 -fopenmp -o omp_plain openmp_bench.c
 *     gcc -O2 -fopenmp -DHMB_PROBE -o omp_traced openmp_bench.c $(pkg-config --cflags --libs hmbtrace-omp)
 *     OMP_NUM_THREADS=2 ./omp_plain; OMP_NUM_THREADS=2 ./omp_traced
 *
 * A task is created by one thread in a single construct and run by any
 * thread of the team; its time is the construct's divided by the tasks.
 * Built with -DHMB_PROBE (the traced build), it also times the C probes
 * hmb_enter and hmb_leave of two nested regions on the first thread, per
 * event, in the same process and rounds: the unit the adapter's cost per
 * event is compared with.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef HMB_PROBE
#include "hmbtrace.h"
#endif

static volatile int sink;

/* probe_ns returns the C probes' ns per event over n iterations of 4 events, or -1 when not built in. */
static double probe_ns(int n)
{
#ifdef HMB_PROBE
	static uint32_t outer, inner;
	if (outer == 0) {
		outer = hmb_region("bench outer");
		inner = hmb_region("bench inner");
	}
	double t0 = omp_get_wtime();
	for (int i = 0; i < n; i++) {
		hmb_enter(outer);
		hmb_enter(inner);
		hmb_leave(inner);
		hmb_leave(outer);
	}
	return (omp_get_wtime() - t0) / (4.0 * n) * 1e9;
#else
	(void)n;
	return -1;
#endif
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	double best_par = 1e9, best_bar = 1e9, best_task = 1e9, best_probe = 1e9;
	for (int round = 0; round < 5; round++) {
		double t0 = omp_get_wtime();
		for (int i = 0; i < n; i++) {
#pragma omp parallel
			{
				if (omp_get_thread_num() < 0) { /* keeps the region from being optimised away */
					abort();
				}
			}
		}
		double t1 = omp_get_wtime();
#pragma omp parallel
		{
			for (int i = 0; i < n; i++) {
#pragma omp barrier
			}
		}
		double t2 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
		for (int i = 0; i < n; i++) {
#pragma omp task
			sink++;
		}
		double t3 = omp_get_wtime();
		double probe = probe_ns(n);
		if ((t1 - t0) / n < best_par) {
			best_par = (t1 - t0) / n;
		}
		if ((t2 - t1) / n < best_bar) {
			best_bar = (t2 - t1) / n;
		}
		if ((t3 - t2) / n < best_task) {
			best_task = (t3 - t2) / n;
		}
		if (probe < best_probe) {
			best_probe = probe;
		}
	}
	printf("parallel region %.0f ns, barrier %.0f ns, task %.0f ns, probe %.1f ns/event (best of 5 rounds of %d)\n",
	       best_par * 1e9, best_bar * 1e9, best_task * 1e9, best_probe, n);
	return 0;
}
