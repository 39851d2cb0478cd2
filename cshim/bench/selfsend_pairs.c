/*
 * selfsend_pairs.c - what libhmbtrace-mpi's wrappers add to a blocking
 * point-to-point call, in one process: slices of MPI_Send to this same
 * rank and the MPI_Recv that takes it, through the wrappers, alternated
 * with slices of the same through PMPI_Send and PMPI_Recv, which the
 * wrappers do not see. Both sides run in the same process, on the same
 * MPI state and the same CPU, half a millisecond or so apart: on this
 * shared machine, two runs timed at different moments compared the
 * moments (a best-of-7 selfsend gave 240 to 833 ns per round plain).
 *
 * The same for the non-blocking calls: a round of MPI_Irecv, MPI_Isend
 * and the two MPI_Wait that complete them, four calls.
 *
 *   mpirun -np 1 ./selfsend_pairs [pairs [rounds]]    defaults: 200 2000
 *   output: "selfsend pairs <pairs> rounds <rounds> plain <ns> traced <ns>
 *            added <ns per call> quartiles <q1> <q3>": medians over the
 *            pairs, in the thread's CPU time per round (a send and a
 *            receive), and the wrappers' added time per MPI call, the
 *            median of (traced - plain) / 2 within a pair; then the line
 *            "isend pairs ..." of the non-blocking rounds (/ 4 per call)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int rank;
static double out = 1, in;

/* The calls of a round: a send and its receive, or the non-blocking ones and their waits. */
enum { BLOCKING, NONBLOCKING };

/*
 * slice runs n rounds of pattern through the wrappers (traced) or around
 * them, after n/4 untimed, and returns ns per round.
 */
static double slice(int pattern, int traced, long n)
{
	double t0 = 0;
	MPI_Request r[2];
	for (long i = -n / 4; i < n; i++) {
		if (i == 0) {
			t0 = cpu_ns();
		}
		if (pattern == BLOCKING && traced) {
			MPI_Send(&out, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD);
			MPI_Recv(&in, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (pattern == BLOCKING) {
			PMPI_Send(&out, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD);
			PMPI_Recv(&in, 1, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (traced) {
			MPI_Irecv(&in, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &r[0]);
			MPI_Isend(&out, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &r[1]);
			MPI_Wait(&r[0], MPI_STATUS_IGNORE);
			MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		} else {
			PMPI_Irecv(&in, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &r[0]);
			PMPI_Isend(&out, 1, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &r[1]);
			PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
			PMPI_Wait(&r[1], MPI_STATUS_IGNORE);
		}
	}
	return (cpu_ns() - t0) / (double)n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int pairs = argc > 1 ? atoi(argv[1]) : 200;
	long rounds = argc > 2 ? atol(argv[2]) : 2000;
	if (pairs < 1 || rounds < 4) {
		fprintf(stderr, "usage: selfsend_pairs [pairs>=1 [rounds>=4]]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double *p = malloc((size_t)pairs * sizeof *p), *t = malloc((size_t)pairs * sizeof *t),
	       *a = malloc((size_t)pairs * sizeof *a);
	if (p == NULL || t == NULL || a == NULL) {
		perror("selfsend_pairs");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int pattern = BLOCKING; pattern <= NONBLOCKING; pattern++) {
		int calls = pattern == BLOCKING ? 2 : 4;
		for (int i = 0; i < pairs; i++) {
			/* The order within a pair alternates, so that a change of speed favours neither side. */
			if (i % 2 == 0) {
				p[i] = slice(pattern, 0, rounds);
				t[i] = slice(pattern, 1, rounds);
			} else {
				t[i] = slice(pattern, 1, rounds);
				p[i] = slice(pattern, 0, rounds);
			}
			a[i] = (t[i] - p[i]) / calls;
		}
		qsort(p, (size_t)pairs, sizeof *p, cmp);
		qsort(t, (size_t)pairs, sizeof *t, cmp);
		qsort(a, (size_t)pairs, sizeof *a, cmp);
		printf("%s pairs %d rounds %ld plain %.1f traced %.1f added %.1f quartiles %.1f %.1f\n",
		       pattern == BLOCKING ? "selfsend" : "isend", pairs, rounds, p[pairs / 2], t[pairs / 2], a[pairs / 2],
		       a[pairs / 4], a[3 * pairs / 4]);
	}
	free(p);
	free(t);
	free(a);
	MPI_Finalize();
	return 0;
}
