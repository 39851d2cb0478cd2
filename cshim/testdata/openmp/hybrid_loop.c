/*
 * hybrid_loop.c - an MPI+OpenMP code shaped as LULESH's MPI+OpenMP build
 * (issue 33): its computation inlined into main, each of ITERS iterations
 * twelve small parallel loops and one MPI_Allreduce that only the master
 * thread calls. No region of the program carries the iterations; the
 * variation analysis cuts every thread at its master's MPI_Allreduce.
 * Thread 1 of rank 1 sweeps SLOW times as long in iteration PLANTED, so
 * the analysis has a slow iteration of a worker thread to find.
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define ITERS 40
#define PLANTED 17
#define SLOW 100
#define N 4096

static double a[N];

/* One parallel loop: each element relaxed reps times (SLOW times on the
 * planted thread in the planted iteration). */
#define SWEEP(k)                                                                    \
	_Pragma("omp parallel for schedule(static)") for (int i = 1; i < N - 1; i++)    \
	{                                                                               \
		int reps = (slow && omp_get_thread_num() == 1) ? 4 * SLOW : 4;              \
		double x = a[i];                                                            \
		for (int r = 0; r < reps; r++) {                                            \
			x = 0.5 * x + 0.25 * (a[i - 1] + a[i + 1]) + 1e-9 * (k);                \
		}                                                                           \
		a[i] = x;                                                                   \
	}

int main(int argc, char **argv)
{
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < N; i++) {
		a[i] = (double)(i + rank) / N;
	}
	double residual = 0;
	for (int it = 0; it < ITERS; it++) {
		int slow = rank == 1 && it == PLANTED;
		SWEEP(1)
		SWEEP(2)
		SWEEP(3)
		SWEEP(4)
		SWEEP(5)
		SWEEP(6)
		SWEEP(7)
		SWEEP(8)
		SWEEP(9)
		SWEEP(10)
		SWEEP(11)
		SWEEP(12)
		double local = a[N / 2], sum;
		MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		residual += sum;
	}
	if (rank == 0) {
		printf("residual %g\n", residual);
	}
	MPI_Finalize();
	return 0;
}
