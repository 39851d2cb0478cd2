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
 * event is compared with. That unit is a probe that records: a pair of
 * regions serves PROBE_GROUP iterations, fewer than the 1024 visits after
 * which throttling (HMB_THROTTLE) may switch a short region off, so no
 * region of the loop is ever throttled, and each round takes new ones.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef HMB_PROBE
#include "hmbtrace.h"
#endif

static volatile int sink;

/* PROBE_GROUP is the iterations of the probe loop one pair of regions serves. */
#define PROBE_GROUP 1000

/* probe_ns returns the C probes' ns per event over n iterations of 4
 * events in round round, or -1 when not built in. The regions are defined
 * before the clock starts. */
static double probe_ns(int n, int round)
{
#ifdef HMB_PROBE
	int groups = (n + PROBE_GROUP - 1) / PROBE_GROUP;
	uint32_t *ids = malloc(2 * (size_t)(groups > 0 ? groups : 1) * sizeof *ids);
	if (ids == NULL) {
		perror("openmp_bench: the probe's regions");
		exit(1);
	}
	for (int g = 0; g < groups; g++) {
		char name[64];
		snprintf(name, sizeof name, "bench outer %d.%d", round, g);
		ids[2 * g] = hmb_region(name);
		snprintf(name, sizeof name, "bench inner %d.%d", round, g);
		ids[2 * g + 1] = hmb_region(name);
	}
	double t0 = omp_get_wtime();
	for (int g = 0, i = 0; g < groups; g++) {
		uint32_t outer = ids[2 * g], inner = ids[2 * g + 1];
		for (int end = i + PROBE_GROUP < n ? i + PROBE_GROUP : n; i < end; i++) {
			hmb_enter(outer);
			hmb_enter(inner);
			hmb_leave(inner);
			hmb_leave(outer);
		}
	}
	double ns = (omp_get_wtime() - t0) / (4.0 * n) * 1e9;
	free(ids);
	return ns;
#else
	(void)n;
	(void)round;
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
		double probe = probe_ns(n, round);
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
