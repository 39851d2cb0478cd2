/*
 * probes.c - the probes of the C ABI and the -finstrument-functions hooks.
 * An enter, leave, message or collective takes the direct path of
 * direct.h where it can: a clock read and the event written into the
 * thread's location in place. Else the probe stages a 16-byte record
 * (shim.h); on a thread whose events are direct, a staged record is
 * replayed in Go at once. None of the library's own functions is instrumented (HMB_NOINST),
 * so the hooks never see them.
 */
#include <stdint.h>

/* This file defines hmb_enter and hmb_leave: the header's inline forms are for their callers. */
#define HMB_NO_INLINE_PROBES
#include "hmbtrace.h"
#include "shim.h"
#include "direct.h"
#include "direct_mpi.h"

/* hmb_declined finishes a probe the direct path did not take: staged, replayed at once, or dropped. */
HMB_NOINST static inline void hmb_declined(int rc, uint64_t t, uint64_t word, uint64_t ext_time, uint64_t ext_word, int n)
{
	switch (rc) {
	case HMB_DIRECT_FLUSH:
		hmb_slow_at(t, word, ext_time, ext_word, n);
		break;
	case HMB_DIRECT_DROP:
		hmb_count_dropped(HMB_DROP_SIGNAL, 1);
		break;
	default:
		hmb_stage_n(n, word, ext_time, ext_word);
	}
}

/*
 * hmb_region_enter and hmb_region_leave finish a direct enter or leave of
 * region (entry p) on location L that hmb_direct_region let go on; a probe
 * the direct path declines is staged or replayed at once.
 */
HMB_NOINST __attribute__((noinline)) static void hmb_region_enter(struct hmb_thread *th, struct hmb_go_location *L,
								  struct hmb_go_prof *p, uint32_t region, uint64_t word)
{
	uint64_t t = 0;
	int rc = hmb_direct_enter_on(th, L, p, region, &t);
	if (__builtin_expect(rc != HMB_DIRECT_DONE, 0)) {
		hmb_declined(rc, t, word, 0, 0, 1);
	}
}

HMB_NOINST __attribute__((noinline)) static void hmb_region_leave(struct hmb_thread *th, struct hmb_go_location *L,
								  struct hmb_go_prof *p, uint32_t region, uint64_t word)
{
	uint64_t t = 0;
	int rc = hmb_direct_leave_on(th, L, p, region, &t);
	if (__builtin_expect(rc != HMB_DIRECT_DONE, 0)) {
		hmb_declined(rc, t, word, 0, 0, 1);
	}
}

/*
 * hmb_thr_learn finishes a probe of region r (entry p), which is throttled
 * on the thread's location L, on the marked path: an enter counts the
 * visit in the profile, and the thread's cache learns the region, so that
 * its next probes count their visits in C, with no mark (shim.h). fslot is
 * the slot of the function cache the probe came through, or -1 for
 * hmb_enter and hmb_leave, whose cache holds regions by id: a region in
 * the same slot before has its count added to its profile entry first.
 * (A signal handler's probe that does so while the interrupted probe is
 * between its compare and its count makes that one visit count for the
 * handler's region; none is lost.) It clears the mark.
 */
HMB_NOINST __attribute__((noinline)) static void hmb_thr_learn(struct hmb_thread *th, struct hmb_go_location *L,
								struct hmb_go_prof *p, uint32_t r, int leave, int fslot)
{
	if (!leave) {
		p->after++;
	}
	if (fslot >= 0) {
		/* Its count is 0: hmb_func_cache took it when the entry last changed. */
		th->thr_funcs[fslot].addr = th->funcs[fslot].addr;
		hmb_direct_end(th, HMB_DIRECT_DONE);
		return;
	}
	size_t i = r % HMB_THR_CACHE;
	uint32_t old = th->thr_region[i];
	if (old != HMB_THR_EMPTY(i)) {
		/*
		 * Emptied first, so that a signal handler's probe of the old
		 * region takes the marked path (and, finding the mark, stages):
		 * one that counted in the entry before is in what is folded.
		 */
		th->thr_region[i] = HMB_THR_EMPTY(i);
		atomic_signal_fence(memory_order_seq_cst);
		hmb_thr_fold(L, old, th->thr_after[i]);
		th->thr_after[i] = 0;
	}
	atomic_signal_fence(memory_order_seq_cst);
	th->thr_region[i] = r;
	hmb_direct_end(th, HMB_DIRECT_DONE);
}

