/*
 * openmp_team.c - the first parallel region of a large team: what starting
 * N threads costs, plain and with the OpenMP adapter, whose threads each
 * make a location at their first event (bench/openmp.go's team rows).
 *
 *   openmp_team N        prints "first <s> second <s>": the wall time of
 *                        the first parallel region of N threads and of the
 *                        second, whose threads exist already
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024;
	if (n < 1) {
		fprintf(stderr, "usage: openmp_team [threads>=1]\n");
		return 2;
	}
	int seen = 0;
	double t0 = now();
#pragma omp parallel num_threads(n) reduction(+ : seen)
	seen += 1;
	double t1 = now();
#pragma omp parallel num_threads(n) reduction(+ : seen)
	seen += 1;
	double t2 = now();
	if (seen != 2 * n) {
		fprintf(stderr, "openmp_team: %d threads ran of %d asked for\n", seen / 2, n);
		return 1;
	}
	printf("first %.6f second %.6f\n", t1 - t0, t2 - t1);
	return 0;
}
