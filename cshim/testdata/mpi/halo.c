/*
 * halo.c - a one-dimensional halo exchange and a ring, the shape of the
 * runs the collective end is measured on (issue 35): each iteration
 * computes, swaps a halo with both neighbours (periodic), passes a token
 * one step round the ring and reduces a residual.
 *
 *   halo [iterations] [cells] [mode] [seconds]
 *
 * mode "abort": rank 1 calls MPI_Abort halfway; "kill": rank 1 kills
 * itself with SIGKILL halfway (the others go on into MPI_Finalize);
 * "stall": rank 1 sleeps [seconds] (default 10) before MPI_Finalize, to
 * exercise the bounded waits of the collective end (HMB_COLLECTIVE_TIMEOUT
 * shorter than that); "partial": the even ranks make a communicator of
 * their own (the odd ones take part in the split without getting one) and
 * broadcast on it each iteration, so MPI_Bcast is a region only some ranks
 * entered, their communicator one only some ranks made.
 *
 * With HALO_TIMING set, each rank prints how long its MPI_Finalize took
 * ("finalize <rank> <seconds>"): the collective end of the run; and, from
 * a destructor of the program, which runs after the exit handlers (the
 * trace is written by one), how long from MPI_Finalize's return to there
 * ("exit <rank> <seconds>"): the write of its trace.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int timed_rank = -1;
static struct timespec finalized;

static double since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* The main program's destructors run after the exit handlers that
 * libraries registered at run time, such as the trace's writer. */
__attribute__((destructor)) static void exit_timing(void)
{
	if (timed_rank >= 0) {
		printf("exit %d %.6f\n", timed_rank, since(&finalized));
	}
}

static void compute(double *u, int n, int rank)
{
	for (int i = 1; i <= n; i++) {
		u[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) + 1e-6 * rank;
	}
}

static void exchange(double *u, int n, int left, int right)
{
	MPI_Request r[4];
	MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &r[0]);
	MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &r[1]);
	MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r[2]);
	MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &r[3]);
	MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

static void ring(int rank, int size, int *token)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	MPI_Sendrecv_replace(token, 1, MPI_INT, next, 2, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 20, n = argc > 2 ? atoi(argv[2]) : 64;
	const char *mode = argc > 3 ? argv[3] : "";
	double *u = calloc((size_t)n + 2, sizeof *u);
	for (int i = 1; i <= n; i++) {
		u[i] = rank + i;
	}
	int left = (rank + size - 1) % size, right = (rank + 1) % size, token = rank;
	double res = 0;
	MPI_Comm even = MPI_COMM_NULL;
	if (strcmp(mode, "partial") == 0) {
		MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, &even);
	}
	for (int it = 0; it < iters; it++) {
		if (rank == 1 && it == iters / 2) {
			if (strcmp(mode, "abort") == 0) {
				MPI_Abort(MPI_COMM_WORLD, 3);
			} else if (strcmp(mode, "kill") == 0) {
				raise(SIGKILL);
			}
		}
		compute(u, n, rank);
		exchange(u, n, left, right);
		ring(rank, size, &token);
		double local = u[1] - u[n], all;
		MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		res = all;
		if (even != MPI_COMM_NULL) {
			MPI_Bcast(&res, 1, MPI_DOUBLE, 0, even);
		}
	}
	if (rank == 0) {
		printf("halo: ranks=%d iterations=%d cells=%d residual=%g token=%d\n", size, iters, n, res, token);
	}
	if (rank == 1 && strcmp(mode, "stall") == 0) {
		sleep(argc > 4 ? (unsigned)atoi(argv[4]) : 10);
	}
	if (even != MPI_COMM_NULL) {
		MPI_Comm_free(&even);
	}
	free(u);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	MPI_Finalize();
	if (getenv("HALO_TIMING") != NULL) {
		printf("finalize %d %.6f\n", rank, since(&t0));
		timed_rank = rank;
		clock_gettime(CLOCK_MONOTONIC, &finalized);
	}
	return 0;
}
