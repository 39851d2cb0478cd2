/*
 * direct_mpi.h - the direct path of a blocking MPI call's two probes,
 * each written as one: the enter of its region with its send
 * (hmb_enter_send), its receive with the leave of its region
 * (hmb_recv_leave); and of the RMA records. One begin and end, one lookup
 * of the location, the region, the levels and the matrix line for two
 * events: the bookkeeping of two probes was most of what a wrapper added
 * to an MPI call. The two events share one clock read, the message taking
 * the enter's or the leave's time, as Score-P writes them, for a SEQ byte
 * on the message or the leave, which equal times need. Inside these probes
 * the read saved hides in their other work on this VM (mpi_critical's two
 * probes take 54 ns either way); where little else runs, as in a wrapper,
 * an RDTSC costs some 11 ns. Not installed.
 *
 * It takes the common case only, and only whole: the region of the MPI
 * paradigm (never throttled), both levels there with room, the peer's line
 * in the matrix. Without a message (a call to MPI_PROC_NULL, a failed
 * call, or any MPI call's other probe), it is a lean enter or leave of an
 * MPI region. If a check fails it writes nothing and returns
 * HMB_DIRECT_APART, and the caller records the events one by one with
 * direct.h's probes, which handle every case. The steps are those of
 * hmb_direct_enter_on then hmb_direct_message, and of hmb_direct_message
 * then hmb_direct_leave_on.
 */
#ifndef HMBTRACE_DIRECT_MPI_H
#define HMBTRACE_DIRECT_MPI_H

#include "direct.h"
#include "hmbtrace.h" /* HMB_RMA_* */
#include "mpicall.h"

/* Not taken whole: record the events one by one. */
enum { HMB_DIRECT_APART = 3 };

/*
 * hmb_direct_mpi_entry finds, for a fused probe of region r on the direct
 * path (hmb_direct_begin said HMB_DIRECT_GO), the location *L and the
 * region's entry *p: 0 if the probe cannot take the fused path: the checks
 * of hmb_direct_open and of the region's entry, which must be the MPI
 * paradigm's and on. It does not end the probe.
 */
HMB_NOINST static inline int hmb_direct_mpi_entry(struct hmb_thread *th, uint32_t r, struct hmb_go_location **L,
						  struct hmb_go_prof **p)
{
	*L = th->loc;
	return !(*L == NULL || (*L)->cpt != NULL || (*L)->min_dur != 0 || (*p = hmb_prof(*L, r)) == NULL ||
		 (*p)->off != HMB_OFF_NONE || (*p)->cls != HMB_CLASS_PARADIGM ||
		 atomic_load_explicit(th->epoch_word, memory_order_relaxed) != (*L)->epoch || (*L)->pending_from != 0);
}

/*
 * hmb_direct_mpi_open begins a fused probe of region r: *L is the
 * location, *p the region's entry. It returns 0 (and ends the probe) if
 * the probe cannot take the fused path (hmb_direct_mpi_entry).
 */
HMB_NOINST static inline int hmb_direct_mpi_open(struct hmb_thread *th, uint32_t r, struct hmb_go_location **L,
						 struct hmb_go_prof **p)
{
	if (hmb_direct_begin(th) != HMB_DIRECT_GO) {
		return 0;
	}
	if (!hmb_direct_mpi_entry(th, r, L, p)) {
		hmb_direct_end(th, HMB_DIRECT_APART);
		return 0;
	}
	return 1;
}

/* hmb_direct_mpi_level returns levels[d] if it has room bytes left, else NULL. */
HMB_NOINST static inline struct hmb_go_level *hmb_direct_mpi_level(struct hmb_go_slice *levels, int64_t d,
								   int64_t room)
{
	struct hmb_go_level *lv;
	if (d >= levels->len || (lv = ((struct hmb_go_level **)levels->ptr)[d]) == NULL || lv->bin.len - lv->pos < room) {
		return NULL;
	}
	return lv;
}

/* hmb_put_uv2 writes v < 1<<14 in LEB128: one byte or two. */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_uv2(uint8_t *b, uint64_t v)
{
	if (v < 0x80) {
		b[0] = (uint8_t)v;
		return 1;
	}
	b[0] = (uint8_t)(v | 0x80);
	b[1] = (uint8_t)(v >> 7);
	return 2;
}

/*
 * hmb_uv4_word returns v < 1<<28 in LEB128, one to four bytes, as the low
 * bytes of a word, and its length in *n, with no branch.
 */
HMB_NOINST __attribute__((always_inline)) static inline uint64_t hmb_uv4_word(uint64_t v, int *n)
{
	/* A size of one byte, a small message's, for 2 instructions instead of some 25. */
	if (__builtin_expect(v < 0x80, 1)) {
		*n = 1;
		return v;
	}
	int k = 1 + (v >= 0x80) + (v >= 0x4000) + (v >= 0x200000);
	uint64_t w = (v & 0x7f) | (v & 0x3f80) << 1 | (v & 0x1fc000) << 2 | (v & 0xfe00000) << 3;
	*n = k;
	/* The continuation bit on every byte but the last. */
	return w | (UINT64_C(0x808080) & ((UINT64_C(1) << (8 * (k - 1))) - 1));
}

/* hmb_put_uv_inline writes v in LEB128, inline: hmb_put_uv of direct.c. */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_uv_inline(uint8_t *b, uint64_t v)
{
	int n = 0;
	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return n;
}

