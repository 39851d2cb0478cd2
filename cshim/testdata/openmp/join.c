/*
 * join.c - the end of parallel regions, as GCC's adapter sees it without
 * an extra barrier: rounds of a region in which thread 0 sleeps longer
 * than the others (usleep), then of one in which the last thread does,
 * then of one in which the last thread creates tasks after a delay, so
 * that thread 0 has reached the region's end before the first task.
 *
 *     join ROUNDS SLEEP_US TASKS
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ran;

static void zero_slow(int us)
{
#pragma omp parallel
	{
		if (omp_get_thread_num() == 0) {
			usleep(us);
		}
	}
}

static void last_slow(int us)
{
#pragma omp parallel
	{
		if (omp_get_thread_num() == omp_get_num_threads() - 1) {
			usleep(us);
		}
	}
}

static void late_tasks(int us, int tasks)
{
#pragma omp parallel
	{
		if (omp_get_thread_num() == omp_get_num_threads() - 1) {
			usleep(us);
			for (int i = 0; i < tasks; i++) {
#pragma omp task
				{
#pragma omp atomic
					ran++;
				}
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s ROUNDS SLEEP_US TASKS\n", argv[0]);
		return 2;
	}
	int rounds = atoi(argv[1]), us = atoi(argv[2]), tasks = atoi(argv[3]);
	for (int r = 0; r < rounds; r++) {
		zero_slow(us);
	}
	for (int r = 0; r < rounds; r++) {
		last_slow(us);
	}
	for (int r = 0; r < rounds; r++) {
		late_tasks(us, tasks);
	}
	printf("ran %d\n", ran);
	return 0;
}
