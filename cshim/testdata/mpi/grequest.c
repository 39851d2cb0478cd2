/*
 * grequest: MPI_Wait and MPI_Test on generalized requests, whose query
 * callback runs inside the call and records a region of its own, "query";
 * and on point-to-point requests to this same rank, which the wrappers
 * record whole when the call returns. The callback's region must lie
 * inside its MPI_Wait or MPI_Test: those calls keep a probe before the
 * PMPI call (cshim/mpi/mpi_internal.h, hmbmpi_p2p_request).
 *
 *   grequest N      N rounds of each (>= 1)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmbtrace.h>

static uint32_t query_r;

static int query(void *extra, MPI_Status *st)
{
	(void)extra;
	hmb_enter(query_r);
	MPI_Status_set_elements(st, MPI_BYTE, 0);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	hmb_leave(query_r);
	return MPI_SUCCESS;
}

static int release(void *extra)
{
	(void)extra;
	return MPI_SUCCESS;
}

static int cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc == 2 ? atol(argv[1]) : 0;
	if (n < 1) {
		fprintf(stderr, "usage: grequest N (rounds, >= 1)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	query_r = hmb_region("query");
	double out = 1, in;
	for (long i = 0; i < n; i++) {
		MPI_Request g, r[2];
		MPI_Grequest_start(query, release, cancel, NULL, &g);
		MPI_Grequest_complete(g);
		if (i % 2 == 0) {
			MPI_Wait(&g, MPI_STATUS_IGNORE);
		} else {
			int flag = 0;
			while (!flag) {
				MPI_Test(&g, &flag, MPI_STATUS_IGNORE);
			}
		}
		MPI_Irecv(&in, 1, MPI_DOUBLE, rank, 4, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&out, 1, MPI_DOUBLE, rank, 4, MPI_COMM_WORLD, &r[1]);
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		int flag = 0;
		while (!flag) {
			MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
		}
	}
	MPI_Finalize();
	return 0;
}
