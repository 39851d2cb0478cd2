/*
 * mpidefer: blocking receives recorded with hmb_mpi_call, as
 * libhmbtrace-mpi's MPI_Recv does, without MPI. hmb_mpi_call puts a
 * receive's record off to the thread's next probe (cshim/lib/mpicall.c);
 * here each kind of next probe follows one: a region's enter, another
 * receive, a send recorded whole, a message probe, and, last of all, the
 * thread's exit (a second thread) or the process's (main). Every
 * gap-th iteration the thread spins for GAP_US microseconds between the
 * receive's return and the next probe, and that receive has tag 77: its
 * leave must lie that long before the next event, or its times were taken
 * when it was written rather than when it returned.
 *
 *   mpidefer [iterations [gap]]     defaults: 4000 501
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <hmbtrace.h>
#include "mpicall.h" /* not installed: -I cshim/lib */

#define GAP_US 200

static long n = 4000, gap = 501;
static uint32_t recv_r, send_r, step_r, after_r, comm;

static void spin(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < GAP_US * 1000L);
}

/* receive records an MPI_Recv of a message from peer, as its wrapper does. */
static void receive(int peer, uint32_t tag, uint64_t bytes)
{
	struct hmb_mpi_call c = {.t0 = hmb_clock(), .region = recv_r, .send = {.peer = -1}, .recv = {.peer = -1}};
	c.recv = (struct hmb_mpi_msg){.peer = peer, .tag = tag, .comm = comm, .bytes = bytes};
	hmb_mpi_call(&c);
}

/* send records an MPI_Send of a message to peer, as its wrapper does. */
static void send(int peer, uint32_t tag, uint64_t bytes)
{
	struct hmb_mpi_call c = {.t0 = hmb_clock(), .region = send_r, .send = {.peer = -1}, .recv = {.peer = -1}};
	c.send = (struct hmb_mpi_msg){.peer = peer, .tag = tag, .comm = comm, .bytes = bytes};
	hmb_mpi_call(&c);
}

/* run makes the iterations of one thread, peers 1 to 3, and ends with a receive. */
static void run(void)
{
	for (long i = 0; i < n; i++) {
		int peer = (int)(i % 3) + 1, spun = i % gap == 0;
		uint32_t tag = spun ? 77 : (uint32_t)(i % 5);
		uint64_t bytes = 8 + (uint64_t)(i % 4) * 1000;
		hmb_enter(step_r);
		receive(peer, tag, bytes);
		if (spun) {
			spin();
		}
		switch (i % 4) {
		case 0:
			hmb_enter(after_r);
			hmb_leave(after_r);
			break;
		case 1:
			receive(peer, tag + 1, bytes);
			break;
		case 2:
			/* To the receive's peer (one line of the matrix for both) or another. */
			send(i % 8 == 2 ? peer : peer % 3 + 1, tag, bytes);
			break;
		default:
			hmb_send_comm(peer, tag, bytes, comm);
		}
		hmb_leave(step_r);
	}
	receive(1, 99, 16);
}

static void *worker(void *arg)
{
	(void)arg;
	hmb_thread_name("worker");
	run();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		n = atol(argv[1]);
	}
	if (argc > 2) {
		gap = atol(argv[2]);
	}
	if (n < 1 || gap < 1) {
		return 2;
	}
	hmb_set_rank(0);
	recv_r = hmb_region_paradigm("MPI_Recv", HMB_PARADIGM_MPI);
	send_r = hmb_region_paradigm("MPI_Send", HMB_PARADIGM_MPI);
	step_r = hmb_region("step");
	after_r = hmb_region("after");
	const int32_t world[4] = {0, 1, 2, 3};
	comm = hmb_comm_define("MPI_COMM_WORLD", 0, world, 4, NULL, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0) {
		return 1;
	}
	run();
	pthread_join(t, NULL);
	return 0;
}
