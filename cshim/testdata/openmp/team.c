/*
 * team.c - two parallel regions of a large team: more threads than may
 * call Go themselves (goproxy.c), so that most register in C alone and
 * stage their records until their first replay (runtime.c, hmb_locate).
 * In the first region every thread records CALLS calls of "work", and
 * every eighth thread LONG calls, enough to fill its staging array, so
 * that it makes its location and replays in the middle of the region; in
 * the second, one call each. Then the trace is written and what was
 * dropped printed.
 *
 *     team THREADS CALLS LONG
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "hmbtrace.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s THREADS CALLS LONG\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]), calls = atoi(argv[2]), long_calls = atoi(argv[3]);
	uint32_t work = hmb_region("work");
	int ran = 0;
#pragma omp parallel num_threads(n) reduction(+ : ran)
	{
		int k = omp_get_thread_num() % 8 == 0 ? long_calls : calls;
		for (int i = 0; i < k; i++) {
			hmb_enter(work);
			hmb_leave(work);
		}
		ran++;
	}
#pragma omp parallel num_threads(n) reduction(+ : ran)
	{
		hmb_enter(work);
		hmb_leave(work);
		ran++;
	}
	int rc = hmb_finalize();
	printf("threads %d ran %d dropped %llu\n", n, ran, (unsigned long long)hmb_dropped());
	return rc != 0;
}
