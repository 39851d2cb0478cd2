/*
 * hybrid.c - MPI with OpenMP for the adapter's tests: each rank's threads
 * share a loop, then the ranks sum their results with MPI_Allreduce.
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double local = 0, total = 0;
	for (int r = 0; r < 3; r++) {
#pragma omp parallel for reduction(+ : local)
		for (int i = 0; i < 1000; i++) {
			local += i + rank;
		}
		MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	printf("rank %d total %.0f\n", rank, total);
	MPI_Finalize();
	return 0;
}