/*
 * hmb_seq_needed says whether a record at delta d from its stream's time
 * with sequence number seq needs a SEQ prefix: where the decoder would
 * infer another number (encode's putHead), the next in the tick at the
 * same time, the first (0) after a time step. The one rule for every
 * encoder of the direct path (hmb_put_prefix of direct.c, the inline forms here).
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_seq_needed(const struct hmb_go_level *lv, uint64_t d,
									   uint32_t seq)
{
	return seq != (d == 0 ? lv->next : 0);
}

/* hmb_seq_byte is the one-byte SEQ prefix of 0 < seq < 32. */
HMB_NOINST __attribute__((always_inline)) static inline uint8_t hmb_seq_byte(uint32_t seq)
{
	return (uint8_t)(HMB_TOK_SEQ_INLINE | seq);
}

/*
 * hmb_head_form says how a record at time t with sequence number seq
 * begins in level lv in the form the inline encoders write: the delta in
 * *d, and 1 for a one-byte SEQ prefix, 0 for none; -1 for any other (a
 * time before the stream's, which is clamped, or a prefix of more bytes),
 * which hmb_put_prefix of direct.c writes.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_head_form(const struct hmb_go_level *lv, uint64_t t,
									  uint32_t seq, uint64_t *d)
{
	uint64_t last = lv->time;
	*d = t - last;
	int prefix = hmb_seq_needed(lv, *d, seq);
	return t < last || (prefix && (seq == 0 || seq >= 32)) ? -1 : prefix;
}

/*
 * hmb_head_move moves stream lv on to a record at time t with sequence
 * number seq, whose head hmb_head_form found of form prefix (0 or 1), and
 * writes the SEQ prefix, if any, at b: it returns the bytes written. The
 * stream's fields first: a byte stored through b may alias them.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_head_move(struct hmb_go_level *lv, uint8_t *b,
									  uint64_t t, uint32_t seq, int prefix)
{
	lv->time = t;
	lv->next = seq + 1;
	if (prefix) {
		b[0] = hmb_seq_byte(seq);
	}
	return prefix;
}

/*
 * hmb_put_enter_pred is hmb_put_enter_slow with the common forms of every
 * slot of the stream's prediction inline, and a one-byte SEQ prefix; a
 * long delta goes there still. The bytes and the prediction's moves are
 * hmb_put_enter_slow's.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_enter_pred(struct hmb_go_level *lv, uint8_t *b,
									       uint64_t t, uint32_t seq,
									       uint32_t region)
{
	enum { slots = sizeof lv->pred / sizeof lv->pred[0] };
	uint64_t d;
	int prefix = hmb_head_form(lv, t, seq, &d);
	if (__builtin_expect(prefix < 0 || d >= (1 << 9) || region == 0, 0)) {
		return hmb_put_enter_slow(lv, b, t, seq, region);
	}
	/*
	 * Move to front in one pass: each slot takes the one before it until
	 * the region's. A region in none ends with the last slot dropped, as
	 * encode's predict does.
	 */
	uint32_t *pr = lv->pred, prev = pr[0];
	int slot = 0;
	if (prev != region) {
		pr[0] = region;
		for (slot = 1; slot < slots; slot++) {
			uint32_t x = pr[slot];
			pr[slot] = prev;
			if (x == region) {
				break;
			}
			prev = x;
		}
	}
	int n = hmb_head_move(lv, b, t, seq, prefix);
	if (slot == 0 && d < 16) {
		b[n] = (uint8_t)(HMB_TOK_PRED_ENTER | d);
		return n + 1;
	}
	if (__builtin_expect(slot < slots, 1)) {
		if (slot > 0 && d == 0) {
			b[n] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT_NOW | slot);
			return n + 1;
		}
		b[n] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT | slot << 1 | (d >> 8));
		b[n + 1] = (uint8_t)d;
		return n + 2;
	}
	if (d == 0) {
		b[n] = HMB_TOK_PRED_ENTER_NOW;
		return n + 1 + hmb_put_uv_inline(b + n + 1, region);
	}
	b[n++] = HMB_TOK_PRED_ENTER_REGION;
	n += hmb_put_uv_inline(b + n, region);
	return n + hmb_put_uv2(b + n, d);
}