/* hmb_thr_fold: see direct.h. */
HMB_NOINST void hmb_thr_fold(struct hmb_go_location *L, uint32_t r, uint64_t n)
{
	struct hmb_go_prof *p = hmb_prof(L, r);
	if (p != NULL) {
		p->after += n;
	} else if (n > 0) {
		/* Not reached: a region is throttled in its profile entry, and entries never go. */
		hmb_count_dropped(HMB_DROP_INTERNAL, n);
	}
}

/* hmb_region_declined stages a probe the direct path declined before the clock, or replays it at once. */
HMB_NOINST __attribute__((noinline, cold)) static void hmb_region_declined(int rc, uint64_t word)
{
	hmb_declined(rc, 0, word, 0, 0, 1);
}

/* hmb_region_staged stages a probe on a thread whose probes are not direct. */
HMB_NOINST __attribute__((noinline)) static void hmb_region_staged(uint64_t word)
{
	hmb_stage(word);
}

/*
 * hmb_region_event records an enter (leave 0) or leave of region on thread
 * th (hmb_self), word being its staged form, fslot the slot of the function
 * cache it came through (-1: none). It is inlined into each probe, where
 * it needs no stack frame; every path is a jump to a function of its own
 * (a call in tail position), so that GCC needs none.
 */
HMB_NOINST __attribute__((always_inline)) static inline void hmb_region_event(struct hmb_thread *th, uint32_t region,
									     uint64_t word, int leave, int fslot)
{
	if (__builtin_expect(th != NULL && th->loc != NULL, 1)) {
		struct hmb_go_location *L;
		struct hmb_go_prof *p;
		int rc = hmb_direct_region(th, region, leave, &L, &p);
		if (__builtin_expect(rc == HMB_DIRECT_GO, 1)) {
			if (leave) {
				hmb_region_leave(th, L, p, region, word);
			} else {
				hmb_region_enter(th, L, p, region, word);
			}
		} else if (rc == HMB_DIRECT_THROTTLED) {
			hmb_thr_learn(th, L, p, region, leave, fslot);
		} else if (rc != HMB_DIRECT_DONE) {
			hmb_region_declined(rc, word);
		}
		return;
	}
	hmb_region_staged(word);
}

/*
 * hmb_mpi_record fills rec with the staged form of an MPI record of
 * encode.Kind kind (shim.h), its time left to be read.
 */
HMB_NOINST static inline void hmb_mpi_record(hmb_record rec[HMB_MPI_RECORDS], unsigned kind, int64_t peer_or_root,
					     uint32_t tag, uint32_t comm, uint64_t bytes, uint64_t request, uint64_t received,
					     uint32_t region)
{
	rec[0].time = 0;
	rec[0].word = (uint64_t)HMB_KIND_MPI << HMB_KIND_SHIFT | kind;
	rec[1].time = (uint64_t)peer_or_root;
	rec[1].word = (uint64_t)tag | (uint64_t)comm << 32;
	rec[2].time = bytes;
	rec[2].word = request;
	rec[3].time = received;
	rec[3].word = region;
}

/*
 * hmb_send_comm_at records a send on communicator comm at time t, read
 * before the call that sent it: a combined call (MPI_Sendrecv) whose
 * direct probe was declined issues its send when it starts, as OTF2 orders
 * Enter and MpiSend, not when it returns after its own receive. Staged
 * with that time on a thread that stages, else replayed in Go at once, as
 * hmb_enter_at does; a send on no communicator (comm 0) goes by
 * hmb_send_comm, at the time it is recorded.
 */
