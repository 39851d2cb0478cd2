/*
 * teamend.c - an OpenMP team whose workers probe little. A worker stages
 * its first records (its window) and makes its location only with its
 * first replay, which an idle worker never makes before MPI_Finalize; the
 * run's results must hold its events all the same. The second region's
 * workers probe while the master finalizes and after: the trace must
 * hold each of their calls once, in order.
 * Usage: mpirun -np N teamend CALLS (OMP_NUM_THREADS threads a rank)
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) double brief_work(int k)
{
	double s = 0;
	for (int i = 0; i < 1000 * k; i++) {
		s += i * 0.5;
	}
	return s;
}

int main(int argc, char **argv)
{
	int provided, calls = argc > 1 ? atoi(argv[1]) : 10;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	double s = 0;
#pragma omp parallel reduction(+ : s)
	s += brief_work(1);
	MPI_Barrier(MPI_COMM_WORLD);
#pragma omp parallel reduction(+ : s)
	{
		if (omp_get_thread_num() == 0) {
			MPI_Finalize();
		} else {
			for (int i = 0; i < calls; i++) {
				s += brief_work(1);
			}
		}
	}
	printf("threads %d sum %g\n", omp_get_max_threads(), s);
	return 0;
}
