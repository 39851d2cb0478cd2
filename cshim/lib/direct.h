/*
 * direct.h - the C probes' direct path: an enter or leave of a region is
 * written by the probe itself, in C, into its thread's Go location, with the
 * same steps and the same bytes as the Go probes' enter and leaveTop
 * (measure/location.go) and encoder (encode/encoder.go);
 * messages and collectives too (measure's message and enterCollective).
 * Only the common case is done here; a probe that finds anything else (a
 * full bin, a new depth or region, a closed-set change, a mismatched leave,
 * the phase region) stages its record and has it replayed in Go at once,
 * where every case is handled. Not installed.
 *
 * The structures of golayout.h mirror the Go ones field for field; they
 * are generated from the Go types, and a mismatch fails the build. The Go
 * objects are pinned (measure/cprobe.go: pinForC).
 *
 * Stopping: a direct probe marks itself in_direct, then checks that the
 * thread's staging array is empty and open (cur == buf < end). hmb_finalize
 * closes the arrays, issues a membarrier, which orders every thread's mark
 * before its check, and waits for the marks to clear: after that no probe
 * touches a location. A probe of a region throttled on the location, once
 * its thread's cache knows the region, takes no mark: it counts the visit
 * in the cache, C memory, which hmb_finalize empties and takes (shim.h).
 */
#ifndef HMBTRACE_DIRECT_H
#define HMBTRACE_DIRECT_H

#include "golayout.h"
#include "shim.h"

/*
 * hmb_mark stores the current bin's fill mark after a record's bytes (see
 * Go's package internal/survive): a mapping left by a process that died
 * holds complete records up to the mark. The barrier keeps the compiler
 * from moving the bytes' stores after it; it emits no instruction.
 */
static inline void hmb_mark(struct hmb_go_level *lv)
{
	__asm__ __volatile__("" ::: "memory");
	*(volatile uint32_t *)lv->mark = (uint32_t)lv->pos;
}

/* An MPI record for the direct path: what hmb_put_mpi encodes (the fields of encode.Record). */
struct hmb_mpi {
	unsigned kind; /* an HMB_ENC_* kind (shim.h) */
	uint64_t peer; /* a world rank */
	int64_t root;
	uint32_t tag, comm, region;
	uint64_t bytes, request, received;
};

/* What a direct probe did. */
enum {
	HMB_DIRECT_DONE = 1,   /* recorded (or counted) */
	HMB_DIRECT_STAGE = 0,  /* not for the direct path now: stage it */
	HMB_DIRECT_FLUSH = -1, /* stage it and replay it in Go at once */
	HMB_DIRECT_DROP = -2,  /* a signal handler probes while its thread is in Go: count it dropped */
};

extern int hmb_direct_on HMB_HIDDEN;

int hmb_put_enter_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint32_t region) HMB_NOINST HMB_HIDDEN;
int hmb_put_leave_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq) HMB_NOINST HMB_HIDDEN;
int hmb_put_message(struct hmb_go_level *lv, uint8_t *b, int recv, uint64_t t, uint32_t seq, uint64_t peer, uint32_t tag,
		    uint64_t bytes, uint32_t comm) HMB_NOINST HMB_HIDDEN;
int hmb_put_collective(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, int64_t root, uint64_t bytes,
		       uint64_t received, uint32_t comm) HMB_NOINST HMB_HIDDEN;
int hmb_put_mpi(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, const struct hmb_mpi *r) HMB_NOINST HMB_HIDDEN;

/*
 * hmb_put_enter is encode.Encoder.Enter with every technique on: the common
 * cases are an enter of the region the stream entered last (slot 0 of its
 * prediction, encode/predict.go), whose place in the list does not change,
 * and of the one before (slot 1: a loop calling two regions in turn).
 * hmb_put_enter_with takes the other cases to slow: hmb_put_enter_slow, or
 * an MPI call's more common forms inline (hmb_put_enter_mpi, direct_mpi.h).
 */
