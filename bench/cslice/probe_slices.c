/*
 * probe_slices.c - the C probe's side of bench's interleaved comparison of
 * the Go and the C probe (bench/probeslice.go builds and drives it).
 *
 *   probe_slices CPU
 *
 * It pins itself to CPU, starts the measurement, then reads one number a
 * line from stdin, N, runs N iterations of the call pattern of
 * cshim/bench/probe_bench.c and of bench's Go probe (two nested regions:
 * enter outer, enter inner, leave inner, leave outer), after 1000 untimed
 * ones, and answers with
 * one line: the thread CPU time per event in ns, and the minor faults the
 * slice took. At the end of its input it finalizes and exits.
 *
 * Why slices: on this shared VM the speed of the whole machine changes
 * for milliseconds to seconds at a time (the host's other load and
 * clock), by up to 1.7x for the probes. A Go run and a C run timed at
 * different moments compare those moments, not the probes; slices of
 * half a millisecond, alternated with the Go probe's on the same CPU, see
 * the same machine.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "hmbtrace.h"

/* Iterations run untimed before each slice; bench/probeslice.go's warmIterations. */
#define WARM_ITERATIONS 1000

static long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: probe_slices CPU\n");
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("probe_slices: sched_setaffinity");
		return 1;
	}
	if (hmb_init() != 0) {
		fprintf(stderr, "probe_slices: hmb_init: %s\n", hmb_last_error());
		return 1;
	}
	uint32_t outer = hmb_region("outer"), inner = hmb_region("inner");
	long n;
	while (scanf("%ld", &n) == 1 && n > 0) {
		/* As the Go side: the first iterations after the switch from the
		   other process refill the caches and TLBs, untimed. */
		for (long i = 0; i < WARM_ITERATIONS; i++) {
			hmb_enter(outer);
			hmb_enter(inner);
			hmb_leave(inner);
			hmb_leave(outer);
		}
		long f0 = minor_faults();
		long long c0 = thread_cpu_ns();
		for (long i = 0; i < n; i++) {
			hmb_enter(outer);
			hmb_enter(inner);
			hmb_leave(inner);
			hmb_leave(outer);
		}
		long long c1 = thread_cpu_ns();
		printf("%.4f %ld\n", (double)(c1 - c0) / (4.0 * (double)n), minor_faults() - f0);
		fflush(stdout);
	}
	if (hmb_finalize() != 0) {
		fprintf(stderr, "probe_slices: hmb_finalize: %s\n", hmb_last_error());
		return 1;
	}
	return 0;
}
