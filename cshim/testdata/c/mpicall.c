/*
 * mpicall: the probes of a blocking MPI call, hmb_enter_send and
 * hmb_recv_leave, and hmb_mpi_call (cshim/lib/mpicall.h: the whole call
 * recorded when it returns), as libhmbtrace-mpi's wrappers make them,
 * without MPI:
 * sends and receives on a communicator, with a peer (MPI_PROC_NULL: -1),
 * tags and sizes that take the inline encoder and the general one, MPI
 * regions entered and left with and without a message, the probes used on
 * a region that is not MPI's, and enough calls to fill many bins; and
 * every kind of RMA record (hmb_rma), as the one-sided wrappers make them.
 * The calls recorded whole are MPI_Ssend (a send), MPI_Mrecv (a receive)
 * and MPI_Sendrecv (both), peers and sizes varying as above; now and then
 * the thread records a call of work while the MPI call runs (a signal
 * handler's probes would), and a call of work is recorded as one.
 *
 *   mpicall [calls]     default 20000
 */
#include <limits.h>
#include <stdlib.h>

#include <hmbtrace.h>
#include "mpicall.h" /* not installed: -I cshim/lib */

/*
 * whole records a blocking call of region r, which sends (if send) and
 * receives (if recv) a message of peer, tag and bytes on comm, with
 * hmb_mpi_call; if inside, the thread records a call of work while the
 * call runs.
 */
static void whole(uint32_t r, int send, int recv, int peer, uint32_t tag, uint64_t bytes, uint32_t comm, int inside,
		  uint32_t work)
{
	struct hmb_mpi_call c = {.t0 = hmb_clock(), .region = r, .send = {.peer = -1}, .recv = {.peer = -1}};
	if (inside) {
		hmb_enter(work);
		hmb_leave(work);
	}
	struct hmb_mpi_msg m = {.peer = peer, .tag = tag, .comm = comm, .bytes = bytes};
	if (send) {
		c.send = m;
	}
	if (recv) {
		c.recv = m;
		c.recv.tag = tag + 1;
		c.recv.bytes = bytes / 2;
	}
	hmb_mpi_call(&c);
}

/* rma records one of each RMA kind in region r, fields varying with i. */
static void rma(uint32_t r, uint32_t win, uint32_t group, long i)
{
	int target = (int)(i % 4);
	uint64_t bytes = i % 3 == 0 ? (uint64_t)1 << 30 : 64, id = (uint64_t)i + 1;
	hmb_enter_send(r, -1, 0, 0, 0);
	for (unsigned k = HMB_RMA_WIN_CREATE; k <= HMB_RMA_OP_COMPLETE_REMOTE; k++) {
		hmb_rma(k, win, k == HMB_RMA_COLLECTIVE_END ? -1 : target, bytes, bytes / 2, id,
			k == HMB_RMA_ATOMIC ? HMB_RMA_ATOMIC_FETCH_AND_ACCUMULATE : HMB_RMA_LOCK_SHARED,
			HMB_RMA_LEVEL_PROCESS | HMB_RMA_LEVEL_MEMORY, group);
	}
	/* Targets no MPI rank can be: stored as none. */
	hmb_rma(HMB_RMA_PUT, win, INT_MAX, 8, 0, id, 0, 0, 0);
	hmb_rma(HMB_RMA_GET, win, -5, 8, 0, id, 0, 0, 0);
	hmb_recv_leave(r, -1, 0, 0, 0);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	hmb_set_rank(0);
	uint32_t send = hmb_region_paradigm("MPI_Send", HMB_PARADIGM_MPI);
	uint32_t recv = hmb_region_paradigm("MPI_Recv", HMB_PARADIGM_MPI);
	uint32_t step = hmb_region("step"), work = hmb_region("work");
	uint32_t ssend = hmb_region_paradigm("MPI_Ssend", HMB_PARADIGM_MPI);
	uint32_t mrecv = hmb_region_paradigm("MPI_Mrecv", HMB_PARADIGM_MPI);
	uint32_t sendrecv = hmb_region_paradigm("MPI_Sendrecv", HMB_PARADIGM_MPI);
	const int32_t world[4] = {0, 1, 2, 3};
	uint32_t comm = hmb_comm_define("MPI_COMM_WORLD", 0, world, 4, NULL, 0);
	uint32_t put = hmb_region_paradigm("MPI_Put", HMB_PARADIGM_MPI), win = hmb_win_define(comm);
	const int32_t pair[2] = {1, 3};
	uint32_t group = hmb_rma_group_define(pair, 2);
	for (long i = 0; i < n; i++) {
		int peer = (int)(i % 5) - 1;
		uint32_t tag = i % 3 == 0 ? 300 : (uint32_t)(i % 7);
		uint64_t bytes = i % 4 == 0 ? (uint64_t)1 << 20 : 8;
		hmb_enter(step);
		hmb_enter_send(send, peer, tag, bytes, comm);
		if (i % 2 == 0) {
			hmb_recv_leave(send, -1, 0, 0, 0);
		} else {
			hmb_leave(send);
		}
		if (i % 2 == 0) {
			hmb_enter_send(recv, -1, 0, 0, 0);
		} else {
			hmb_enter(recv);
		}
		hmb_recv_leave(recv, peer, tag, bytes, comm);
		if (i % 100 == 0) {
			/* The probes on a region that is not MPI's: the general path. */
			hmb_enter_send(work, 2, 5, 64, comm);
			hmb_recv_leave(work, 3, 6, 32, comm);
		}
		if (i % 10 == 0) {
			rma(put, win, group, i);
		}
		int inside = i % 50 == 7;
		switch (i % 3) {
		case 0:
			whole(sendrecv, 1, 1, peer, tag, bytes, comm, inside, work);
			break;
		case 1:
			whole(ssend, 1, 0, peer, tag, bytes, comm, inside, work);
			break;
		default:
			whole(mrecv, 0, 1, peer, tag, bytes, comm, inside, work);
		}
		if (i % 100 == 1) {
			/* A region that is not MPI's: event by event. */
			whole(work, 1, 1, 2, 9, 16, comm, 0, work);
		}
		hmb_leave(step);
	}
	return 0;
}