HMB_NOINST __attribute__((always_inline)) static inline int
hmb_put_enter_with(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint32_t region,
		   int (*slow)(struct hmb_go_level *, uint8_t *, uint64_t, uint32_t, uint32_t))
{
	uint64_t d = t - lv->time;
	if (__builtin_expect(t >= lv->time && d < (1 << 9) && seq == (d == 0 ? lv->next : 0) && region != 0, 1)) {
		if (__builtin_expect(region == lv->pred[0], 1)) {
			lv->time = t;
			lv->next = seq + 1;
			if (d < 16) {
				b[0] = (uint8_t)(HMB_TOK_PRED_ENTER | d);
				return 1;
			}
			b[0] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT | (d >> 8));
			b[1] = (uint8_t)d;
			return 2;
		}
		if (region == lv->pred[1]) {
			lv->time = t;
			lv->next = seq + 1;
			lv->pred[1] = lv->pred[0];
			lv->pred[0] = region;
			if (d == 0) {
				b[0] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT_NOW | 1);
				return 1;
			}
			b[0] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT | 1 << 1 | (d >> 8));
			b[1] = (uint8_t)d;
			return 2;
		}
	}
	return slow(lv, b, t, seq, region);
}

HMB_NOINST static inline int hmb_put_enter(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint32_t region)
{
	return hmb_put_enter_with(lv, b, t, seq, region, hmb_put_enter_slow);
}

/* hmb_put_leave is encode.Encoder.Leave with every technique on. */
HMB_NOINST static inline int hmb_put_leave(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq)
{
	uint64_t d = t - lv->time;
	if (__builtin_expect(t >= lv->time && d < (1 << 12) && seq == (d == 0 ? lv->next : 0), 1)) {
		lv->time = t;
		lv->next = seq + 1;
		if (d < 0x80) {
			b[0] = (uint8_t)(HMB_TOK_PRED_LEAVE | d);
			return 1;
		}
		b[0] = (uint8_t)(HMB_TOK_PRED_LEAVE12 | (d >> 8));
		b[1] = (uint8_t)d;
		return 2;
	}
	return hmb_put_leave_slow(lv, b, t, seq);
}

/*
 * A blocking MPI receive, once it returned, is staged whole, in
 * HMB_MPI_DEFERRED records, and written by the thread's next probe:
 * hmb_mpi_undefer (mpicall.c) writes it on the direct path, inside that
 * probe, if the staging array holds it alone, and returns 1; else 0, and
 * the records stay for Go to replay.
 */
enum { HMB_MPI_DEFERRED = 6 };
int hmb_mpi_undefer(struct hmb_thread *th) HMB_NOINST HMB_HIDDEN;

/*
 * hmb_direct_begin marks the probe in_direct and says whether it may go on
 * (HMB_DIRECT_GO); if not, whether to stage the probe or to have it replayed
 * at once with a staged collective (flush_next).
 */
enum { HMB_DIRECT_GO = 2, HMB_DIRECT_THROTTLED = 3 };
HMB_NOINST static inline int hmb_direct_begin(struct hmb_thread *th)
{
	if (__builtin_expect(th->in_direct, 0)) {
		/* A signal handler probes inside a probe: the array is safe, and the next probe replays it. */
		th->flush_next = 1;
		return HMB_DIRECT_STAGE;
	}
	if (__builtin_expect(atomic_load_explicit(&th->in_slow, memory_order_relaxed), 0)) {
		return HMB_DIRECT_DROP; /* ... inside the slow path, which is replaying into Go */
	}
	atomic_store_explicit(&th->in_direct, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst); /* hmb_finalize's membarrier does the rest */
	hmb_record *c = atomic_load_explicit(&th->cur, memory_order_relaxed);
	if (__builtin_expect(c == th->buf && c < atomic_load_explicit(&th->end, memory_order_relaxed), 1)) {
		return HMB_DIRECT_GO;
	}
	if (c == th->buf + HMB_MPI_DEFERRED && hmb_mpi_undefer(th)) {
		return HMB_DIRECT_GO;
	}
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&th->in_direct, 0, memory_order_relaxed);
	return th->flush_next && c != th->buf ? HMB_DIRECT_FLUSH : HMB_DIRECT_STAGE;
}

HMB_NOINST static inline int hmb_direct_end(struct hmb_thread *th, int result)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&th->in_direct, 0, memory_order_release);
	return result;
}

/*
 * hmb_direct_open begins a direct probe on the thread's location *L: the
 * probe goes on if hmb_direct_begin says so and the location keeps neither
 * call paths nor a duration filter, which need the Go probes for every event.
 */