HMB_NOINST void hmb_send_comm_at(uint64_t t, int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	if (comm == 0) {
		hmb_send_comm(peer, tag, bytes, comm);
		return;
	}
	hmb_record rec[HMB_MPI_RECORDS];
	hmb_mpi_record(rec, HMB_ENC_SEND, peer, tag, comm, bytes, 0, 0, 0);
	rec[0].time = t;
	struct hmb_thread *th = hmb_self;
	if (th != NULL && th->loc == NULL) {
		hmb_record *p = atomic_load_explicit(&th->cur, memory_order_relaxed);
		if (p + (HMB_MPI_RECORDS - 1) < atomic_load_explicit(&th->end, memory_order_relaxed)) {
			for (int i = 0; i < HMB_MPI_RECORDS; i++) {
				p[i] = rec[i];
			}
			atomic_store_explicit(&th->cur, p + HMB_MPI_RECORDS, memory_order_release);
			return;
		}
	}
	hmb_slow_n(rec, HMB_MPI_RECORDS);
}

/* hmb_stage_recs: see shim.h. */
void hmb_stage_recs(hmb_record *rec, int n)
{
	struct hmb_thread *th = hmb_self;
	if (th != NULL) {
		hmb_record *p = atomic_load_explicit(&th->cur, memory_order_relaxed);
		if (p + (n - 1) < atomic_load_explicit(&th->end, memory_order_relaxed)) {
			rec[0].time = hmb_now();
			for (int i = 0; i < n; i++) {
				p[i] = rec[i];
			}
			atomic_store_explicit(&th->cur, p + n, memory_order_release);
			return;
		}
	}
	hmb_slow_n(rec, n);
}

/*
 * hmb_mpi_event records an MPI record r, rec being its staged form: on the
 * direct path where it can be taken, else replayed in Go at once on a
 * thread whose probes are direct (so that it stays in order with them),
 * else staged.
 */
HMB_NOINST static void hmb_mpi_event(const struct hmb_mpi *r, hmb_record rec[HMB_MPI_RECORDS])
{
	struct hmb_thread *th = hmb_self;
	if (th != NULL && th->loc != NULL) {
		uint64_t t = 0;
		int rc = hmb_direct_mpi(th, r, &t);
		if (rc != HMB_DIRECT_DONE) {
			hmb_declined_recs(rc, t, rec, HMB_MPI_RECORDS);
		}
		return;
	}
	hmb_stage_recs(rec, HMB_MPI_RECORDS);
}

/*
 * hmb_message_event records a send or receive on communicator comm (0:
 * none), word being its staged form without one.
 */
HMB_NOINST static inline void hmb_message_event(uint64_t word, int recv, int peer, uint32_t tag, uint64_t bytes,
						uint32_t comm)
{
	struct hmb_thread *th = hmb_self;
	if (th != NULL && th->loc != NULL) {
		uint64_t t = 0;
		int rc = hmb_direct_message(th, recv, (uint64_t)(int64_t)peer, tag, bytes, comm, &t);
		if (rc == HMB_DIRECT_DONE) {
			return;
		}
		if (comm == 0) {
			hmb_declined(rc, t, word, (uint64_t)(int64_t)peer, bytes, 2);
			return;
		}
		hmb_record rec[HMB_MPI_RECORDS];
		hmb_mpi_record(rec, recv ? HMB_ENC_RECV : HMB_ENC_SEND, peer, tag, comm, bytes, 0, 0, 0);
		switch (rc) {
		case HMB_DIRECT_FLUSH:
			rec[0].time = t;
			hmb_slow_n(rec, HMB_MPI_RECORDS);
			break;
		case HMB_DIRECT_DROP:
			hmb_count_dropped(HMB_DROP_SIGNAL, 1);
			break;
		default:
			hmb_stage_recs(rec, HMB_MPI_RECORDS);
		}
		return;
	}
	if (comm == 0) {
		hmb_stage2(word, (uint64_t)(int64_t)peer, bytes);
		return;
	}
	hmb_record rec[HMB_MPI_RECORDS];
	hmb_mpi_record(rec, recv ? HMB_ENC_RECV : HMB_ENC_SEND, peer, tag, comm, bytes, 0, 0, 0);
	hmb_stage_recs(rec, HMB_MPI_RECORDS);
}

