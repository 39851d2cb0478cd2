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
 * A blocking call's fused probe (hmb_direct_mpi_call_as) in a copy for a
 * send alone, one for a receive alone (nearly every blocking call is one
 * or the other) and one for any call: each copy holds only its call's
 * checks and writes, some 35 instructions fewer per call than one copy for
 * all. Not inlined, so that hmb_mpi_call, whose deferred receive needs
 * little, keeps a small frame.
 */
HMB_NOINST __attribute__((noinline)) static int hmb_direct_mpi_send_on(struct hmb_thread *th,
								      const struct hmb_mpi_call *c, uint64_t t1)
{
	return hmb_direct_mpi_call_as(th, c, t1, 0, 1, 0);
}

HMB_NOINST __attribute__((noinline)) static int hmb_direct_mpi_recv_on(struct hmb_thread *th,
								      const struct hmb_mpi_call *c, uint64_t t1,
								      int empty)
{
	return hmb_direct_mpi_call_as(th, c, t1, empty, 0, 1);
}

HMB_NOINST __attribute__((noinline)) static int hmb_direct_mpi_any_on(struct hmb_thread *th,
								     const struct hmb_mpi_call *c, uint64_t t1)
{
	return hmb_direct_mpi_call_as(th, c, t1, 0, c->send.peer >= 0, c->recv.peer >= 0);
}

/*
 * hmb_direct_mpi_call records blocking MPI call c, which returned at t1,
 * in a probe of its own.
 */
HMB_NOINST static int hmb_direct_mpi_call(struct hmb_thread *th, const struct hmb_mpi_call *c, uint64_t t1)
{
	int send = c->send.peer >= 0, recv = c->recv.peer >= 0, rc;
	if (hmb_direct_begin(th) != HMB_DIRECT_GO) {
		return HMB_DIRECT_APART;
	}
	if (send && !recv) {
		rc = hmb_direct_mpi_send_on(th, c, t1);
	} else if (recv && !send) {
		rc = hmb_direct_mpi_recv_on(th, c, t1, 0);
	} else {
		rc = hmb_direct_mpi_any_on(th, c, t1);
	}
	return hmb_direct_end(th, rc);
}

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
		/* Issued when the call started, as the direct path records it. */
		hmb_send_comm_at(c->t0, c->send.peer, c->send.tag, c->send.bytes, c->send.comm);
	}
	if (c->recv.peer >= 0) {
		hmb_recv_comm(c->recv.peer, c->recv.tag, c->recv.bytes, c->recv.comm);
	}
	hmb_leave(c->region);
}

/*
 * hmb_mpi_staged fills rec with the staged form of blocking receive c,
 * which returned at t1: the enter of its region at c->t0, the receive
 * (hmb_message_event's form with a communicator) and the leave at t1.
 */
HMB_NOINST static void hmb_mpi_staged(hmb_record rec[HMB_MPI_DEFERRED], const struct hmb_mpi_call *c, uint64_t t1)
{
	rec[0] = (hmb_record){c->t0, (uint64_t)HMB_KIND_ENTER << HMB_KIND_SHIFT | c->region};
	rec[1] = (hmb_record){t1, (uint64_t)HMB_KIND_MPI << HMB_KIND_SHIFT | HMB_ENC_RECV};
	rec[2] = (hmb_record){(uint64_t)(int64_t)c->recv.peer, (uint64_t)c->recv.tag | (uint64_t)c->recv.comm << 32};
	rec[3] = (hmb_record){c->recv.bytes, 0};
	rec[4] = (hmb_record){0, 0};
	rec[5] = (hmb_record){t1, (uint64_t)HMB_KIND_LEAVE << HMB_KIND_SHIFT | c->region};
}