HMB_NOINST static inline int hmb_direct_open(struct hmb_thread *th, struct hmb_go_location **L)
{
	int go = hmb_direct_begin(th);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	*L = th->loc;
	if (*L == NULL || (*L)->cpt != NULL || (*L)->min_dur != 0) {
		return hmb_direct_end(th, HMB_DIRECT_STAGE);
	}
	return HMB_DIRECT_GO;
}

/*
 * hmb_direct_record begins a direct record at the location's current
 * depth (a message, an MPI or RMA record, a task's): hmb_direct_open, the
 * clock read into *t first, so that the read overlaps the rest, and the
 * checks every such record makes: the pool's epoch unchanged, and no
 * enters held by the duration filter, which Go writes around the record.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_record(struct hmb_thread *th,
									      struct hmb_go_location **L, uint64_t *t)
{
	int go = hmb_direct_open(th, L);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	*t = hmb_now();
	if (atomic_load_explicit(th->epoch_word, memory_order_relaxed) != (*L)->epoch || (*L)->pending_from != 0) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	return HMB_DIRECT_GO;
}

/*
 * hmb_closed reports whether records of class cls at depth d are not kept:
 * measure's Location.limitOf for the paradigm and communication classes,
 * and the classes the pool closed.
 */
HMB_NOINST static inline int hmb_closed(const struct hmb_go_location *L, int64_t d, unsigned cls)
{
	return d >= (cls == HMB_CLASS_PARADIGM ? L->plimit : L->mlimit) ||
	       (((const struct hmb_go_hierarchy *)L->h)->class_closed & (1u << cls)) != 0;
}

/*
 * hmb_declined_recs finishes a probe of n records that the direct path did
 * not take (rc; t is its time if the clock was read, else 0): replayed at
 * once, dropped and counted, or staged.
 */
HMB_NOINST static inline void hmb_declined_recs(int rc, uint64_t t, hmb_record *rec, int n)
{
	switch (rc) {
	case HMB_DIRECT_FLUSH:
		rec[0].time = t;
		hmb_slow_n(rec, n);
		break;
	case HMB_DIRECT_DROP:
		hmb_count_dropped(HMB_DROP_SIGNAL, 1);
		break;
	default:
		hmb_stage_recs(rec, n);
	}
}

/* hmb_direct_drop counts an event at closed depth d in counts (drops, mdrops or cdrops), for Go. */
HMB_NOINST static inline void hmb_direct_drop(struct hmb_thread *th, uint64_t *counts, int64_t d)
{
	counts[d]++;
	if ((size_t)d >= th->ndrops) {
		th->ndrops = (size_t)d + 1;
	}
}

/*
 * hmb_stamp is measure's stamp: the time t clamped to the location's last
 * (*tt), reduced (*tr), and its sequence number among the events of its
 * tick, which it returns.
 */
HMB_NOINST static inline uint32_t hmb_stamp(struct hmb_go_location *L, uint64_t t, uint64_t *tt, uint64_t *tr)
{
	if (t < L->last) {
		t = L->last;
	}
	uint64_t r = t >> (L->shift & 63);
	uint32_t seq = r == L->last_tr ? L->run + 1 : 0;
	L->last = *tt = t;
	L->last_tr = *tr = r;
	L->run = seq;
	return seq;
}

/*
 * hmb_message_stamp stamps a send or receive at now and counts it in the
 * location's matrix line, whatever the buffer keeps of it: the first steps
 * of every direct message probe (measure's message). It returns the seq
 * and sets *tr.
 */
HMB_NOINST static inline uint32_t hmb_message_stamp(struct hmb_go_location *L, struct hmb_go_commline *line, uint64_t now,
						 int recv, uint64_t bytes, uint64_t *tr)
{
	uint64_t tt;
	uint32_t seq = hmb_stamp(L, now, &tt, tr);
	L->recorded++;
	if (recv) {
		line->recv++;
		line->recv_b += bytes;
	} else {
		line->sent++;
		line->sent_b += bytes;
	}
	return seq;
}

/*
 * hmb_prof returns region r's profile entry, NULL if its page is not made
 * yet (measure's Location.entry).
 */