/*
 * hmb_enter_event and hmb_leave_event are hmb_enter and hmb_leave past the
 * cache of throttled regions: functions of their own, so that the test in
 * front of them needs no register moves and falls through on a hit.
 */
HMB_NOINST __attribute__((noinline)) static void hmb_enter_event(uint32_t region, struct hmb_thread *th)
{
	hmb_region_event(th, region, (uint64_t)HMB_KIND_ENTER << HMB_KIND_SHIFT | region, 0, -1);
}

HMB_NOINST __attribute__((noinline)) static void hmb_leave_event(uint32_t region, struct hmb_thread *th)
{
	hmb_region_event(th, region, (uint64_t)HMB_KIND_LEAVE << HMB_KIND_SHIFT | region, 1, -1);
}

/*
 * A region throttled on the thread's location, once its cache knows it
 * (shim.h), costs a probe a look at one entry: an enter counts the visit
 * there, a leave does nothing. No mark is needed, since no Go memory is
 * touched, and no clock is read: 10 and 9 instructions.
 */
HMB_NOINST void hmb_enter(uint32_t region)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL, 1)) {
		size_t i = region % HMB_THR_CACHE;
		if (__builtin_expect(th->thr_region[i] == region, 1)) {
			hmb_count_visit(&th->thr_after[i]);
			return;
		}
	}
	hmb_enter_event(region, th);
}

HMB_NOINST void hmb_leave(uint32_t region)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->thr_region[region % HMB_THR_CACHE] == region, 1)) {
		return;
	}
	hmb_leave_event(region, th);
}

/* The inline probes' way into the library (hmbtrace.h): their cache missed. */
HMB_NOINST void hmbtrace_enter_miss_v1(uint32_t region)
{
	hmb_enter_event(region, hmb_self);
}

HMB_NOINST void hmbtrace_leave_miss_v1(uint32_t region)
{
	hmb_leave_event(region, hmb_self);
}

HMB_NOINST void hmb_send(int peer, uint32_t tag, uint64_t bytes)
{
	hmb_message_event((uint64_t)HMB_KIND_SEND << HMB_KIND_SHIFT | tag, 0, peer, tag, bytes, 0);
}

HMB_NOINST void hmb_recv(int peer, uint32_t tag, uint64_t bytes)
{
	hmb_message_event((uint64_t)HMB_KIND_RECV << HMB_KIND_SHIFT | tag, 1, peer, tag, bytes, 0);
}

HMB_NOINST void hmb_send_comm(int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	hmb_message_event((uint64_t)HMB_KIND_SEND << HMB_KIND_SHIFT | tag, 0, peer, tag, bytes, comm);
}

HMB_NOINST void hmb_recv_comm(int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	hmb_message_event((uint64_t)HMB_KIND_RECV << HMB_KIND_SHIFT | tag, 1, peer, tag, bytes, comm);
}

/*
 * A blocking MPI call's message goes with its region's enter (a send,
 * issued when the call starts: Enter, then MpiSend, as OTF2 orders them)
 * or leave (a receive, complete when the call returns: MpiRecv, then
 * Leave), in one direct probe (direct_mpi.h). Where that cannot be taken,
 * the two events are recorded one by one, in the same order.
 */
HMB_NOINST void hmb_enter_send(uint32_t region, int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1) &&
	    __builtin_expect(hmb_direct_enter_send(th, region, peer >= 0, (uint64_t)peer, tag, bytes, comm) ==
				     HMB_DIRECT_DONE,
			     1)) {
		return;
	}
	hmb_enter(region);
	if (peer >= 0) {
		hmb_send_comm(peer, tag, bytes, comm);
	}
}

HMB_NOINST void hmb_recv_leave(uint32_t region, int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1) &&
	    __builtin_expect(hmb_direct_recv_leave(th, region, peer >= 0, (uint64_t)peer, tag, bytes, comm) ==
				     HMB_DIRECT_DONE,
			     1)) {
		return;
	}
	if (peer >= 0) {
		hmb_recv_comm(peer, tag, bytes, comm);
	}
	hmb_leave(region);
}