/*
 * hmb_mpi_defer puts off the record of blocking receive c, which returns
 * now, to the thread's next probe: on a ping-pong, what a rank does from
 * its receive's return to its send's start is on the round trip's
 * critical path, and the next probe is the send's, after its PMPI call,
 * off it. The receive is staged, all of it with its times, in the thread's
 * staging array, which is empty on the direct path: the next probe finds
 * it there (hmb_direct_begin) and writes it first, on the direct path
 * (hmb_mpi_undefer), and everything that replays staged records (a probe
 * that the direct path declines, the thread's exit, hmb_finalize) replays
 * it in Go, in order. It returns 0 if the direct path is not open.
 */
HMB_NOINST static int hmb_mpi_defer(struct hmb_thread *th, const struct hmb_mpi_call *c)
{
	uint64_t t1 = hmb_now();
	if (hmb_direct_begin(th) != HMB_DIRECT_GO) {
		return 0;
	}
	/* hmb_direct_begin said the array is empty and open: cur == buf < end. */
	hmb_record *b = th->buf;
	if (b + HMB_MPI_DEFERRED > atomic_load_explicit(&th->end, memory_order_relaxed)) {
		hmb_direct_end(th, HMB_DIRECT_APART);
		return 0;
	}
	/*
	 * The records' place first, then the records: a signal handler's probe
	 * meanwhile finds the probe in_direct and stages behind them (none
	 * replays the array then), and one that staged since hmb_direct_begin
	 * keeps its records, the call going apart. hmb_finalize reads the array
	 * only once the probe has ended.
	 */
	if (!hmb_cur_swap(th, b, b + HMB_MPI_DEFERRED)) {
		hmb_direct_end(th, HMB_DIRECT_APART);
		return 0;
	}
	atomic_signal_fence(memory_order_seq_cst);
	hmb_mpi_staged(b, c, t1);
	/* Replayed at once with the next probe if the direct path cannot take it then. */
	th->flush_next = 1;
	hmb_direct_end(th, HMB_DIRECT_DONE);
	return 1;
}

/*
 * hmb_mpi_unstaged reads back the deferred receive that the thread's
 * staging array holds alone (cur == buf + HMB_MPI_DEFERRED): the call
 * into *c, the time it returned into *t1. It returns 0 if the array holds
 * anything else, or is closed (hmb_finalize).
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_mpi_unstaged(struct hmb_thread *th,
									      struct hmb_mpi_call *c, uint64_t *t1)
{
	hmb_record *b = th->buf, *cur = atomic_load_explicit(&th->cur, memory_order_relaxed);
	if (cur != b + HMB_MPI_DEFERRED || cur > atomic_load_explicit(&th->end, memory_order_relaxed)) {
		return 0;
	}
	/*
	 * Whatever staged them, records of hmb_mpi_staged's form are written
	 * so: the kinds, the zeros, the region and the time of the leave
	 * checked here are what the form does not take from the call.
	 */
	uint64_t region = b[0].word & HMB_PAYLOAD_MASK;
	if (b[0].word >> HMB_KIND_SHIFT != HMB_KIND_ENTER || region > UINT32_MAX ||
	    b[1].word != ((uint64_t)HMB_KIND_MPI << HMB_KIND_SHIFT | HMB_ENC_RECV) || b[2].time > INT32_MAX ||
	    b[3].word != 0 || (b[4].time | b[4].word) != 0 ||
	    b[5].word != ((uint64_t)HMB_KIND_LEAVE << HMB_KIND_SHIFT | region) || b[5].time != b[1].time) {
		return 0;
	}
	*c = (struct hmb_mpi_call){
		.t0 = b[0].time,
		.region = (uint32_t)region,
		.send = {.peer = -1},
		.recv = {.peer = (int)b[2].time, .tag = (uint32_t)b[2].word, .comm = (uint32_t)(b[2].word >> 32),
			 .bytes = b[3].time},
	};
	*t1 = b[1].time;
	return 1;
}

int hmb_mpi_undefer(struct hmb_thread *th)
{
	struct hmb_mpi_call c;
	uint64_t t1;
	if (!hmb_mpi_unstaged(th, &c, &t1)) {
		return 0;
	}
	if (hmb_direct_mpi_recv_on(th, &c, t1, 1) != HMB_DIRECT_DONE) {
		return 0; /* the records stay: flush_next has the probe replay them */
	}
	if (atomic_load_explicit(&th->cur, memory_order_relaxed) == th->buf) {
		th->flush_next = 0; /* nothing a signal handler staged meanwhile */
	}
	return 1;
}

