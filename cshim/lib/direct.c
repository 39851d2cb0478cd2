/*
 * direct.c - the direct path's rarer parts: the layout check, the
 * encoder's general cases (encode.Encoder's enterSlow and leaveSlow with
 * every technique on) and its messages.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "direct.h"

int hmb_direct_on;

/*
 * hmb_direct_layout_ok compares the mirror of direct.h with the Go layout,
 * in the order of measure.CProbeLayout and buffer.LevelLayout.
 */
int hmb_direct_layout_ok(const uintptr_t *go, size_t n)
{
	const uintptr_t want[] = {
		sizeof(struct hmb_go_frame),
		offsetof(struct hmb_go_frame, start),
		offsetof(struct hmb_go_frame, child),
		offsetof(struct hmb_go_frame, tr),
		offsetof(struct hmb_go_frame, seq),
		offsetof(struct hmb_go_frame, region),
		offsetof(struct hmb_go_frame, state),
		offsetof(struct hmb_go_frame, counted),
		offsetof(struct hmb_go_frame, cls),
		sizeof(struct hmb_go_prof),
		offsetof(struct hmb_go_prof, visits),
		offsetof(struct hmb_go_prof, incl),
		offsetof(struct hmb_go_prof, excl),
		offsetof(struct hmb_go_prof, after),
		offsetof(struct hmb_go_prof, throttled_at),
		offsetof(struct hmb_go_prof, active),
		offsetof(struct hmb_go_prof, off),
		offsetof(struct hmb_go_prof, cls),
		HMB_PROF_PAGE * sizeof(struct hmb_go_prof),
		HMB_PROF_PAGE_BITS,
		HMB_OFF_NONE,
		HMB_OFF_FILTERED,
		HMB_OFF_THROTTLED,
		HMB_OFF_UNDEFINED,
		offsetof(struct hmb_go_location, epoch),
		offsetof(struct hmb_go_location, limit),
		offsetof(struct hmb_go_location, lost_at),
		offsetof(struct hmb_go_location, min_dur),
		offsetof(struct hmb_go_location, last),
		offsetof(struct hmb_go_location, last_tr),
		offsetof(struct hmb_go_location, run),
		offsetof(struct hmb_go_location, shift),
		offsetof(struct hmb_go_location, depth),
		offsetof(struct hmb_go_location, stack),
		offsetof(struct hmb_go_location, prof),
		offsetof(struct hmb_go_location, levels),
		offsetof(struct hmb_go_location, recorded),
		offsetof(struct hmb_go_location, filtered_name),
		offsetof(struct hmb_go_location, cpt),
		offsetof(struct hmb_go_location, phase_region),
		offsetof(struct hmb_go_location, msg_levels),
		offsetof(struct hmb_go_location, coll_levels),
		offsetof(struct hmb_go_location, pending_from),
		offsetof(struct hmb_go_location, par_levels),
		offsetof(struct hmb_go_location, plimit),
		offsetof(struct hmb_go_location, thr_calls),
		offsetof(struct hmb_go_location, thr_ticks),
		HMB_FRAME_DROPPED,
		HMB_FRAME_PENDING,
		HMB_FRAME_WRITTEN,
		HMB_CLASS_REGION,
		HMB_CLASS_MESSAGE,
		HMB_CLASS_COLLECTIVE,
		HMB_CLASS_PARADIGM,
		offsetof(struct hmb_go_location, comm_lines),
		offsetof(struct hmb_go_location, comm_shift),
		sizeof(struct hmb_go_commline),
		offsetof(struct hmb_go_commline, peer),
		offsetof(struct hmb_go_commline, rank),
		offsetof(struct hmb_go_commline, used),
		offsetof(struct hmb_go_commline, sent),
		offsetof(struct hmb_go_commline, sent_bytes),
		offsetof(struct hmb_go_commline, recv),
		offsetof(struct hmb_go_commline, recv_bytes),
		HMB_TOK_SEND_RANK_COMM,
		HMB_TOK_COLL_COMM,
		HMB_TOK_ISEND_RANK,
		HMB_TOK_IRECV_RANK,
		HMB_TOK_ISEND_COMPLETE,
		HMB_TOK_IRECV_REQUEST,
		HMB_TOK_REQUEST_CANCELLED,
		HMB_TOK_COLL_REQUEST,
		HMB_TOK_COLL_COMPLETE,
		offsetof(struct hmb_go_level, bin),
		offsetof(struct hmb_go_level, pos),
		offsetof(struct hmb_go_level, tech),
		offsetof(struct hmb_go_level, time),
		offsetof(struct hmb_go_level, next),
		offsetof(struct hmb_go_level, n),
		offsetof(struct hmb_go_hierarchy, class_closed),
		HMB_TECH_ALL,
		HMB_MAX_ENTER_LEAVE,
		HMB_MAX_MESSAGE,
		HMB_TOK_SEND,
		HMB_TOK_RECV,
		HMB_TOK_SEND_RANK,
		HMB_MAX_COLLECTIVE,
		HMB_TOK_COLL,
		offsetof(struct hmb_go_level, mark),
	};
	if (n != sizeof want / sizeof want[0]) {
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (want[i] != go[i]) {
			return 0;
		}
	}
	return 1;
}