/* hmb_mpi_probe records MPI record r on whichever path it can take. */
HMB_NOINST static void hmb_mpi_probe(const struct hmb_mpi *r)
{
	hmb_record rec[HMB_MPI_RECORDS];
	hmb_mpi_record(rec, r->kind, r->kind == HMB_ENC_COLL_COMPLETE ? r->root : (int64_t)r->peer, r->tag, r->comm, r->bytes,
		       r->request, r->received, r->region);
	hmb_mpi_event(r, rec);
}

HMB_NOINST void hmb_isend(int peer, uint32_t tag, uint64_t bytes, uint32_t comm, uint64_t request)
{
	struct hmb_mpi r = {.kind = HMB_ENC_ISEND, .peer = (uint64_t)(int64_t)peer, .tag = tag, .comm = comm,
			    .bytes = bytes, .request = request};
	hmb_mpi_probe(&r);
}

HMB_NOINST void hmb_irecv(int peer, uint32_t tag, uint64_t bytes, uint32_t comm, uint64_t request)
{
	struct hmb_mpi r = {.kind = HMB_ENC_IRECV, .peer = (uint64_t)(int64_t)peer, .tag = tag, .comm = comm,
			    .bytes = bytes, .request = request};
	hmb_mpi_probe(&r);
}

/* hmb_mpi_req_apart records q alone, through the probe of its kind. */
HMB_NOINST static void hmb_mpi_req_apart(const struct hmb_mpi_req *q)
{
	switch (q->kind) {
	case HMB_ENC_ISEND:
		hmb_isend(q->peer, q->tag, q->bytes, q->comm, q->request);
		break;
	case HMB_ENC_IRECV:
		hmb_irecv(q->peer, q->tag, q->bytes, q->comm, q->request);
		break;
	case HMB_ENC_ISEND_COMPLETE:
	case HMB_ENC_IRECV_REQUEST:
	case HMB_ENC_REQUEST_CANCELLED: {
		struct hmb_mpi r = {.kind = q->kind, .request = q->request};
		hmb_mpi_probe(&r);
		break;
	}
	default:
		if (q->kind != 0) {
			hmb_count_dropped(HMB_DROP_INTERNAL, 1); /* not a request's kind: its fields would be misread */
		}
	}
}

/*
 * hmb_mpi_leave: see mpicall.h. Where the direct path declines, the records
 * and the leave go one by one, in the same order.
 */
HMB_NOINST void hmb_mpi_leave(uint32_t region, const struct hmb_mpi_req *q, int n)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1) &&
	    __builtin_expect(hmb_direct_req_leave(th, region, q, n) == HMB_DIRECT_DONE, 1)) {
		return;
	}
	for (int i = 0; i < n; i++) {
		hmb_mpi_req_apart(&q[i]);
	}
	hmb_leave(region);
}

/* hmb_request_event records a record that holds only a request. */
HMB_NOINST static void hmb_request_event(unsigned kind, uint64_t request)
{
	struct hmb_mpi r = {.kind = kind, .request = request};
	hmb_mpi_probe(&r);
}

HMB_NOINST void hmb_isend_complete(uint64_t request)
{
	hmb_request_event(HMB_ENC_ISEND_COMPLETE, request);
}

HMB_NOINST void hmb_irecv_request(uint64_t request)
{
	hmb_request_event(HMB_ENC_IRECV_REQUEST, request);
}

HMB_NOINST void hmb_request_cancelled(uint64_t request)
{
	hmb_request_event(HMB_ENC_REQUEST_CANCELLED, request);
}

HMB_NOINST void hmb_collective_request(uint64_t request)
{
	hmb_request_event(HMB_ENC_COLL_REQUEST, request);
}

HMB_NOINST void hmb_collective_complete(uint32_t region, int root, uint64_t sent, uint64_t received, uint32_t comm,
					uint64_t request)
{
	struct hmb_mpi r = {.kind = HMB_ENC_COLL_COMPLETE, .root = root, .comm = comm, .region = region, .bytes = sent,
			    .request = request, .received = received};
	hmb_mpi_probe(&r);
}