/*
 * hmb_direct_mpi_pair_on records the deferred receive that the thread's
 * staging array holds alone and send c, which returns at t1, all of both
 * or nothing, on the direct path opened with the receive still staged:
 * hmb_direct_mpi_call_as for the receive (its staging array emptied) then
 * for c, with one set of checks for the two calls at their one depth, and
 * one lookup of the peer's matrix line if both have the same peer (a
 * ping-pong's, a send to self). On a ping-pong, the send after a receive
 * is where this runs; the receive's own probe (hmb_mpi_undefer, a second
 * hmb_direct_mpi_call_as) repeated most of the checks. Inlined into its
 * one caller, the receive read back from the array stays in registers.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_mpi_pair_on(struct hmb_thread *th,
										   const struct hmb_mpi_call *c,
										   uint64_t t1)
{
	struct hmb_mpi_call q;
	uint64_t q1;
	struct hmb_mpi_place w;
	if (!hmb_mpi_unstaged(th, &q, &q1) || !hmb_direct_mpi_call_check(th, &q, 0, 1, 2, &w)) {
		return HMB_DIRECT_APART;
	}
	struct hmb_go_location *L = w.L;
	struct hmb_go_prof *p = hmb_prof(L, c->region);
	struct hmb_go_commline *sline =
		(uint64_t)c->send.peer == (uint64_t)q.recv.peer ? w.rline : hmb_comm_line(L, (uint64_t)c->send.peer);
	if (p == NULL || p->off != HMB_OFF_NONE || p->cls != HMB_CLASS_PARADIGM || c->region == L->phase_region ||
	    sline == NULL) {
		return HMB_DIRECT_APART;
	}
	/* Before the writes, and only if the array still holds q alone (hmb_direct_mpi_call_as). */
	if (!hmb_cur_swap(th, th->buf + HMB_MPI_DEFERRED, th->buf)) {
		return HMB_DIRECT_APART;
	}
	/* The fill marks once, after both calls' bytes: a mapping left by a crash holds both or neither. */
	hmb_direct_mpi_call_write_req(&w, &q, q1, 0, 1, NULL, 0);
	w.p = p;
	w.sline = sline;
	hmb_direct_mpi_call_write(&w, c, t1, 1, 0);
	return HMB_DIRECT_DONE;
}

/*
 * hmb_mpi_pair_go records send c, which returns at t1, with the deferred
 * receive that the thread's staging array holds, on the direct path
 * (hmb_direct_mpi_pair_on). It opens the path as hmb_direct_begin does,
 * but finds the receive still staged, where hmb_direct_begin would write
 * it in a probe of its own. It returns HMB_DIRECT_DONE if it recorded
 * both, else 0 with nothing written and the probe ended: the caller then
 * takes the ordinary path, which handles every case.
 *
 * Its copy in hmb_mpi_send and hmb_mpi_call start on a cache line of their own: moved by 192
 * and 112 bytes with the code before them (becfef6, the request records),
 * their instructions the same, a send and receive to self ran some 5 ns a
 * call slower (selfsend_pairs, alternated, 7 of 8 pairs); aligned, as fast
 * as before.
 */