/*
 * hmb_put_enter_mpi is hmb_put_enter for the enter of an MPI call's
 * region, with what it hands to hmb_put_enter_slow inline in its common
 * forms (hmb_put_enter_pred): a halo exchange or a round of non-blocking
 * calls and their completions cycles through three or four regions, each
 * entered from slot 2 or 3 of the prediction (some 90 instructions with
 * hmb_put_enter_slow's calls, some 25 inline).
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_enter_mpi(struct hmb_go_level *lv, uint8_t *b,
									      uint64_t t, uint32_t seq,
									      uint32_t region)
{
	return hmb_put_enter_with(lv, b, t, seq, region, hmb_put_enter_pred);
}

/*
 * hmb_put_message_inline is hmb_put_message (direct.c) for the message of
 * an MPI call, inline: a time delta, peer, tag and communicator (not none)
 * of at most two bytes each, and a sequence number that needs no prefix or
 * a one-byte one (a send is the second event of its tick). Anything else
 * goes to hmb_put_message. The bytes are the same. A delta of two bytes is
 * common: on a ping-pong, a rank's messages are half a round trip apart, a
 * hundred ticks or more.
 *
 * The commonest form, every field but the size of one byte and the size
 * of at most four, is put together in two words and written with two
 * 8-byte stores at places known early, zeros past the record (up to 13
 * bytes in all: within the room of HMB_MAX_MESSAGE its callers checked,
 * and the next record overwrites them). Written byte by byte, through a
 * uint8_t pointer that may alias the level and the location, each store
 * made the compiler load their fields again behind it: the message cost
 * some 5 ns more per call (selfsend_pairs). Every field put together with
 * no branch, its place depending on every length, cost 10 ns more again.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_message_inline(struct hmb_go_level *lv, uint8_t *b,
										   int recv, uint64_t t, uint32_t seq,
										   uint64_t peer, uint32_t tag,
										   uint64_t bytes, uint32_t comm)
{
	uint64_t last = lv->time, d = t - last;
	int prefix = hmb_seq_needed(lv, d, seq);
	if (__builtin_expect(t >= last && (d | peer | tag | comm) < 0x80 && bytes < (1 << 28) && comm != 0 &&
				     (!prefix || (seq != 0 && seq < 32)),
			     1)) {
		lv->time = t;
		lv->next = seq + 1;
		uint64_t head = (uint64_t)(HMB_TOK_SEND_RANK_COMM + (recv ? 1 : 0)) | d << 8 | peer << 16 |
				(uint64_t)tag << 24;
		if (prefix) {
			head = head << 8 | hmb_seq_byte(seq);
		}
		int k;
		uint64_t tail = hmb_uv4_word(bytes, &k);
		tail |= (uint64_t)comm << (8 * k);
		__builtin_memcpy(b, &head, sizeof head);
		__builtin_memcpy(b + 4 + prefix, &tail, sizeof tail);
		return 4 + prefix + k + 1;
	}
	if (__builtin_expect(t < last || (d | peer | tag | comm) >= 0x4000 || comm == 0 ||
				     (prefix && (seq == 0 || seq >= 32)),
			     0)) {
		return hmb_put_message(lv, b, recv, t, seq, peer, tag, bytes, comm);
	}
	int n = hmb_head_move(lv, b, t, seq, prefix);
	b[n++] = (uint8_t)(HMB_TOK_SEND_RANK_COMM + (recv ? 1 : 0));
	n += hmb_put_uv2(b + n, d);
	n += hmb_put_uv2(b + n, peer);
	n += hmb_put_uv2(b + n, tag);
	while (bytes >= 0x80) {
		b[n++] = (uint8_t)(bytes | 0x80);
		bytes >>= 7;
	}
	b[n++] = (uint8_t)bytes;
	n += hmb_put_uv2(b + n, comm);
	return n;
}

/* hmb_direct_mpi_message writes a send or receive at the stamp of now: hmb_direct_message's last steps. */
HMB_NOINST __attribute__((always_inline)) static inline void hmb_direct_mpi_message(struct hmb_go_location *L, struct hmb_go_level *mlv,
						     struct hmb_go_commline *line, uint64_t now, int recv,
						     uint64_t peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	uint64_t tr;
	uint32_t seq = hmb_message_stamp(L, line, now, recv, bytes, &tr);
	mlv->pos += hmb_put_message_inline(mlv, (uint8_t *)mlv->bin.ptr + mlv->pos, recv, tr, seq, peer, tag, bytes, comm);
	mlv->n++;
	hmb_mark(mlv);
}

/*
 * hmb_direct_mpi_msg looks up what a message at depth d needs, the level
 * and the peer's line: 0 if the message class is closed there or either is
 * missing.
 */
HMB_NOINST static inline int hmb_direct_mpi_msg(struct hmb_go_location *L, int64_t d, uint64_t peer,
						struct hmb_go_level **mlv, struct hmb_go_commline **line)
{
	return !hmb_closed(L, d, HMB_CLASS_MESSAGE) &&
	       (*mlv = hmb_direct_mpi_level(&L->msg_levels, d, HMB_MAX_MESSAGE)) != NULL &&
	       (*line = hmb_comm_line(L, peer)) != NULL;
}

/*
 * hmb_put_leave_seq is hmb_put_leave for a leave that may need a SEQ
 * prefix, inline: the leave of an MPI call at the tick of its receive,
 * which comes first in that tick. Anything but a delta of 12 bits and a
 * one-byte prefix goes to hmb_put_leave_slow. The bytes are the same.
 */
HMB_NOINST static inline int hmb_put_leave_seq(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq)
{
	uint64_t d;
	int prefix = hmb_head_form(lv, t, seq, &d);
	if (__builtin_expect(prefix < 0 || d >= (1 << 12), 0)) {
		return hmb_put_leave_slow(lv, b, t, seq);
	}
	int n = hmb_head_move(lv, b, t, seq, prefix);
	if (d < 0x80) {
		b[n++] = (uint8_t)(HMB_TOK_PRED_LEAVE | d);
		return n;
	}
	b[n++] = (uint8_t)(HMB_TOK_PRED_LEAVE12 | (d >> 8));
	b[n++] = (uint8_t)d;
	return n;
}

/*
 * hmb_direct_enter_send records the enter of MPI region r and, if msg is
 * set, in the same tick and at the same depth, a send to world rank peer
 * on communicator comm.
 */
