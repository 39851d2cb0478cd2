/*
 * openmp_bench.c - what the OpenMP adapter adds to a construct: empty
 * parallel regions and barriers, timed per construct. Built plain and
 * with libhmbtrace-omp (see the README's OpenMP section):
 *
 *     gcc -O2 -fopenmp -o omp_plain openmp_bench.c
 *     gcc -O2 -fopenmp -o omp_traced openmp_bench.c $(pkg-config --libs hmbtrace-omp)
 *     OMP_NUM_THREADS=2 ./omp_plain; OMP_NUM_THREADS=2 ./omp_traced
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	double best_par = 1e9, best_bar = 1e9;
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
		if ((t1 - t0) / n < best_par) {
			best_par = (t1 - t0) / n;
		}
		if ((t2 - t1) / n < best_bar) {
			best_bar = (t2 - t1) / n;
		}
	}
	printf("parallel region %.0f ns, barrier %.0f ns (best of 5 rounds of %d)\n", best_par * 1e9, best_bar * 1e9, n);
	return 0;
}