/* hmb_put_uvarint is encode's putUvarint: LEB128. */
static int hmb_put_uvarint(uint8_t *b, uint64_t v)
{
	int i = 0;
	while (v >= 0x80) {
		b[i++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[i] = (uint8_t)v;
	return i + 1;
}

/* hmb_put_uv is hmb_put_uvarint with the one-byte case, most message fields, inline. */
static inline int hmb_put_uv(uint8_t *b, uint64_t v)
{
	if (__builtin_expect(v < 0x80, 1)) {
		b[0] = (uint8_t)v;
		return 1;
	}
	return hmb_put_uvarint(b, v);
}

/* hmb_put_seq is encode's putSeq with tokens and LEB128. */
static int hmb_put_seq(uint8_t *b, uint32_t seq)
{
	if (seq != 0 && seq < 32) {
		b[0] = (uint8_t)(HMB_TOK_SEQ_INLINE | seq);
		return 1;
	}
	b[0] = HMB_TOK_SEQ_INLINE;
	return 1 + hmb_put_uvarint(b + 1, seq);
}

/*
 * hmb_put_prefix begins a record at time *t with sequence number seq, as
 * every encoder path does: a time before the stream's is taken as it, a SEQ
 * prefix goes first where the decoder would infer another number, and the
 * stream moves on. It returns the bytes written and the time's delta.
 */
static int hmb_put_prefix(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint64_t *delta)
{
	if (t < lv->time) {
		t = lv->time;
	}
	uint64_t d = t - lv->time;
	int n = seq != (d == 0 ? lv->next : 0) ? hmb_put_seq(b, seq) : 0;
	lv->time = t;
	lv->next = seq + 1;
	*delta = d;
	return n;
}

int hmb_put_enter_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint32_t region)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d);
	if (region < 64 && region != 0) {
		if (d == 0) {
			b[n] = (uint8_t)(HMB_TOK_ENTER_NOW_INLINE | region);
			return n + 1;
		}
		b[n] = (uint8_t)(HMB_TOK_ENTER_INLINE | region);
		return n + 1 + hmb_put_uvarint(b + n + 1, d);
	}
	if (d == 0) {
		b[n] = HMB_TOK_ENTER_NOW_INLINE;
		return n + 1 + hmb_put_uvarint(b + n + 1, region);
	}
	b[n++] = HMB_TOK_ENTER_INLINE;
	n += hmb_put_uvarint(b + n, region);
	return n + hmb_put_uvarint(b + n, d);
}

int hmb_put_leave_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d);
	if (d < 32) {
		b[n] = (uint8_t)(HMB_TOK_LEAVE_INLINE | d);
		return n + 1;
	}
	b[n] = (uint8_t)(HMB_TOK_LEAVE_INLINE | 0x20 | (d & 0x1F));
	return n + 1 + hmb_put_uvarint(b + n + 1, d >> 5);
}

