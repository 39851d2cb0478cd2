/*
 * waitstate_insitu: planted wait states of every MPI pattern in one run,
 * for the wait-state replay in-situ against the post-mortem one on the
 * same events (analysis/waitstate). 4 ranks, ITERATIONS (the argument)
 * times:
 *
 *   ring       rank 2 computes 5 ms, then every rank sends to the next
 *              and receives from the previous: Late Sender on rank 3
 *   allreduce  rank r computes 2r ms, then MPI_Allreduce: Wait at N x N
 *   barrier    the same before MPI_Barrier: Wait at Barrier
 *   bcast      root 1 computes 5 ms before MPI_Bcast: Late Broadcast
 *   reduce     the non-roots compute 3 ms before MPI_Reduce to root 0:
 *              Early Reduce
 *   ssend      rank 1 computes 3 ms before receiving rank 0's MPI_Ssend:
 *              Late Receiver on rank 0
 *   halves     the even and the odd ranks (MPI_Comm_split) allreduce
 *              after the higher of each computed 2 ms: Wait at N x N on
 *              a communicator of some ranks
 *   irecv      rank 0 posts an MPI_Irecv from rank 3 and waits in
 *              MPI_Wait, rank 3 sends after 2 ms: Late Sender in MPI_Wait
 *
 * The computation is a loop on the clock (region "compute"); the waits
 * are what the scheduler makes of the plan: the test compares the two
 * replays, and checks only that the plan's larger waits are there.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hmbtrace.h>

#define MS 1000000LL

static uint32_t r_compute;

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* compute spins for d ns of the clock, yielding the core while more than
 * 100 us remain: four ranks share two cores in CI, and the ones that wait
 * (OMPI_MCA_mpi_yield_when_idle) should not lose theirs to a spin. */
static void compute(int64_t d)
{
	hmb_enter(r_compute);
	int64_t end = now() + d, t;
	while ((t = now()) < end) {
		if (end - t > 100000) {
			sched_yield();
		}
	}
	hmb_leave(r_compute);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc == 2 ? atoi(argv[1]) : 0;
	if (size != 4 || iters < 1) {
		if (rank == 0) {
			fprintf(stderr, "usage: mpirun -np 4 waitstate_insitu ITERATIONS\n");
		}
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	r_compute = hmb_region("compute");
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	double x = rank, y = 0;
	for (int it = 0; it < iters; it++) {
		/* ring */
		if (rank == 2) {
			compute(5 * MS);
		}
		MPI_Send(&x, 1, MPI_DOUBLE, (rank + 1) % size, 1, MPI_COMM_WORLD);
		MPI_Recv(&y, 1, MPI_DOUBLE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		/* allreduce */
		compute(2 * rank * MS);
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		/* barrier */
		compute(2 * rank * MS);
		MPI_Barrier(MPI_COMM_WORLD);
		/* bcast */
		if (rank == 1) {
			compute(5 * MS);
		}
		MPI_Bcast(&x, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
		/* reduce */
		if (rank != 0) {
			compute(3 * MS);
		}
		MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		/* ssend */
		if (rank == 0) {
			MPI_Ssend(&x, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
		} else if (rank == 1) {
			compute(3 * MS);
			MPI_Recv(&y, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		/* halves */
		if (rank >= 2) {
			compute(2 * MS);
		}
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, half);
		/* irecv */
		if (rank == 0) {
			MPI_Request q;
			MPI_Irecv(&y, 1, MPI_DOUBLE, 3, 3, MPI_COMM_WORLD, &q);
			MPI_Wait(&q, MPI_STATUS_IGNORE);
		} else if (rank == 3) {
			compute(2 * MS);
			MPI_Send(&x, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
		}
	}
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
