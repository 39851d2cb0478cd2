/*
 * mpicall.h - the probe of a blocking MPI call recorded whole when it
 * returns, shared by libhmbtrace (mpicall.c) and libhmbtrace-mpi's
 * wrappers. Not installed.
 *
 * A wrapper reads the clock before its PMPI call and hands that time, the
 * call's region and its messages to hmb_mpi_call after it: the enter of the
 * region, its send, its receive and its leave are then written in one
 * probe, with one begin and end of the direct path, one lookup of the
 * location, the region and the levels, and two clock reads for the call
 * instead of three. Nothing is written before the call, so what little the
 * wrapper does first (a clock read) is all it adds to the time before the
 * message leaves: on a ping-pong, the probe's work moves off the critical
 * path of the rank that sends.
 *
 * What the thread records while the call runs (a signal handler's probes,
 * an error handler, a wrapped call that the MPI library makes itself) is
 * recorded before the call's enter, which then takes the time of the last
 * of it (probes never go back in time): the trace stays well nested and
 * in order, and those events are the call's neighbours, not its children.
 * Calls that run the program's code in the normal case (collectives with
 * their user-defined operations, communicator creation with its attribute
 * callbacks, completions of generalized requests) keep a probe before the
 * call and one after.
 */
#ifndef HMBTRACE_MPICALL_H
#define HMBTRACE_MPICALL_H

#include <stdint.h>

/* A message of a blocking MPI call: its peer as a world rank (< 0: none), tag, communicator id, bytes. */
struct hmb_mpi_msg {
	int peer;
	uint32_t tag, comm;
	uint64_t bytes;
};

/*
 * A blocking MPI call: its region, the time (of hmb_clock) read before the
 * PMPI call, the message it sent (recorded at t0, after the enter) and the
 * one it received (recorded when it returned, before the leave).
 */
struct hmb_mpi_call {
	uint64_t t0;
	uint32_t region;
	struct hmb_mpi_msg send, recv;
};

/* hmb_mpi_call records call c, which has returned. */
void hmb_mpi_call(const struct hmb_mpi_call *c) __attribute__((no_instrument_function));

/*
 * A request's record that the leave of the MPI call that made or completed
 * the request writes in its own tick (hmb_mpi_leave), as a blocking
 * receive's message shares its leave's: kind is HMB_ENC_ISEND or
 * HMB_ENC_IRECV (a world rank peer, tag, communicator id, bytes and the
 * request), HMB_ENC_ISEND_COMPLETE, HMB_ENC_IRECV_REQUEST or
 * HMB_ENC_REQUEST_CANCELLED (the request alone); 0 for no record.
 */
struct hmb_mpi_req {
	unsigned kind;
	int peer;
	uint32_t tag, comm;
	uint64_t bytes, request;
};

/*
 * hmb_mpi_leave records the n records q[0..n) (those of kind 0 are none)
 * and the leave of MPI region region, the open one, all at one clock read:
 * the second half of a non-blocking call (MPI_Isend, MPI_Irecv) or of a
 * completion (MPI_Wait, MPI_Test; MPI_Waitall and its kin, n records),
 * whose enter was recorded before its PMPI call. A request's record never
 * needs a time of its own: a send request starts when its call returns
 * (Score-P writes MpiIsend there too) and a completion happens when its
 * call returns. Two clock reads per call, however many requests it
 * completes.
 */
void hmb_mpi_leave(uint32_t region, const struct hmb_mpi_req *q, int n) __attribute__((no_instrument_function));

/*
 * hmb_mpi_req_call records a non-blocking call of MPI region region whole
 * when it returns (MPI_Isend and its kin, MPI_Irecv, MPI_Imrecv), as
 * hmb_mpi_call does a blocking one: the enter at t0 (of hmb_clock, read
 * before the PMPI call), request record q (kind 0: none) and the leave at
 * one clock read after it, in one probe. No program code runs inside such
 * a call but an error handler's, whose records go before the enter.
 */
void hmb_mpi_req_call(uint32_t region, uint64_t t0, const struct hmb_mpi_req *q) __attribute__((no_instrument_function));

/*
 * hmb_clock_tsc tells how to read hmb_clock's ticks without calling it: 1
 * if they are the TSC's (RDTSC), 0 if CLOCK_MONOTONIC's nanoseconds.
 */
int hmb_clock_tsc(void) __attribute__((no_instrument_function));

#endif /* HMBTRACE_MPICALL_H */