HMB_NOINST static inline int hmb_direct_enter_send(struct hmb_thread *th, uint32_t r, int msg, uint64_t peer,
						   uint32_t tag, uint64_t bytes, uint32_t comm)
{
	/* The clock first: its read (some 40 cycles) overlaps the checks. */
	uint64_t now = hmb_now(), tt, tr;
	struct hmb_go_location *L;
	struct hmb_go_prof *p;
	if (!hmb_direct_mpi_open(th, r, &L, &p)) {
		return HMB_DIRECT_APART;
	}
	int64_t d = L->depth + 1;
	struct hmb_go_level *lv, *mlv = NULL;
	struct hmb_go_commline *line = NULL;
	if (d >= L->stack.len || d >= L->plimit ||
	    (lv = hmb_direct_mpi_level(&L->par_levels, d, 2 * HMB_MAX_ENTER_LEAVE)) == NULL ||
	    (msg && !hmb_direct_mpi_msg(L, d, peer, &mlv, &line))) {
		return hmb_direct_end(th, HMB_DIRECT_APART);
	}
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	L->recorded++;
	struct hmb_go_frame *f = hmb_direct_push(L, p, d, r, HMB_CLASS_PARADIGM, tt, tr, seq);
	lv->pos += hmb_put_enter_mpi(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq, r);
	lv->n++;
	hmb_mark(lv);
	f->state = HMB_FRAME_WRITTEN;
	if (msg) {
		hmb_direct_mpi_message(L, mlv, line, now, 0, peer, tag, bytes, comm);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_direct_mpi_leave_level returns the enter/leave level for the leave
 * of MPI region r at depth d, whose frame is f, NULL where the leave must
 * go apart: hmb_direct_leave_on's checks, the enter/leave level's lookup
 * (measure's leaveTop looks it up first) included.
 */
HMB_NOINST static inline struct hmb_go_level *hmb_direct_mpi_leave_level(struct hmb_go_location *L,
									  struct hmb_go_frame *f, uint32_t r, int64_t d)
{
	if (d == 0 || f->region != r || f->counted || f->region == L->phase_region || f->state != HMB_FRAME_WRITTEN ||
	    f->cls != HMB_CLASS_PARADIGM || hmb_direct_mpi_level(&L->levels, d, 0) == NULL) {
		return NULL;
	}
	return hmb_direct_mpi_level(&L->par_levels, d, HMB_MAX_ENTER_LEAVE);
}

/*
 * hmb_direct_mpi_leave_at closes frame f at depth d at time (tt, tr) with
 * sequence seq: the profile's times, the caller's child time, events more
 * recorded (the leave and the records written before it), and the leave's
 * bytes in level lv.
 */
HMB_NOINST static inline void hmb_direct_mpi_leave_at(struct hmb_go_location *L, struct hmb_go_prof *p,
						      struct hmb_go_frame *f, struct hmb_go_level *lv, int64_t d,
						      uint64_t tt, uint64_t tr, uint32_t seq, uint64_t events)
{
	uint64_t dur = tt - f->start;
	if (--p->active == 0) {
		p->incl += dur; /* a paradigm's region is never throttled */
	}
	p->excl += dur - f->child;
	L->depth = d - 1;
	f[-1].child += dur;
	L->recorded += events;
	lv->pos += hmb_put_leave_seq(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq);
	lv->n++;
	hmb_mark(lv);
}

/*
 * hmb_direct_recv_leave records, if msg is set, a receive from world rank
 * peer on communicator comm and, in the same tick, the leave of MPI region
 * r, which must be the open one.
 */
HMB_NOINST static inline int hmb_direct_recv_leave(struct hmb_thread *th, uint32_t r, int msg, uint64_t peer,
						   uint32_t tag, uint64_t bytes, uint32_t comm)
{
	uint64_t now = hmb_now(), tt, tr;
	struct hmb_go_location *L;
	struct hmb_go_prof *p;
	if (!hmb_direct_mpi_open(th, r, &L, &p)) {
		return HMB_DIRECT_APART;
	}
	int64_t d = L->depth;
	struct hmb_go_frame *f = (struct hmb_go_frame *)L->stack.ptr + d;
	struct hmb_go_level *lv, *mlv = NULL;
	struct hmb_go_commline *line = NULL;
	if ((lv = hmb_direct_mpi_leave_level(L, f, r, d)) == NULL ||
	    (msg && !hmb_direct_mpi_msg(L, d, peer, &mlv, &line))) {
		return hmb_direct_end(th, HMB_DIRECT_APART);
	}
	if (msg) {
		hmb_direct_mpi_message(L, mlv, line, now, 1, peer, tag, bytes, comm);
	}
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	hmb_direct_mpi_leave_at(L, p, f, lv, d, tt, tr, seq, 1);
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_put_mpi_fields writes MPI record r after its prefix: its token, the
 * time delta d and its fields. It is the one definition of the records'
 * bytes, for hmb_put_mpi (direct.c) and hmb_put_req_inline: each passes
 * the LEB128 writers it needs, put_d for the delta and put for the other
 * fields, constants that inlining turns into direct code, so that the
 * two cannot write different bytes. coll 0 says r is no collective
 * request or completion (HMB_ENC_COLL_*), whose code is then left out.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_mpi_fields(uint8_t *b, uint64_t d,
									       const struct hmb_mpi *r,
									       int (*put_d)(uint8_t *, uint64_t),
									       int (*put)(uint8_t *, uint64_t), int coll)
{
	/*
	 * Branches, not a switch: GCC made a switch over these kinds a jump
	 * table, which cost hmb_put_req_inline's non-blocking call some 12
	 * instructions more.
	 */
	int n = 0;
	if (r->kind == HMB_ENC_ISEND || r->kind == HMB_ENC_IRECV) {
		b[n++] = r->kind == HMB_ENC_IRECV ? HMB_TOK_IRECV_RANK : HMB_TOK_ISEND_RANK;
		n += put_d(b + n, d);
		n += put(b + n, r->peer);
		n += put(b + n, r->tag);
		n += put(b + n, r->bytes);
		n += put(b + n, r->comm);
		return n + put(b + n, r->request);
	}
	if (coll && r->kind == HMB_ENC_COLL_COMPLETE) {
		b[n++] = HMB_TOK_COLL_COMPLETE;
		n += put_d(b + n, d);
		n += put(b + n, r->region);
		n += put(b + n, r->root + 1 > 0 ? (uint64_t)(r->root + 1) : 0);
		n += put(b + n, r->bytes);
		n += put(b + n, r->received);
		n += put(b + n, r->comm);
		return n + put(b + n, r->request);
	}
	/* The records that name their request alone: the last is HMB_ENC_COLL_REQUEST, hmb_direct_mpi's other kind. */
	uint8_t tok = HMB_TOK_REQUEST_CANCELLED;
	if (r->kind == HMB_ENC_ISEND_COMPLETE) {
		tok = HMB_TOK_ISEND_COMPLETE;
	} else if (r->kind == HMB_ENC_IRECV_REQUEST) {
		tok = HMB_TOK_IRECV_REQUEST;
	} else if (coll && r->kind != HMB_ENC_REQUEST_CANCELLED) {
		tok = HMB_TOK_COLL_REQUEST;
	}
	b[n++] = tok;
	n += put_d(b + n, d);
	return n + put(b + n, r->request);
}

/* hmb_put_req_slow is hmb_put_mpi for request record q: hmb_put_req_inline's rare path. */
HMB_NOINST __attribute__((noinline, cold)) static int hmb_put_req_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t,
								       uint32_t seq, const struct hmb_mpi_req *q)
{
	struct hmb_mpi r = {.kind = q->kind, .peer = (uint64_t)(int64_t)q->peer, .tag = q->tag,
			    .comm = q->comm, .bytes = q->bytes, .request = q->request};
	return hmb_put_mpi(lv, b, t, seq, &r);
}

/*
 * hmb_put_req_inline is hmb_put_mpi (direct.c) for a point-to-point
 * request's record, inline: an Isend or Irecv (a world rank peer), or a
 * record that names its request alone (IsendComplete, IrecvRequest,
 * RequestCancelled), with a time delta of at most two bytes and no SEQ
 * prefix or a one-byte one, its usual form. Anything else goes to
 * hmb_put_mpi. The bytes are hmb_put_mpi_fields', as hmb_put_mpi's are.
 * Without the call, its prefix's own call and the switch over every kind,
 * a non-blocking call or completion to self runs 18 instructions fewer
 * (729 against 747).
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_put_req_inline(struct hmb_go_level *lv, uint8_t *b,
									       uint64_t t, uint32_t seq,
									       const struct hmb_mpi_req *q)
{
	/*
	 * r's address goes only to the inlined hmb_put_mpi_fields, so that it
	 * is no copy in memory but q's fields read in place (some 10
	 * instructions a record); the rare path makes its own.
	 */
	const struct hmb_mpi r = {.kind = q->kind, .peer = (uint64_t)(int64_t)q->peer, .tag = q->tag,
				  .comm = q->comm, .bytes = q->bytes, .request = q->request};
	uint64_t d;
	int prefix = hmb_head_form(lv, t, seq, &d);
	if (__builtin_expect(prefix < 0 || d >= 0x4000 ||
				     (r.kind != HMB_ENC_ISEND && r.kind != HMB_ENC_IRECV &&
				      r.kind != HMB_ENC_ISEND_COMPLETE && r.kind != HMB_ENC_IRECV_REQUEST &&
				      r.kind != HMB_ENC_REQUEST_CANCELLED),
			     0)) {
		return hmb_put_req_slow(lv, b, t, seq, q);
	}
	int n = hmb_head_move(lv, b, t, seq, prefix);
	return n + hmb_put_mpi_fields(b + n, d, &r, hmb_put_uv2, hmb_put_uv_inline, 0);
}

/* hmb_req_counted says whether request record q is a message, counted in the matrix. */
HMB_NOINST static inline int hmb_req_counted(const struct hmb_mpi_req *q)
{
	return q->kind == HMB_ENC_ISEND || q->kind == HMB_ENC_IRECV;
}

/*
 * hmb_direct_req_leave records request records q[0..n) (kind 0: none)
 * and, in the same tick, the leave of MPI region r, which must be the open
 * one: hmb_direct_mpi's records at the region's depth, then
 * hmb_direct_recv_leave's leave, with one clock read and one begin and end.
 * It goes apart (nothing written) where the records' class is closed or
 * their level has no room for them all.
 */
HMB_NOINST static inline int hmb_direct_req_leave(struct hmb_thread *th, uint32_t r, const struct hmb_mpi_req *q,
						  int n)
{
	/* The clock first: its read overlaps the checks. */
	uint64_t now = hmb_now(), tt, tr;
	struct hmb_go_location *L;
	struct hmb_go_prof *p;
	if (!hmb_direct_mpi_open(th, r, &L, &p)) {
		return HMB_DIRECT_APART;
	}
	int64_t d = L->depth;
	struct hmb_go_frame *f = (struct hmb_go_frame *)L->stack.ptr + d;
	struct hmb_go_level *lv, *mlv = NULL;
	int64_t recs = 0;
	for (int i = 0; i < n; i++) {
		if (q[i].kind == 0) {
			continue;
		}
		recs++;
		/* A message's peer must have its matrix line: Go adds a new one. */
		if (hmb_req_counted(&q[i]) && (q[i].peer < 0 || hmb_comm_line(L, (uint64_t)q[i].peer) == NULL)) {
			return hmb_direct_end(th, HMB_DIRECT_APART);
		}
	}
	if ((lv = hmb_direct_mpi_leave_level(L, f, r, d)) == NULL ||
	    (recs > 0 && (hmb_closed(L, d, HMB_CLASS_MESSAGE) ||
			  (mlv = hmb_direct_mpi_level(&L->msg_levels, d, recs * HMB_MAX_COLLECTIVE)) == NULL))) {
		return hmb_direct_end(th, HMB_DIRECT_APART);
	}
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	for (int i = 0; i < n; i++) {
		if (q[i].kind == 0) {
			continue;
		}
		if (hmb_req_counted(&q[i])) {
			struct hmb_go_commline *line = hmb_comm_line(L, (uint64_t)q[i].peer);
			if (q[i].kind == HMB_ENC_IRECV) {
				line->recv++;
				line->recv_b += q[i].bytes;
			} else {
				line->sent++;
				line->sent_b += q[i].bytes;
			}
		}
		mlv->pos += hmb_put_req_inline(mlv, (uint8_t *)mlv->bin.ptr + mlv->pos, tr, seq, &q[i]);
		mlv->n++;
		seq = ++L->run;
	}
	if (recs > 0) {
		hmb_mark(mlv);
	}
	hmb_direct_mpi_leave_at(L, p, f, lv, d, tt, tr, seq, 1 + (uint64_t)recs);
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_cur_swap sets the thread's staging end th->cur to to if it is from,
 * and says whether it did: on x86-64 in one instruction (cmpxchg, no lock:
 * only the owner and its signal handlers write cur), which a signal
 * handler of the thread cannot split, so that records a handler's probe
 * staged in between are neither lost nor overwritten.
 */
HMB_NOINST static inline int hmb_cur_swap(struct hmb_thread *th, hmb_record *from, hmb_record *to)
{
#if defined(__x86_64__)
	hmb_record *prev = from;
	__asm__ __volatile__("cmpxchgq %2, %1" : "+a"(prev), "+m"(*(hmb_record **)&th->cur) : "r"(to) : "memory", "cc");
	return prev == from;
#else
	return atomic_compare_exchange_strong(&th->cur, &from, to);
#endif
}

/* Where a blocking call's fused probe writes: what its checks found. */
struct hmb_mpi_place {
	struct hmb_go_location *L;
	struct hmb_go_prof *p; /* the call's region's entry */
	struct hmb_go_level *lv, *mlv;
	struct hmb_go_commline *sline, *rline;
	struct hmb_go_commline *qline; /* a request record's peer, if a message (hmb_req_counted) */
	int64_t d;                     /* the call's depth */
};

/*
 * hmb_direct_mpi_call_check makes the checks of hmb_direct_mpi_call_as
 * for calls blocking calls like c at the same depth, one after the other
 * (their levels' room is checked for all of them), and fills *w. It
 * returns 0 if the fused path cannot take c (nothing written). send and
 * recv say whether c has a send and a receive.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_mpi_call_check(struct hmb_thread *th,
										      const struct hmb_mpi_call *c,
										      int send, int recv, int calls,
										      struct hmb_mpi_place *w)
{
	uint32_t r = c->region;
	if (!hmb_direct_mpi_entry(th, r, &w->L, &w->p)) {
		return 0;
	}
	struct hmb_go_location *L = w->L;
	int64_t d = w->d = L->depth + 1;
	w->mlv = NULL;
	w->sline = w->rline = NULL;
	return !(d >= L->stack.len || d >= L->plimit || r == L->phase_region ||
		 hmb_direct_mpi_level(&L->levels, d, 0) == NULL ||
		 (w->lv = hmb_direct_mpi_level(&L->par_levels, d, calls * 2 * HMB_MAX_ENTER_LEAVE)) == NULL ||
		 ((send | recv) &&
		  (hmb_closed(L, d, HMB_CLASS_MESSAGE) ||
		   (w->mlv = hmb_direct_mpi_level(&L->msg_levels, d, calls * (send + recv) * HMB_MAX_MESSAGE)) == NULL ||
		   (send && (w->sline = hmb_comm_line(L, (uint64_t)c->send.peer)) == NULL) ||
		   (recv && (w->rline = hmb_comm_line(L, (uint64_t)c->recv.peer)) == NULL))));
}

/*
 * hmb_direct_mpi_call_write_req is hmb_direct_mpi_call_write with, if q is
 * not NULL, request record q (of a kind other than 0) written as a
 * receive is, at t1 before the leave, in the message level, its message
 * (hmb_req_counted) counted in line w->qline: a non-blocking call recorded
 * whole (hmb_mpi_req_call). hmb_direct_mpi_call_check checked room for a
 * message, which an MPI record fits as well (HMB_MAX_COLLECTIVE, checked by
 * hmb_direct_mpi_req_check). With mark 0 it leaves the levels' fill marks
 * (hmb_mark) to a write that follows in the same probe.
 */
HMB_NOINST __attribute__((always_inline)) static inline void
hmb_direct_mpi_call_write_req(const struct hmb_mpi_place *w, const struct hmb_mpi_call *c, uint64_t t1, int send,
			      int recv, const struct hmb_mpi_req *q, int mark)
{
	uint64_t tt, tr;
	struct hmb_go_location *L = w->L;
	struct hmb_go_prof *p = w->p;
	struct hmb_go_level *lv = w->lv, *mlv = w->mlv;
	int64_t d = w->d;
	uint32_t r = c->region;
	/* hmb_stamp for each event's first in its tick; the next one's is the run's next number. */
	uint32_t eseq = hmb_stamp(L, c->t0, &tt, &tr), sseq = 0;
	uint64_t t0 = tt, etr = tr;
	/*
	 * The call's frame at depth d would be pushed and popped here, with
	 * nothing between: it is not written (every push writes a frame
	 * whole, and nothing reads one above the depth), only what its pop
	 * leaves behind, the visit, the profile's times and the caller's
	 * child time.
	 */
	p->visits++;
	if (send) {
		sseq = ++L->run;
		w->sline->sent++;
		w->sline->sent_b += c->send.bytes;
	}
	uint32_t seq = hmb_stamp(L, t1, &tt, &tr), rseq = seq;
	if (recv) {
		w->rline->recv++;
		w->rline->recv_b += c->recv.bytes;
		seq = ++L->run;
	}
	if (q != NULL) {
		if (w->qline != NULL) {
			if (q->kind == HMB_ENC_IRECV) {
				w->qline->recv++;
				w->qline->recv_b += q->bytes;
			} else {
				w->qline->sent++;
				w->qline->sent_b += q->bytes;
			}
		}
		seq = ++L->run;
	}
	uint64_t dur = tt - t0;
	if (p->active == 0) {
		p->incl += dur; /* a paradigm's region is never throttled */
	}
	p->excl += dur;
	((struct hmb_go_frame *)L->stack.ptr)[d - 1].child += dur;
	L->recorded += 2 + send + recv + (q != NULL);
	/*
	 * The bytes last: a store through a uint8_t pointer may alias every
	 * field above, which the compiler would load again behind it.
	 */
	uint8_t *b = (uint8_t *)lv->bin.ptr + lv->pos;
	/*
	 * A blocking call's region is mostly in slot 0 or 1 of the prediction
	 * (sends and receives in turn): hmb_put_enter, whose other slots go to
	 * hmb_put_enter_slow. With hmb_put_enter_pred inlined behind its two
	 * checks instead (hmb_put_enter_mpi), a send and receive to self ran 5
	 * instructions and some 6 ns a call more (selfsend_pairs, alternated).
	 * A round of non-blocking calls and completions cycles through three
	 * or four regions: their slot found at once (hmb_put_enter_pred), which
	 * saves the two checks that fail, 14 instructions a call.
	 */
	int n = q == NULL ? hmb_put_enter(lv, b, etr, eseq, r) : hmb_put_enter_pred(lv, b, etr, eseq, r);
	n += hmb_put_leave_seq(lv, b + n, tr, seq);
	lv->pos += n;
	lv->n += 2;
	if (send | recv) {
		uint8_t *m = (uint8_t *)mlv->bin.ptr + mlv->pos;
		int k = 0;
		if (send) {
			k = hmb_put_message_inline(mlv, m, 0, etr, sseq, (uint64_t)c->send.peer, c->send.tag,
						   c->send.bytes, c->send.comm);
		}
		if (recv) {
			k += hmb_put_message_inline(mlv, m + k, 1, tr, rseq, (uint64_t)c->recv.peer, c->recv.tag,
						    c->recv.bytes, c->recv.comm);
		}
		mlv->pos += k;
		mlv->n += send + recv;
	}
	if (q != NULL) {
		mlv->pos += hmb_put_req_inline(mlv, (uint8_t *)mlv->bin.ptr + mlv->pos, tr, rseq, q);
		mlv->n++;
	}
	if (mark) {
		if (send | recv | (q != NULL)) {
			hmb_mark(mlv);
		}
		hmb_mark(lv);
	}
}

/*
 * hmb_direct_mpi_req_check makes the checks of hmb_direct_mpi_call_check
 * for non-blocking call c (no message of its own) and its request record
 * q (kind 0: none), and fills *w: the record's level with room for an MPI
 * record, and its peer's matrix line if it is a message. It returns 0 if
 * the fused path cannot take them.
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_mpi_req_check(struct hmb_thread *th,
										     const struct hmb_mpi_call *c,
										     const struct hmb_mpi_req *q,
										     struct hmb_mpi_place *w)
{
	if (!hmb_direct_mpi_call_check(th, c, 0, 0, 1, w)) {
		return 0;
	}
	w->qline = NULL;
	if (q->kind == 0) {
		return 1;
	}
	struct hmb_go_location *L = w->L;
	return !(hmb_closed(L, w->d, HMB_CLASS_MESSAGE) ||
		 (w->mlv = hmb_direct_mpi_level(&L->msg_levels, w->d, HMB_MAX_COLLECTIVE)) == NULL ||
		 /* A message's peer must have its matrix line: Go adds a new one. */
		 (hmb_req_counted(q) &&
		  (q->peer < 0 || (w->qline = hmb_comm_line(L, (uint64_t)q->peer)) == NULL)));
}

/*
 * hmb_direct_mpi_call_write writes blocking call c, which returned at t1,
 * where hmb_direct_mpi_call_check found room for it (*w): the enter of its
 * region at c->t0, its send at the same time, next in the tick, its
 * receive at t1 and the leave at the same time, next in the tick.
 */
HMB_NOINST __attribute__((always_inline)) static inline void hmb_direct_mpi_call_write(const struct hmb_mpi_place *w,
										       const struct hmb_mpi_call *c,
										       uint64_t t1, int send, int recv)
{
	hmb_direct_mpi_call_write_req(w, c, t1, send, recv, NULL, 1);
}

/*
 * hmb_direct_mpi_call_as records blocking MPI call c (mpicall.h), which
 * returned at t1, all of it or nothing, on the direct path that
 * hmb_direct_begin opened: the enter of its region at c->t0, its send at
 * the same time, next in the tick, its receive at t1 and the leave at the
 * same time, next in the tick. Sharing the ticks saves two of four clock
 * reads (some 12 ns each here) for a SEQ byte on the send and on the
 * leave. The steps and checks are hmb_direct_enter_send's and
 * hmb_direct_recv_leave's, once for the four events; the leave's frame is
 * the one the enter pushes, so it needs none of the leave's frame checks.
 * With empty set, the thread's staging array, which holds the staged form
 * of c (a deferred receive, mpicall.c), is emptied once every check
 * passed, before the first write, unless a signal handler staged more. It
 * returns HMB_DIRECT_DONE or HMB_DIRECT_APART (nothing written) and leaves
 * the probe open. send and recv say whether c has a send and a receive:
 * constants where it is inlined, so that each copy holds only its call's
 * checks and writes (a copy for both cost a send alone some 50
 * instructions more, in branches and spills).
 */
HMB_NOINST __attribute__((always_inline)) static inline int hmb_direct_mpi_call_as(struct hmb_thread *th,
										   const struct hmb_mpi_call *c,
										   uint64_t t1, int empty, int send,
										   int recv)
{
	struct hmb_mpi_place w;
	if (!hmb_direct_mpi_call_check(th, c, send, recv, 1, &w)) {
		return HMB_DIRECT_APART;
	}
	/*
	 * Before the writes, and only if the array still holds c alone: a
	 * signal handler's probe staged behind it keeps the array for Go.
	 */
	if (empty && !hmb_cur_swap(th, th->buf + HMB_MPI_DEFERRED, th->buf)) {
		return HMB_DIRECT_APART;
	}
	hmb_direct_mpi_call_write(&w, c, t1, send, recv);
	return HMB_DIRECT_DONE;
}

/*
 * An RMA record for the direct path: what hmb_put_rma encodes, the RMA
 * fields of encode.Record (kind is one of HMB_RMA_*, encode's KindRma*).
 */
struct hmb_rma {
	unsigned kind;
	uint32_t win, aux, level, group;
	int64_t remote;
	uint64_t bytes, received, request;
};

int hmb_put_rma(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, const struct hmb_rma *r) HMB_NOINST
	HMB_HIDDEN;

/*
 * hmb_direct_rma records RMA record r at the current depth: measure's
 * rmaRecord, in the collective class for window creation and destruction,
 * collective RMA operations and group synchronisations, else in the
 * message class, as hmb_direct_mpi does for requests.
 */
HMB_NOINST static inline int hmb_direct_rma(struct hmb_thread *th, const struct hmb_rma *r, uint64_t *t)
{
	struct hmb_go_location *L;
	int go = hmb_direct_record(th, &L, t);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	uint64_t now = *t;
	int64_t d = L->depth;
	int coll = r->kind == HMB_RMA_WIN_CREATE || r->kind == HMB_RMA_WIN_DESTROY ||
		   r->kind == HMB_RMA_COLLECTIVE_BEGIN || r->kind == HMB_RMA_COLLECTIVE_END ||
		   r->kind == HMB_RMA_GROUP_SYNC;
	unsigned cls = coll ? HMB_CLASS_COLLECTIVE : HMB_CLASS_MESSAGE;
	struct hmb_go_level *lv = NULL;
	int closed = hmb_closed(L, d, cls);
	if (!closed) {
		/* buffer.Level.Put's room, which an RMA record fits (encode.MaxRmaSize). */
		if ((lv = hmb_direct_mpi_level(coll ? &L->coll_levels : &L->msg_levels, d, HMB_MAX_COLLECTIVE)) == NULL) {
			return hmb_direct_end(th, HMB_DIRECT_FLUSH);
		}
	} else if (d >= HMB_DIRECT_DEPTHS) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint64_t tt, tr;
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	L->recorded++;
	if (lv != NULL) {
		lv->pos += hmb_put_rma(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq, r);
		lv->n++;
		hmb_mark(lv);
	} else {
		hmb_direct_drop(th, coll ? th->cdrops : th->mdrops, d);
	}
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

#endif /* HMBTRACE_DIRECT_MPI_H */