HMB_NOINST static inline struct hmb_go_prof *hmb_prof(struct hmb_go_location *L, uint32_t r)
{
	uint64_t i = r >> HMB_PROF_PAGE_BITS;
	if (__builtin_expect(i >= (uint64_t)L->prof.len, 0)) {
		return NULL;
	}
	struct hmb_go_prof *page = ((struct hmb_go_prof **)L->prof.ptr)[i];
	return page != NULL ? page + (r & (HMB_PROF_PAGE - 1)) : NULL;
}

/*
 * hmb_direct_off finishes a probe of a region whose entry p is missing or
 * says the probes skip it, before the clock is read: measure's enterOff and
 * leaveOff. A throttled region's enter counts the visit; its leave does
 * nothing, since it was throttled with no call open. Anything else goes to Go.
 */
HMB_NOINST static inline int hmb_direct_off(struct hmb_thread *th, struct hmb_go_location *L, struct hmb_go_prof *p,
					    int leave)
{
	if (p != NULL && p->off == HMB_OFF_THROTTLED) {
		if (!leave) {
			p->after++;
		}
		return hmb_direct_end(th, HMB_DIRECT_DONE);
	}
	if (p != NULL && p->off == HMB_OFF_FILTERED) {
		/* Excluded by the filter file: not even the clock is read. */
		L->recorded++;
		L->filtered_name++;
		return hmb_direct_end(th, HMB_DIRECT_DONE);
	}
	return hmb_direct_end(th, HMB_DIRECT_FLUSH);
}

/*
 * hmb_direct_push opens a frame of region r (entry p) and class cls at
 * depth d, not yet written, and counts the visit: the bookkeeping
 * measure's enter and enterCollective share.
 */
HMB_NOINST static inline struct hmb_go_frame *hmb_direct_push(struct hmb_go_location *L, struct hmb_go_prof *p,
							     int64_t d, uint32_t r, uint8_t cls, uint64_t tt,
							     uint64_t tr, uint32_t seq)
{
	struct hmb_go_frame *f = (struct hmb_go_frame *)L->stack.ptr + d;
	f->start = tt;
	f->child = 0;
	f->tr = tr;
	f->seq = seq;
	f->region = r;
	f->state = HMB_FRAME_DROPPED;
	f->counted = 0;
	f->cls = cls;
	L->depth = d;
	p->visits++;
	p->active++;
	return f;
}

/*
 * hmb_thr_fold adds n visits of region r after it was throttled to its
 * entry of location L's profile (where the location is the caller's to
 * write): what the caches counted in C.
 */
void hmb_thr_fold(struct hmb_go_location *L, uint32_t r, uint64_t n) HMB_NOINST HMB_HIDDEN;

/*
 * hmb_count_visit counts a visit of a throttled region in a cache's entry:
 * one instruction on x86-64, which a signal handler of the thread cannot
 * split, so that a handler's probe counting the same entry is not lost.
 */
HMB_NOINST static inline void hmb_count_visit(uint64_t *n)
{
#if defined(__x86_64__)
	__asm__ __volatile__("addq $1, %0" : "+m"(*n));
#else
	(*n)++; /* a load, an add and a store: a signal handler's count in between is lost */
#endif
}

/*
 * hmb_direct_region begins a direct enter or leave of region r: it marks the
 * probe in_direct and finds the region's entry *P on the thread's location
 * *L. It returns HMB_DIRECT_THROTTLED for a region throttled there, whose
 * probe hmb_thr_learn finishes before the clock is read; HMB_DIRECT_GO for
 * a region measured on a location whose probes may go on with
 * hmb_direct_enter_on or hmb_direct_leave_on (neither call paths nor a
 * duration filter, which need the Go probes for every event); else what to
 * do with the probe, the mark cleared. It is inlined into the probe and
 * needs no stack frame: the probe's paths are calls in tail position
 * (probes.c).
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_region(struct hmb_thread *th, uint32_t r, int leave,
									      struct hmb_go_location **L,
									      struct hmb_go_prof **P)
{
	int go = hmb_direct_begin(th);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	/* A region switched off is one whatever the location keeps: its flag comes first. */
	struct hmb_go_location *l = *L = th->loc;
	struct hmb_go_prof *p = *P = l != NULL ? hmb_prof(l, r) : NULL;
	if (__builtin_expect(p != NULL && p->off == HMB_OFF_THROTTLED, 0)) {
		return HMB_DIRECT_THROTTLED;
	}
	if (__builtin_expect(p == NULL || p->off != HMB_OFF_NONE, 0)) {
		return l != NULL ? hmb_direct_off(th, l, p, leave) : hmb_direct_end(th, HMB_DIRECT_STAGE);
	}
	if (l->cpt != NULL || l->min_dur != 0) {
		return hmb_direct_end(th, HMB_DIRECT_STAGE); /* hmb_direct_open's rule */
	}
	return HMB_DIRECT_GO;
}