/*
 * An RMA event takes the direct path as an MPI record does (direct_mpi.h's
 * hmb_direct_rma). Where it cannot, it is replayed in Go at once on a
 * thread whose probes are direct, which keeps it in order with them, and
 * staged on the others, as an MPI record: remote in [1].time, aux |
 * win<<32 in [1].word, bytes and id in [2], received in [3].time, group |
 * level<<32 in [3].word (cshim.Thread.replayMPI reads it back).
 */
HMB_NOINST void hmb_rma(unsigned kind, uint32_t win, int remote, uint64_t bytes, uint64_t received, uint64_t id,
			uint32_t aux, uint32_t level, uint32_t group)
{
	if (kind < HMB_RMA_WIN_CREATE || kind > HMB_RMA_OP_COMPLETE_REMOTE) {
		hmb_count_dropped(HMB_DROP_INTERNAL, 1); /* not an RMA kind: its layout would be misread */
		return;
	}
	hmb_record rec[HMB_MPI_RECORDS];
	rec[0].time = 0;
	rec[0].word = (uint64_t)HMB_KIND_MPI << HMB_KIND_SHIFT | (kind & 0xFF);
	rec[1].time = (uint64_t)(int64_t)remote;
	rec[1].word = (uint64_t)aux | (uint64_t)win << 32;
	rec[2].time = bytes;
	rec[2].word = id;
	rec[3].time = received;
	rec[3].word = (uint64_t)group | (uint64_t)level << 32;
	struct hmb_thread *th = hmb_self;
	if (th != NULL && th->loc != NULL) {
		struct hmb_rma r = {.kind = kind, .win = win, .aux = aux, .level = level, .group = group, .remote = remote,
				    .bytes = bytes, .received = received, .request = id};
		uint64_t t = 0;
		switch (hmb_direct_rma(th, &r, &t)) {
		case HMB_DIRECT_DONE:
			return;
		case HMB_DIRECT_DROP:
			hmb_count_dropped(HMB_DROP_SIGNAL, 1);
			return;
		}
		rec[0].time = t; /* 0 if it was not read: hmb_slow_n reads it */
		hmb_slow_n(rec, HMB_MPI_RECORDS);
		return;
	}
	hmb_stage_recs(rec, HMB_MPI_RECORDS);
}

/*
 * A collective takes the direct path too. When it cannot be taken now, a
 * thread whose events are direct stages it, and its next probe (the
 * leave, normally) has it replayed with itself, in one call into Go.
 */
HMB_NOINST void hmb_enter_collective(uint32_t region, int root, uint64_t bytes)
{
	hmb_enter_collective_comm(region, root, bytes, 0, 0);
}

/*
 * Without received bytes or a communicator, a collective that cannot take
 * the direct path is staged in the two records of HMB_KIND_COLL; with
 * them, as an MPI record.
 */
HMB_NOINST void hmb_enter_collective_comm(uint32_t region, int root, uint64_t sent, uint64_t received, uint32_t comm)
{
	struct hmb_thread *th = hmb_self;
	uint64_t word = (uint64_t)HMB_KIND_COLL << HMB_KIND_SHIFT | region;
	int plain = received == 0 && comm == 0;
	hmb_record rec[HMB_MPI_RECORDS];
	if (th != NULL && th->loc != NULL) {
		uint64_t t = 0;
		int rc = hmb_direct_collective(th, region, root, sent, received, comm, &t);
		if (rc == HMB_DIRECT_DONE) {
			return;
		}
		if (plain) {
			if (rc == HMB_DIRECT_STAGE) {
				hmb_stage_collective(word, (uint64_t)(int64_t)root, sent);
			} else {
				hmb_declined(rc, t, word, (uint64_t)(int64_t)root, sent, 2);
			}
			return;
		}
		hmb_mpi_record(rec, HMB_ENC_COLLECTIVE, root, 0, comm, sent, 0, received, region);
		switch (rc) {
		case HMB_DIRECT_STAGE:
			hmb_stage_collective_n(rec, HMB_MPI_RECORDS);
			break;
		case HMB_DIRECT_FLUSH:
			rec[0].time = t;
			hmb_slow_n(rec, HMB_MPI_RECORDS);
			break;
		default:
			hmb_count_dropped(HMB_DROP_SIGNAL, 1);
		}
		return;
	}
	if (plain) {
		hmb_stage2(word, (uint64_t)(int64_t)root, sent);
		return;
	}
	hmb_mpi_record(rec, HMB_ENC_COLLECTIVE, root, 0, comm, sent, 0, received, region);
	hmb_stage_recs(rec, HMB_MPI_RECORDS);
}

