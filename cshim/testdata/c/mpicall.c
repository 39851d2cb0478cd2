/*
 * mpicall: the probes of a blocking MPI call, hmb_enter_send and
 * hmb_recv_leave, as libhmbtrace-mpi's wrappers make them, without MPI:
 * sends and receives on a communicator, with a peer (MPI_PROC_NULL: -1),
 * tags and sizes that take the inline encoder and the general one, MPI
 * regions entered and left with and without a message, the probes used on
 * a region that is not MPI's, and enough calls to fill many bins.
 *
 *   mpicall [calls]     default 20000
 */
#include <stdlib.h>

#include <hmbtrace.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	hmb_set_rank(0);
	uint32_t send = hmb_region_paradigm("MPI_Send", HMB_PARADIGM_MPI);
	uint32_t recv = hmb_region_paradigm("MPI_Recv", HMB_PARADIGM_MPI);
	uint32_t step = hmb_region("step"), work = hmb_region("work");
	const int32_t world[4] = {0, 1, 2, 3};
	uint32_t comm = hmb_comm_define("MPI_COMM_WORLD", 0, world, 4, NULL, 0);
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
		hmb_leave(step);
	}
	return 0;
}
