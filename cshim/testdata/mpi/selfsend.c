/*
 * selfsend: what the wrappers add to an MPI call, measured in one process
 * so that no other rank's scheduling enters the time: each round is an
 * MPI_Send of a small message to this same rank (delivered eagerly) and the
 * MPI_Recv that takes it, both on MPI_COMM_WORLD. Built plain and with
 * libhmbtrace-mpi, the difference per round, halved, is the wrappers' cost
 * per call: a region, a message event, the peer's translation.
 *
 *   mpirun -np 1 ./selfsend [rounds [repeats]]     defaults: 200000 7
 *   output: selfsend <best ns per round over the repeats> ns <rounds>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int repeats = argc > 2 ? atoi(argv[2]) : 7;
	double out = 1, in = 0, best = 0;
	for (int k = 0; k < repeats; k++) {
		double t0 = now();
		for (long i = 0; i < n; i++) {
			MPI_Send(&out, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD);
			MPI_Recv(&in, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		double per = (now() - t0) / (double)n;
		if (k == 0 || per < best) {
			best = per;
		}
	}
	printf("selfsend %.1f ns %ld\n", best, n);
	MPI_Finalize();
	return 0;
}