HMB_NOINST static int hmb_mpi_pair_go(struct hmb_thread *th, const struct hmb_mpi_call *c, uint64_t t1)
{
	if (th->in_direct || atomic_load_explicit(&th->in_slow, memory_order_relaxed)) {
		return 0;
	}
	atomic_store_explicit(&th->in_direct, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst); /* hmb_finalize's membarrier does the rest */
	if (hmb_direct_mpi_pair_on(th, c, t1) != HMB_DIRECT_DONE) {
		return hmb_direct_end(th, 0);
	}
	if (atomic_load_explicit(&th->cur, memory_order_relaxed) == th->buf) {
		th->flush_next = 0; /* nothing a signal handler staged meanwhile */
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/* hmb_mpi_call_on records blocking call c, which returned at t1, in a probe of its own, else event by event. */
HMB_NOINST __attribute__((noinline)) static void hmb_mpi_call_on(struct hmb_thread *th, const struct hmb_mpi_call *c,
								  uint64_t t1)
{
	if (__builtin_expect(hmb_direct_mpi_call(th, c, t1) != HMB_DIRECT_DONE, 0)) {
		hmb_mpi_call_apart(c);
	}
}

/*
 * hmb_mpi_send records send c, which returns now, after a deferred
 * receive: with it, in one probe (hmb_mpi_pair_go), else as any call
 * (hmb_mpi_call_on). hmb_mpi_call calls it in tail position, so that its
 * frame (the receive's deferral) is not set up on a send's way here.
 */
HMB_NOINST __attribute__((noinline, flatten, aligned(64))) static void hmb_mpi_send(struct hmb_thread *th,
										  const struct hmb_mpi_call *c)
{
	/* The clock first: its read overlaps the checks. */
	uint64_t t1 = hmb_now();
	if (__builtin_expect(hmb_mpi_pair_go(th, c, t1) != HMB_DIRECT_DONE, 0)) {
		hmb_mpi_call_on(th, c, t1);
	}
}

/* Aligned as hmb_mpi_send is. */
HMB_NOINST __attribute__((aligned(64))) void hmb_mpi_call(const struct hmb_mpi_call *c)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1)) {
		int send = c->send.peer >= 0, recv = c->recv.peer >= 0;
		if (send && !recv &&
		    atomic_load_explicit(&th->cur, memory_order_relaxed) == th->buf + HMB_MPI_DEFERRED) {
			hmb_mpi_send(th, c);
			return;
		}
		if (!send && recv) {
			if (__builtin_expect(hmb_mpi_defer(th, c), 1)) {
				return;
			}
		} else {
			/* The clock first: its read overlaps the checks. */
			hmb_mpi_call_on(th, c, hmb_now());
			return;
		}
	}
	hmb_mpi_call_apart(c);
}

/*
 * hmb_direct_mpi_req_on records non-blocking call c (no message of its
 * own), which returned at t1, and its request record q (kind 0: none), all
 * of it or nothing, on the direct path that hmb_direct_begin opened.
 */
HMB_NOINST __attribute__((noinline)) static int hmb_direct_mpi_req_on(struct hmb_thread *th,
								     const struct hmb_mpi_call *c,
								     const struct hmb_mpi_req *q, uint64_t t1)
{
	struct hmb_mpi_place w;
	if (!hmb_direct_mpi_req_check(th, c, q, &w)) {
		return HMB_DIRECT_APART;
	}
	if (q->kind != 0) {
		hmb_direct_mpi_call_write_req(&w, c, t1, 0, 0, q, 1);
	} else {
		hmb_direct_mpi_call_write(&w, c, t1, 0, 0);
	}
	return HMB_DIRECT_DONE;
}

HMB_NOINST void hmb_mpi_req_call(uint32_t region, uint64_t t0, const struct hmb_mpi_req *q)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1)) {
		/* The clock first: its read overlaps the checks. */
		uint64_t t1 = hmb_now();
		if (__builtin_expect(hmb_direct_begin(th) == HMB_DIRECT_GO, 1)) {
			struct hmb_mpi_call c = {.t0 = t0, .region = region, .send = {.peer = -1}, .recv = {.peer = -1}};
			if (__builtin_expect(hmb_direct_end(th, hmb_direct_mpi_req_on(th, &c, q, t1)) == HMB_DIRECT_DONE,
					     1)) {
				return;
			}
		}
	}
	/* Event by event, in the direct path's order: the record and the leave at a read of their own. */
	hmb_enter_at(region, t0);
	hmb_mpi_leave(region, q, 1);
}

HMB_NOINST int hmb_clock_tsc(void)
{
	hmb_clock(); /* hmb_setup, which picks the clock, has run */
	return hmb_use_tsc;
}
