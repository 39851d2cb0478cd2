/*
 * nullreq.c - completion calls over arrays of requests that hold
 * MPI_REQUEST_NULL, as codes with fewer neighbours at a boundary pass
 * them (LULESH's MPI_Waitall), each called on a stack that a function
 * before it filled with a pattern: the uint32 10 everywhere, the encoder's
 * kind of a received message. A wrapper that read a completion's record
 * it never wrote would find a message there, or a kind it cannot record.
 *
 * Rank 0 sends rank 1 n messages, each completed by one of MPI_Waitall,
 * MPI_Waitsome, MPI_Waitany, MPI_Testall and MPI_Testsome in turn, the
 * request among 15 null ones; rank 1 receives them the same way.
 * Usage: mpirun -np 2 nullreq [n]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dirty fills 16 KiB of the stack below its caller with the pattern. */
__attribute__((noinline)) static void dirty(void)
{
	volatile uint32_t fill[4096];
	for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++) {
		fill[i] = 10;
	}
	__asm__ volatile("" : : "r"(fill) : "memory");
}

static void complete(int how, MPI_Request reqs[16])
{
	int n, idx[16], flag = 0;
	MPI_Status st[16];
	dirty();
	switch (how) {
	case 0:
		MPI_Waitall(16, reqs, MPI_STATUSES_IGNORE);
		break;
	case 1:
		while (reqs[7] != MPI_REQUEST_NULL) {
			MPI_Waitsome(16, reqs, &n, idx, st);
		}
		break;
	case 2:
		MPI_Waitany(16, reqs, &n, st);
		break;
	case 3:
		while (!flag) {
			dirty();
			MPI_Testall(16, reqs, &flag, MPI_STATUSES_IGNORE);
		}
		break;
	default:
		while (reqs[7] != MPI_REQUEST_NULL) {
			dirty();
			MPI_Testsome(16, reqs, &n, idx, st);
		}
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 100;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0) {
			fprintf(stderr, "nullreq: run on 2 ranks\n");
		}
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double buf = 0;
	for (int i = 0; i < n; i++) {
		MPI_Request reqs[16];
		for (int k = 0; k < 16; k++) {
			reqs[k] = MPI_REQUEST_NULL;
		}
		buf = i;
		if (rank == 0) {
			MPI_Isend(&buf, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD, &reqs[7]);
		} else {
			MPI_Irecv(&buf, 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, &reqs[7]);
		}
		complete(i % 5, reqs);
	}
	printf("rank %d: %d messages\n", rank, n);
	MPI_Finalize();
	return 0;
}
