/*
 * clockreads: point-to-point calls to this same rank, for
 * TestMPIClockReads, which counts under callgrind the clock reads that
 * libhmbtrace-mpi's wrappers make per call. After a warm-up round of each
 * pattern (the regions, the location and the peer's matrix line then
 * exist), callgrind's counts are zeroed, and each pattern's rounds end with
 * a dump of their own counts, named after the pattern:
 *
 *   blocking      MPI_Send + MPI_Recv
 *   nonblocking   MPI_Irecv + MPI_Isend + MPI_Test (+ MPI_Wait if the
 *                 test failed) + MPI_Wait
 *   waitall       MPI_Irecv + MPI_Isend + MPI_Waitall of both
 *
 *   clockreads N
 *   output: "clockreads <pattern> calls <wrapped calls>", one line per
 *           pattern, counting the rounds after the warm-up
 *
 * Outside valgrind the client requests do nothing.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

static int rank;
static double out = 1, in;

/* blocking runs n rounds of a send to this rank and its receive, and returns the calls. */
static long blocking(long n)
{
	for (long i = 0; i < n; i++) {
		MPI_Send(&out, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD);
		MPI_Recv(&in, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	return 2 * n;
}

/* nonblocking runs n rounds of requests and their completions, and returns the calls. */
static long nonblocking(long n)
{
	long calls = 0;
	for (long i = 0; i < n; i++) {
		MPI_Request r[2];
		int flag = 0;
		MPI_Irecv(&in, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&out, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &r[1]);
		MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
		calls += 3;
		if (!flag) {
			MPI_Wait(&r[0], MPI_STATUS_IGNORE);
			calls++;
		}
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		calls++;
	}
	return calls;
}

/* waitall runs n rounds of two requests completed by one call, and returns the calls. */
static long waitall(long n)
{
	for (long i = 0; i < n; i++) {
		MPI_Request r[2];
		MPI_Irecv(&in, 1, MPI_DOUBLE, rank, 3, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&out, 1, MPI_DOUBLE, rank, 3, MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	}
	return 3 * n;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = argc == 2 ? atol(argv[1]) : 0;
	if (n < 1) {
		fprintf(stderr, "usage: clockreads N (rounds per pattern, >= 1)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	blocking(1);
	nonblocking(1);
	waitall(1);
	CALLGRIND_ZERO_STATS;
	long b = blocking(n);
	CALLGRIND_DUMP_STATS_AT("blocking");
	long nb = nonblocking(n);
	CALLGRIND_DUMP_STATS_AT("nonblocking");
	long wa = waitall(n);
	CALLGRIND_DUMP_STATS_AT("waitall");
	printf("clockreads blocking calls %ld\nclockreads nonblocking calls %ld\nclockreads waitall calls %ld\n", b, nb, wa);
	MPI_Finalize();
	return 0;
}