/*
 * The hooks GCC and Clang call at the entry and exit of every function
 * compiled with -finstrument-functions. A function the thread's cache knows
 * takes the direct path with its region, or, throttled, counts its visit
 * in the cache's entry and returns; else its address is staged, and the Go
 * side names it by its ELF symbol when it replays the record (and tells
 * the cache).
 */
/*
 * Weak, so that a static link taking libhmbtrace-hooks.a's hooks
 * (pkg-config's flags with -Bstatic) takes this archive's too without a
 * clash; the dynamic loader takes a weak definition as any other, so in
 * libhmbtrace.so they still win over glibc's no-op ones.
 */
void __cyg_profile_func_enter(void *fn, void *call_site) HMB_NOINST __attribute__((weak));
void __cyg_profile_func_exit(void *fn, void *call_site) HMB_NOINST __attribute__((weak));

HMB_NOINST __attribute__((always_inline)) static inline void hmb_func_event(void *fn, int exit)
{
	/*
	 * The cache holds the staged form's payload, the address without its
	 * top 4 bits, which is the address itself for any user-space code.
	 */
	uint64_t addr = (uintptr_t)fn;
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL, 1)) {
		size_t i = (addr >> 4) % HMB_FUNC_CACHE;
		/* Slot i's offset in the 16-byte entries, i * 16, in one instruction: the hooks run for every call. */
		size_t off = addr & ((HMB_FUNC_CACHE - 1) << 4);
		struct hmb_thr_func *t = (struct hmb_thr_func *)((char *)th->thr_funcs + off);
		if (t->addr == addr) {
			if (!exit) {
				hmb_count_visit(&t->after);
			}
			return;
		}
		struct hmb_func *f = (struct hmb_func *)((char *)th->funcs + off);
		if (__builtin_expect(f->addr == addr && f->region != 0, 1)) {
			hmb_region_event(th, f->region,
					 (uint64_t)(exit ? HMB_KIND_FUNC_EXIT : HMB_KIND_FUNC_ENTER) << HMB_KIND_SHIFT | addr, exit,
					 (int)i);
			return;
		}
	}
	addr &= HMB_PAYLOAD_MASK;
	uint64_t word = (uint64_t)(exit ? HMB_KIND_FUNC_EXIT : HMB_KIND_FUNC_ENTER) << HMB_KIND_SHIFT | addr;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1) && !th->in_direct) {
		hmb_slow_at(0, word, 0, 0, 1); /* replayed at once, and the cache told */
		return;
	}
	/* Staged; on a thread inside a probe (a signal handler's), for Go to take later. */
	hmb_region_staged(word);
}

/*
 * The hooks of libhmbtrace-hooks.a (cshim/hooks), linked into the program,
 * take the throttled functions' fast path there and call these on a miss:
 * the library's hooks, under names the program's own hooks do not
 * interpose. Their version is the cache's (hmbtrace.h).
 */
void hmbtrace_func_enter_v1(void *fn) HMB_NOINST;
void hmbtrace_func_exit_v1(void *fn) HMB_NOINST;

void hmbtrace_func_enter_v1(void *fn)
{
	hmb_func_event(fn, 0);
}

void hmbtrace_func_exit_v1(void *fn)
{
	hmb_func_event(fn, 1);
}

void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	hmb_func_event(fn, 0);
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	hmb_func_event(fn, 1);
}
