/*
 * pingpong: rank 0 and rank 1 bounce a small message; rank 0 prints the
 * time of one round trip. Built twice by cshim/Makefile, once plain and
 * once linked with libhmbtrace-mpi, it gives what the PMPI wrappers add to
 * an MPI call (each round trip is an MPI_Send and an MPI_Recv per rank).
 *
 *   mpirun -np 2 ./pingpong [round-trips [bytes]]     defaults: 100000 8
 *   output: pingpong <ns per round trip> ns <round trips> <bytes>
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
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int bytes = argc > 2 ? atoi(argv[2]) : 8;
	if (size != 2 || n <= 0 || bytes <= 0) {
		if (rank == 0) {
			fprintf(stderr, "usage: mpirun -np 2 pingpong [round-trips [bytes]]\n");
		}
		MPI_Finalize();
		return 2;
	}
	char *buf = calloc((size_t)bytes, 1);
	int peer = 1 - rank;
	long warm = n / 10 + 1;
	double start = 0;
	for (long i = 0; i < warm + n; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			start = now();
		}
		if (rank == 0) {
			MPI_Send(buf, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
		}
	}
	double el = now() - start;
	if (rank == 0) {
		printf("pingpong %.1f ns %ld %d\n", el / (double)n, n, bytes);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
