/*
 * inlined: a C MPI code whose computation is inlined into main, as
 * hmbtrace-mpicc -O2 leaves it (issue 33): the only regions are the MPI
 * calls and init, a user region entered twice per rank. Each of ITERS
 * iterations computes, exchanges a halo with both neighbours and calls
 * MPI_Allreduce once. Rank 1 computes SLOW times as long in iteration
 * PLANTED, so the variation analysis has a slow iteration to find.
 * SLOW is 100, not 20: at a load of 39 a rank preempted inside one
 * ordinary iteration (tens of ms) once outranked twenty times the work
 * (about 3 ms); a hundred times keeps the planted one first.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "hmbtrace.h"

#define ITERS 40
#define PLANTED 17
#define SLOW 100
#define N 4096

static double grid[N], halo[2];

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	uint32_t init = hmb_region("init");
	for (int k = 0; k < 2; k++) {
		hmb_enter(init);
		for (int i = 0; i < N; i++) {
			grid[i] = (double)(i + rank + k) / N;
		}
		hmb_leave(init);
	}
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	double residual = 0;
	for (int it = 0; it < ITERS; it++) {
		int sweeps = (rank == 1 && it == PLANTED) ? 40 * SLOW : 40;
		for (int s = 0; s < sweeps; s++) {
			for (int i = 1; i < N - 1; i++) {
				grid[i] = 0.25 * (grid[i - 1] + 2 * grid[i] + grid[i + 1]);
			}
		}
		MPI_Request r[2];
		MPI_Irecv(halo, 2, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&grid[N - 2], 2, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		grid[0] = halo[0];
		double local = grid[N / 2], sum;
		MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		residual += sum;
	}
	if (rank == 0) {
		printf("residual %g\n", residual);
	}
	MPI_Finalize();
	return 0;
}
