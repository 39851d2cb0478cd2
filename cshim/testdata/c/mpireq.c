/*
 * mpireq: non-blocking MPI calls recorded whole when they return, with
 * hmb_mpi_req_call (cshim/lib/mpicall.h), as libhmbtrace-mpi's MPI_Isend,
 * MPI_Irecv and MPI_Imrecv do, without MPI: send and receive requests to
 * peers that have a matrix line and to new ones, sizes of one and more
 * LEB128 bytes, a call with no record (a failed call), their completions
 * with hmb_mpi_leave, a deferred blocking receive before some of them, and
 * now and then a call of work recorded while the MPI call runs (a signal
 * handler's probes would), and a call made on a region that is not MPI's.
 *
 *   mpireq [calls]     default 20000
 */
#include <stdlib.h>

#include <hmbtrace.h>
#include "mpicall.h" /* not installed: -I cshim/lib */
#include "shim.h"    /* HMB_ENC_* */

static uint32_t comm, work;

/* start records a call of region r that starts request q, doing work inside it if inside. */
static void start(uint32_t r, const struct hmb_mpi_req *q, int inside)
{
	uint64_t t0 = hmb_clock();
	if (inside) {
		hmb_enter(work);
		hmb_leave(work);
	}
	hmb_mpi_req_call(r, t0, q);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	hmb_set_rank(0);
	uint32_t isend = hmb_region_paradigm("MPI_Isend", HMB_PARADIGM_MPI);
	uint32_t irecv = hmb_region_paradigm("MPI_Irecv", HMB_PARADIGM_MPI);
	uint32_t wait = hmb_region_paradigm("MPI_Wait", HMB_PARADIGM_MPI);
	uint32_t recv = hmb_region_paradigm("MPI_Recv", HMB_PARADIGM_MPI);
	uint32_t step = hmb_region("step");
	work = hmb_region("work");
	int32_t world[64];
	for (int k = 0; k < 64; k++) {
		world[k] = k;
	}
	comm = hmb_comm_define("MPI_COMM_WORLD", 0, world, 64, NULL, 0);
	for (long i = 0; i < n; i++) {
		/* Peers 0 to 3 most often; a new one up to 63 every 300th call. */
		int peer = i % 300 == 0 ? (int)(i / 300) % 64 : (int)(i % 4);
		uint32_t tag = i % 3 == 0 ? 300 : (uint32_t)(i % 7);
		uint64_t bytes = i % 4 == 0 ? (uint64_t)1 << 20 : 8;
		uint64_t req = 2 * (uint64_t)i + 1;
		int inside = i % 50 == 7;
		hmb_enter(step);
		if (i % 5 == 0) {
			/* A blocking receive, deferred to the next probe: the request's call. */
			struct hmb_mpi_call c = {.t0 = hmb_clock(), .region = recv, .send = {.peer = -1}};
			c.recv = (struct hmb_mpi_msg){.peer = peer, .tag = tag, .comm = comm, .bytes = 16};
			hmb_mpi_call(&c);
		}
		struct hmb_mpi_req rq = {.kind = HMB_ENC_IRECV_REQUEST, .request = req};
		start(irecv, &rq, inside);
		struct hmb_mpi_req sq = {.kind = HMB_ENC_ISEND, .peer = peer, .tag = tag, .comm = comm, .bytes = bytes,
					 .request = req + 1};
		if (i % 97 == 3) {
			sq.kind = 0; /* a failed call: no record */
		}
		start(isend, &sq, 0);
		if (i % 100 == 1) {
			/* A region that is not MPI's: event by event. */
			start(work, &sq, 0);
		}
		struct hmb_mpi_req done = {.kind = HMB_ENC_IRECV, .peer = peer, .tag = tag + 1, .comm = comm,
					   .bytes = bytes / 2, .request = req};
		hmb_enter(wait);
		hmb_mpi_leave(wait, &done, 1);
		hmb_leave(step);
	}
	return 0;
}
