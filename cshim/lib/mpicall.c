/*
 * mpicall.c - hmb_mpi_call, the probe of a blocking MPI call recorded
 * whole when it returns (mpicall.h): on the direct path in one go
 * (direct_mpi.h), else event by event through the probes, which handle
 * every case.
 */
#include <stdint.h>

#include "hmbtrace.h"
#include "shim.h"
#include "direct.h"
#include "direct_mpi.h"
#include "mpicall.h"

/*
 * hmb_enter_at records the enter of region at time t, read before the
 * call: staged with that time on a thread that stages, else replayed in Go
 * at once (a thread on the direct path, which keeps its events in order
 * so; a thread's first probe, which makes its location).
 */
HMB_NOINST static void hmb_enter_at(uint32_t region, uint64_t t)
{
	hmb_record rec = {t, (uint64_t)HMB_KIND_ENTER << HMB_KIND_SHIFT | region};
	struct hmb_thread *th = hmb_self;
	if (th != NULL && th->loc == NULL) {
		hmb_record *p = atomic_load_explicit(&th->cur, memory_order_relaxed);
		if (p < atomic_load_explicit(&th->end, memory_order_relaxed)) {
			*p = rec;
			atomic_store_explicit(&th->cur, p + 1, memory_order_release);
			return;
		}
	}
	hmb_slow_n(&rec, 1);
}

/* hmb_mpi_call_apart records call c event by event, in the order of the direct path. */
HMB_NOINST __attribute__((noinline)) static void hmb_mpi_call_apart(const struct hmb_mpi_call *c)
{
	hmb_enter_at(c->region, c->t0);
	if (c->send.peer >= 0) {
		hmb_send_comm(c->send.peer, c->send.tag, c->send.bytes, c->send.comm);
	}
	if (c->recv.peer >= 0) {
		hmb_recv_comm(c->recv.peer, c->recv.tag, c->recv.bytes, c->recv.comm);
	}
	hmb_leave(c->region);
}

HMB_NOINST void hmb_mpi_call(const struct hmb_mpi_call *c)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1) &&
	    __builtin_expect(hmb_direct_mpi_call(th, c) == HMB_DIRECT_DONE, 1)) {
		return;
	}
	hmb_mpi_call_apart(c);
}

HMB_NOINST int hmb_clock_tsc(void)
{
	hmb_clock(); /* hmb_setup, which picks the clock, has run */
	return hmb_use_tsc;
}