/*
 * hmb_put_message is encode.Encoder.MessageComm with every technique on,
 * for a peer that is a world rank: comm 0 writes Message's record.
 */
int hmb_put_message(struct hmb_go_level *lv, uint8_t *b, int recv, uint64_t t, uint32_t seq, uint64_t peer, uint32_t tag,
		    uint64_t bytes, uint32_t comm)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d); /* putHead */
	if (comm == 0) {
		b[n++] = (uint8_t)((recv ? HMB_TOK_RECV : HMB_TOK_SEND) + (HMB_TOK_SEND_RANK - HMB_TOK_SEND));
	} else {
		b[n++] = (uint8_t)(HMB_TOK_SEND_RANK_COMM + (recv ? 1 : 0));
	}
	n += hmb_put_uv(b + n, d);
	n += hmb_put_uv(b + n, peer);
	n += hmb_put_uv(b + n, tag);
	n += hmb_put_uv(b + n, bytes);
	if (comm != 0) {
		n += hmb_put_uv(b + n, comm);
	}
	return n;
}

/*
 * hmb_put_collective is encode.Encoder.CollectiveComm with every technique
 * on: with neither received bytes nor a communicator, Collective's record.
 */
int hmb_put_collective(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, int64_t root, uint64_t bytes,
		       uint64_t received, uint32_t comm)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d); /* putHead */
	int ext = received != 0 || comm != 0;
	b[n++] = ext ? HMB_TOK_COLL_COMM : HMB_TOK_COLL;
	n += hmb_put_uvarint(b + n, d);
	n += hmb_put_uvarint(b + n, root + 1 > 0 ? (uint64_t)(root + 1) : 0);
	n += hmb_put_uvarint(b + n, bytes);
	if (ext) {
		n += hmb_put_uvarint(b + n, received);
		n += hmb_put_uvarint(b + n, comm);
	}
	return n;
}

/*
 * hmb_put_mpi is encode.Encoder.Put with every technique on for the
 * records of hmb_direct_mpi: RequestMessage for a rank peer, Request, and
 * CollectiveComplete.
 */
int hmb_put_mpi(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, const struct hmb_mpi *r)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d); /* putHead */
	switch (r->kind) {
	case HMB_ENC_ISEND:
	case HMB_ENC_IRECV:
		b[n++] = r->kind == HMB_ENC_IRECV ? HMB_TOK_IRECV_RANK : HMB_TOK_ISEND_RANK;
		n += hmb_put_uv(b + n, d);
		n += hmb_put_uv(b + n, r->peer);
		n += hmb_put_uv(b + n, r->tag);
		n += hmb_put_uv(b + n, r->bytes);
		n += hmb_put_uv(b + n, r->comm);
		return n + hmb_put_uv(b + n, r->request);
	case HMB_ENC_COLL_COMPLETE:
		b[n++] = HMB_TOK_COLL_COMPLETE;
		n += hmb_put_uv(b + n, d);
		n += hmb_put_uv(b + n, r->region);
		n += hmb_put_uv(b + n, r->root + 1 > 0 ? (uint64_t)(r->root + 1) : 0);
		n += hmb_put_uv(b + n, r->bytes);
		n += hmb_put_uv(b + n, r->received);
		n += hmb_put_uv(b + n, r->comm);
		return n + hmb_put_uv(b + n, r->request);
	case HMB_ENC_ISEND_COMPLETE:
		b[n++] = HMB_TOK_ISEND_COMPLETE;
		break;
	case HMB_ENC_IRECV_REQUEST:
		b[n++] = HMB_TOK_IRECV_REQUEST;
		break;
	case HMB_ENC_REQUEST_CANCELLED:
		b[n++] = HMB_TOK_REQUEST_CANCELLED;
		break;
	default: /* HMB_ENC_COLL_REQUEST: hmb_direct_mpi takes no other kind */
		b[n++] = HMB_TOK_COLL_REQUEST;
	}
	n += hmb_put_uv(b + n, d);
	return n + hmb_put_uv(b + n, r->request);
}
