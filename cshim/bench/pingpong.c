/*
 * pingpong: rank 0 and rank 1 bounce a small message; rank 0 prints the
 * time of one round trip. Built twice by cshim/Makefile, once plain and
 * once linked with libhmbtrace-mpi, it gives what the PMPI wrappers add to
 * an MPI call (each round trip is an MPI_Send and an MPI_Recv per rank).
 *
 *   mpirun -np 2 ./pingpong [round-trips [bytes [world|dup|allreduce]]]   defaults: 100000 8 world
 *   output: pingpong <ns per round trip> ns <round trips> <bytes> <mode> median <ns> mean <ns>
 *
 * Rank 0 times every round trip and prints the mean of the middle half of
 * them (the 25th to the 75th percentile): on a machine with fewer idle
 * cores than spinning ranks (two busy-polling ranks and any other job on
 * two cores), a rank descheduled for a time slice adds milliseconds to a
 * few round trips, which move the mean of all by microseconds from run to
 * run but leave the middle half alone. Unlike the median, that mean is not
 * held to the clock's steps (10 ns on some VMs). The median and the mean
 * of all are printed too.
 *
 * dup bounces on a duplicate of MPI_COMM_WORLD: the wrappers then translate
 * each peer into a world rank, as for any sub-communicator. allreduce makes
 * each round trip one MPI_Allreduce (MPI_BOR over bytes bytes) on
 * MPI_COMM_WORLD: what the wrappers add to a collective.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

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
	const char *which = argc > 3 ? argv[3] : "world";
	int dup = strcmp(which, "dup") == 0, allreduce = strcmp(which, "allreduce") == 0;
	if (size != 2 || n <= 0 || bytes <= 0 || (!dup && !allreduce && strcmp(which, "world") != 0)) {
		if (rank == 0) {
			fprintf(stderr, "usage: mpirun -np 2 pingpong [round-trips [bytes [world|dup|allreduce]]]\n");
		}
		MPI_Finalize();
		return 2;
	}
	MPI_Comm comm = MPI_COMM_WORLD;
	if (dup) {
		MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	}
	char *buf = calloc((size_t)bytes, 1), *out = calloc((size_t)bytes, 1);
	double *trip = malloc((size_t)n * sizeof *trip);
	if (buf == NULL || out == NULL || trip == NULL) {
		fprintf(stderr, "pingpong: out of memory for %ld round trips of %d bytes\n", n, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int peer = 1 - rank;
	long warm = n / 10 + 1;
	double start = 0, last = 0;
	for (long i = 0; i < warm + n; i++) {
		if (i == warm) {
			MPI_Barrier(comm);
			start = last = now();
		} else if (i > warm) {
			double t = now();
			trip[i - warm - 1] = t - last;
			last = t;
		}
		if (allreduce) {
			MPI_Allreduce(buf, out, bytes, MPI_BYTE, MPI_BOR, comm);
		} else if (rank == 0) {
			MPI_Send(buf, bytes, MPI_CHAR, peer, 0, comm);
			MPI_Recv(buf, bytes, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, bytes, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_CHAR, peer, 0, comm);
		}
	}
	double el = now() - start;
	trip[n - 1] = el - (last - start);
	if (rank == 0) {
		qsort(trip, (size_t)n, sizeof *trip, cmp);
		double median = n % 2 ? trip[n / 2] : (trip[n / 2 - 1] + trip[n / 2]) / 2, mid = 0;
		long lo = n / 4, hi = n - n / 4;
		for (long i = lo; i < hi; i++) {
			mid += trip[i];
		}
		mid /= (double)(hi - lo);
		printf("pingpong %.1f ns %ld %d %s median %.1f mean %.1f\n", mid, n, bytes, which, median, el / (double)n);
	}
	if (dup) {
		MPI_Comm_free(&comm);
	}
	free(buf);
	free(out);
	free(trip);
	MPI_Finalize();
	return 0;
}