/*
 * hmb_direct_enter_on records an enter of region r (entry p, measured) at
 * the clock's time, after hmb_direct_region said HMB_DIRECT_GO: the steps of
 * measure's enter with neither counters, call paths nor duration filter.
 * *t receives the time when it was read. The region's entry says its
 * class: enter/leave, or paradigm (MPI, OpenMP), which has its own levels
 * and depth limit.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_enter_on(struct hmb_thread *th,
										struct hmb_go_location *L,
										struct hmb_go_prof *p, uint32_t r,
										uint64_t *t)
{
	uint64_t now = *t = hmb_now();
	int64_t d = L->depth + 1;
	if (atomic_load_explicit(th->epoch_word, memory_order_relaxed) != L->epoch || d >= L->stack.len) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint8_t cls = p->cls;
	int par = cls == HMB_CLASS_PARADIGM;
	struct hmb_go_slice *levels = par ? &L->par_levels : &L->levels;
	struct hmb_go_level *lv = NULL;
	if (d < (par ? L->plimit : L->limit)) {
		if (d >= levels->len || (lv = ((struct hmb_go_level **)levels->ptr)[d]) == NULL ||
		    lv->bin.len - lv->pos < 2 * HMB_MAX_ENTER_LEAVE) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	} else if (d >= HMB_DIRECT_DEPTHS || par) {
		/* A paradigm drop is counted in Go: the C side counts enter/leave ones only. */
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	L->recorded++;
	uint64_t tt, tr;
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	struct hmb_go_frame *f = hmb_direct_push(L, p, d, r, cls, tt, tr, seq);
	if (lv != NULL) {
		lv->pos += hmb_put_enter(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq, r);
		lv->n++;
		hmb_mark(lv);
		f->state = HMB_FRAME_WRITTEN;
	} else {
		hmb_direct_drop(th, th->drops, d);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_direct_leave_on records a leave of region r (entry p, measured),
 * after hmb_direct_region said HMB_DIRECT_GO: measure's leave and leaveTop
 * for the common case, throttling included.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_leave_on(struct hmb_thread *th,
										struct hmb_go_location *L,
										struct hmb_go_prof *p, uint32_t r,
										uint64_t *t)
{
	uint64_t now = *t = hmb_now();
	int64_t d = L->depth;
	struct hmb_go_frame *f = (struct hmb_go_frame *)L->stack.ptr + d;
	if (atomic_load_explicit(th->epoch_word, memory_order_relaxed) != L->epoch || d == 0 || f->region != r ||
	    f->counted || f->region == L->phase_region) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint8_t cls = f->cls;
	struct hmb_go_level *lv = NULL;
	if (f->state == HMB_FRAME_WRITTEN) {
		/* measure's leaveTop looks the enter/leave level up first, also for another class. */
		struct hmb_go_slice *other = cls == HMB_CLASS_COLLECTIVE ? &L->coll_levels
					     : cls == HMB_CLASS_PARADIGM  ? &L->par_levels
									  : NULL;
		if (d >= L->levels.len || (lv = ((struct hmb_go_level **)L->levels.ptr)[d]) == NULL ||
		    (other != NULL && (d >= other->len || (lv = ((struct hmb_go_level **)other->ptr)[d]) == NULL)) ||
		    lv->bin.len - lv->pos < HMB_MAX_ENTER_LEAVE) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	} else if (f->state != HMB_FRAME_DROPPED || d == L->lost_at || d >= HMB_DIRECT_DEPTHS ||
		   cls == HMB_CLASS_PARADIGM) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint64_t tt, tr;
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	uint64_t dur = tt - f->start;
	if (--p->active == 0) {
		p->incl += dur;
		p->long_calls += dur >= L->thr_ticks;
		/* measure's throttleDue, the rule of throttle.go. */
		if (p->visits >= L->thr_early &&
		    (p->long_calls << HMB_THROTTLE_EARLY_SHIFT <= p->visits ||
		     (p->visits >= L->thr_calls && p->long_calls << HMB_THROTTLE_LATE_SHIFT <= p->visits)) &&
		    cls == HMB_CLASS_REGION && p->cls == HMB_CLASS_REGION) {
			/* measure's throttle: the phase region never gets here. */
			p->off = HMB_OFF_THROTTLED;
			p->throttled_at = tt;
		}
	}
	p->excl += dur - f->child;
	L->depth = d - 1;
	f[-1].child += dur;
	L->recorded++;
	if (lv != NULL) {
		lv->pos += hmb_put_leave(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq);
		lv->n++;
		hmb_mark(lv);
	} else {
		hmb_direct_drop(th, cls == HMB_CLASS_COLLECTIVE ? th->cdrops : th->drops, d);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_comm_line finds world rank peer's line of the location's matrix
 * (measure's commLine), NULL if the peer is new: Go adds it.
 */
HMB_NOINST static inline struct hmb_go_commline *hmb_comm_line(struct hmb_go_location *L, uint64_t peer)
{
	if (L->comm_lines.len == 0) {
		return NULL;
	}
	uint64_t mask = (uint64_t)L->comm_lines.len - 1;
	struct hmb_go_commline *lines = L->comm_lines.ptr;
	for (uint64_t i = ((peer << 1 | 1) * UINT64_C(0x9E3779B97F4A7C15)) >> (L->comm_shift & 63);; i = (i + 1) & mask) {
		struct hmb_go_commline *c = &lines[i];
		/* The hit first: an unused line has rank 0. */
		if (__builtin_expect(c->peer == peer && c->rank == 1, 1)) {
			return c;
		}
		if (c->used == 0) {
			return NULL;
		}
	}
}

/*
 * hmb_direct_message records a send or receive with a world rank as the
 * peer, on communicator comm (0: none): measure's message without a
 * duration filter. The matrix counts it whatever the buffer keeps.
 */
HMB_NOINST static inline int hmb_direct_message(struct hmb_thread *th, int recv, uint64_t peer, uint32_t tag,
						uint64_t bytes, uint32_t comm, uint64_t *t)
{
	struct hmb_go_location *L;
	int go = hmb_direct_record(th, &L, t);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	uint64_t now = *t;
	int64_t d = L->depth;
	struct hmb_go_commline *line = hmb_comm_line(L, peer);
	if (line == NULL) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	struct hmb_go_level *lv = NULL;
	int closed = hmb_closed(L, d, HMB_CLASS_MESSAGE);
	if (!closed) {
		if (d >= L->msg_levels.len || (lv = ((struct hmb_go_level **)L->msg_levels.ptr)[d]) == NULL ||
		    lv->bin.len - lv->pos < HMB_MAX_MESSAGE) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	} else if (d >= HMB_DIRECT_DEPTHS) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint64_t tr;
	uint32_t seq = hmb_message_stamp(L, line, now, recv, bytes, &tr);
	if (lv != NULL) {
		lv->pos += hmb_put_message(lv, (uint8_t *)lv->bin.ptr + lv->pos, recv, tr, seq, peer, tag, bytes, comm);
		lv->n++;
		hmb_mark(lv);
	} else {
		hmb_direct_drop(th, th->mdrops, d);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_direct_mpi records a non-blocking operation's record or a
 * collective's completion at the current depth: measure's mpiRecord
 * without a duration filter, in the message class, or the collective class
 * for a collective's request and completion. A send or receive is counted
 * in the matrix whatever the buffer keeps.
 */
HMB_NOINST static inline int hmb_direct_mpi(struct hmb_thread *th, const struct hmb_mpi *r, uint64_t *t)
{
	struct hmb_go_location *L;
	int go = hmb_direct_record(th, &L, t);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	uint64_t now = *t;
	int64_t d = L->depth;
	if (r->kind == HMB_ENC_COLL_COMPLETE) {
		/* It names a region it does not enter: Go tells one the
		 * measurement never defined, a usage error (measure's defined). */
		struct hmb_go_prof *p = hmb_prof(L, r->region);
		if (p == NULL || p->off == HMB_OFF_UNDEFINED) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	}
	int counted = r->kind == HMB_ENC_ISEND || r->kind == HMB_ENC_IRECV;
	struct hmb_go_commline *line = NULL;
	if (counted && (line = hmb_comm_line(L, r->peer)) == NULL) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	int coll = r->kind == HMB_ENC_COLL_REQUEST || r->kind == HMB_ENC_COLL_COMPLETE;
	unsigned cls = coll ? HMB_CLASS_COLLECTIVE : HMB_CLASS_MESSAGE;
	struct hmb_go_slice *levels = coll ? &L->coll_levels : &L->msg_levels;
	struct hmb_go_level *lv = NULL;
	int closed = hmb_closed(L, d, cls);
	if (!closed) {
		/* buffer.Level.Put's room: the larger of a message and a collective. */
		if (d >= levels->len || (lv = ((struct hmb_go_level **)levels->ptr)[d]) == NULL ||
		    lv->bin.len - lv->pos < HMB_MAX_COLLECTIVE) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	} else if (d >= HMB_DIRECT_DEPTHS) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint64_t tt, tr;
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	L->recorded++;
	if (line != NULL) {
		if (r->kind == HMB_ENC_IRECV) {
			line->recv++;
			line->recv_b += r->bytes;
		} else {
			line->sent++;
			line->sent_b += r->bytes;
		}
	}
	if (lv != NULL) {
		lv->pos += hmb_put_mpi(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq, r);
		lv->n++;
		hmb_mark(lv);
	} else {
		hmb_direct_drop(th, coll ? th->cdrops : th->mdrops, d);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_direct_collective records the enter of region r, a collective with
 * root, bytes sent and received and communicator comm (0: none):
 * measure's enterCollective without counters, call paths or duration
 * filter.
 */
HMB_NOINST static inline int hmb_direct_collective(struct hmb_thread *th, uint32_t r, int root, uint64_t bytes,
						   uint64_t received, uint32_t comm, uint64_t *t)
{
	struct hmb_go_location *L;
	int go = hmb_direct_open(th, &L);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	struct hmb_go_prof *p = hmb_prof(L, r);
	if (p == NULL || p->off != HMB_OFF_NONE) {
		return hmb_direct_off(th, L, p, 0);
	}
	uint64_t now = *t = hmb_now();
	int64_t d = L->depth + 1;
	if (atomic_load_explicit(th->epoch_word, memory_order_relaxed) != L->epoch || d >= L->stack.len ||
	    L->pending_from != 0) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	struct hmb_go_level *lv = NULL;
	int closed = hmb_closed(L, d, HMB_CLASS_COLLECTIVE);
	if (!closed) {
		if (d >= L->coll_levels.len || (lv = ((struct hmb_go_level **)L->coll_levels.ptr)[d]) == NULL ||
		    lv->bin.len - lv->pos < 2 * HMB_MAX_ENTER_LEAVE + HMB_MAX_COLLECTIVE) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	} else if (d >= HMB_DIRECT_DEPTHS) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	/* Two stamps: the enter's, and its root and bytes' at the same time, next in the tick. */
	uint64_t tt, tr;
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	L->run = seq + 1;
	L->recorded += 2;
	struct hmb_go_frame *f = hmb_direct_push(L, p, d, r, HMB_CLASS_COLLECTIVE, tt, tr, seq);
	if (lv != NULL) {
		uint8_t *b = (uint8_t *)lv->bin.ptr + lv->pos;
		int n = hmb_put_enter(lv, b, tr, seq, r);
		n += hmb_put_collective(lv, b + n, tr, seq + 1, root, bytes, received, comm);
		lv->pos += n;
		lv->n += 2;
		hmb_mark(lv);
		f->state = HMB_FRAME_WRITTEN;
	} else {
		hmb_direct_drop(th, th->cdrops, d);
		hmb_direct_drop(th, th->cdrops, d);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

#endif /* HMBTRACE_DIRECT_H */
