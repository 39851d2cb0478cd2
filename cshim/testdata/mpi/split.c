/*
 * split.c - communicators whose members form no runs of a stride, as an
 * irregular decomposition makes them: every rank joins one of two halves
 * by the parity of its number of set bits (the Thue-Morse sequence), and
 * the ranks not 1 mod 3 split again by the parity of 5 x rank's bits (the
 * others take part without getting one). Each iteration reduces on both
 * and passes a token round the first half. Written as the run's archive,
 * the ranks' slots refer to these groups in the run's definitions
 * (tracefile's COMM REFS) instead of listing them.
 *
 *   split [iterations]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int parity(unsigned v)
{
	int n = 0;
	for (; v != 0; v &= v - 1) {
		n++;
	}
	return n & 1;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, iters = argc > 1 ? atoi(argv[1]) : 10;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm half, some = MPI_COMM_NULL;
	MPI_Comm_split(MPI_COMM_WORLD, parity((unsigned)rank), rank, &half);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 1 ? MPI_UNDEFINED : parity(5u * (unsigned)rank), rank, &some);
	int hr, hn;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hn);
	double x = rank, sum = 0;
	for (int it = 0; it < iters; it++) {
		int token = rank, got = -1;
		MPI_Sendrecv(&token, 1, MPI_INT, (hr + 1) % hn, 0, &got, 1, MPI_INT, (hr + hn - 1) % hn, 0, half, MPI_STATUS_IGNORE);
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, half);
		if (some != MPI_COMM_NULL) {
			MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, some);
		}
		x += sum * 1e-9 + got;
	}
	if (some != MPI_COMM_NULL) {
		MPI_Comm_free(&some);
	}
	MPI_Comm_free(&half);
	if (rank == 0) {
		printf("%g\n", x);
	}
	MPI_Finalize();
	return 0;
}
