/*
 * direct.c - the direct path's rarer parts: the
 * encoder's general cases (encode.Encoder's enterSlow and leaveSlow with
 * every technique on) and its messages.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "direct.h"
#include "direct_mpi.h"
#include "hmbtrace.h"

int hmb_direct_on;

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
		b[0] = hmb_seq_byte(seq);
		return 1;
	}
	b[0] = HMB_TOK_SEQ_INLINE;
	return 1 + hmb_put_uvarint(b + 1, seq);
}

/*
 * hmb_put_prefix begins a record at time *t with sequence number seq, as
 * every encoder path does: a time before the stream's is taken as it, a SEQ
 * prefix goes first where the decoder would infer another number
 * (hmb_seq_needed, direct_mpi.h), and the stream moves on. It returns the
 * bytes written and the time's delta.
 */
static int hmb_put_prefix(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint64_t *delta)
{
	if (t < lv->time) {
		t = lv->time;
	}
	uint64_t d = t - lv->time;
	int n = hmb_seq_needed(lv, d, seq) ? hmb_put_seq(b, seq) : 0;
	lv->time = t;
	lv->next = seq + 1;
	*delta = d;
	return n;
}

/*
 * hmb_predict is encode's predict: the slot of region in the stream's
 * prediction, or -1, after which region is moved (or put) in slot 0.
 */
static int hmb_predict(struct hmb_go_level *lv, uint32_t region)
{
	enum { slots = sizeof lv->pred / sizeof lv->pred[0] };
	if (region == 0) {
		return -1;
	}
	int i = 0;
	while (i < slots - 1 && lv->pred[i] != region) {
		i++;
	}
	int slot = lv->pred[i] == region ? i : -1;
	for (; i > 0; i--) {
		lv->pred[i] = lv->pred[i - 1];
	}
	lv->pred[0] = region;
	return slot;
}

int hmb_put_enter_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, uint32_t region)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d);
	int slot = hmb_predict(lv, region);
	if (slot == 0 && d < 16) {
		b[n] = (uint8_t)(HMB_TOK_PRED_ENTER | d);
		return n + 1;
	}
	if (slot > 0 && d == 0) {
		b[n] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT_NOW | slot);
		return n + 1;
	}
	if (slot >= 0 && d < (1 << 9)) {
		b[n] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT | slot << 1 | (d >> 8));
		b[n + 1] = (uint8_t)d;
		return n + 2;
	}
	if (slot >= 0 && slot < 4) {
		b[n] = (uint8_t)(HMB_TOK_PRED_ENTER_SLOT_LONG | slot);
		return n + 1 + hmb_put_uvarint(b + n + 1, d);
	}
	if (d == 0) {
		b[n] = HMB_TOK_PRED_ENTER_NOW;
		return n + 1 + hmb_put_uvarint(b + n + 1, region);
	}
	b[n++] = HMB_TOK_PRED_ENTER_REGION;
	n += hmb_put_uvarint(b + n, region);
	return n + hmb_put_uvarint(b + n, d);
}

int hmb_put_leave_slow(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d);
	if (d < 0x80) {
		b[n] = (uint8_t)(HMB_TOK_PRED_LEAVE | d);
		return n + 1;
	}
	if (d < (1 << 12)) {
		b[n] = (uint8_t)(HMB_TOK_PRED_LEAVE12 | (d >> 8));
		b[n + 1] = (uint8_t)d;
		return n + 2;
	}
	b[n] = HMB_TOK_PRED_LEAVE_LONG;
	return n + 1 + hmb_put_uvarint(b + n + 1, d);
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
	return n + hmb_put_mpi_fields(b + n, d, r, hmb_put_uv, hmb_put_uv, 1);
}

/* The fields each RMA kind stores, in order (encode.RmaFields, through golayout.h). */
static const uint8_t hmb_rma_fields[] = HMB_RMA_FIELDS_INIT;
_Static_assert(HMB_RMA_FIELDS_FIRST == HMB_RMA_WIN_CREATE, "RMA kinds of hmbtrace.h and encode");
_Static_assert(sizeof hmb_rma_fields == HMB_RMA_OP_COMPLETE_REMOTE - HMB_RMA_WIN_CREATE + 1, "RMA kinds of hmbtrace.h and encode");

/*
 * hmb_put_rma is encode.Encoder.Rma with every technique on: the record's
 * head with the kind between the token and the time, then the kind's
 * fields. r->kind is one of HMB_RMA_* (hmb_rma checks it).
 */
int hmb_put_rma(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, const struct hmb_rma *r)
{
	uint64_t d;
	int n = hmb_put_prefix(lv, b, t, seq, &d);
	b[n++] = HMB_TOK_RMA;
	b[n++] = (uint8_t)r->kind;
	n += hmb_put_uv(b + n, d);
	unsigned m = hmb_rma_fields[r->kind - HMB_RMA_FIELDS_FIRST];
	if (m & HMB_RMA_F_WIN) {
		n += hmb_put_uv(b + n, r->win);
	}
	if (m & HMB_RMA_F_REMOTE) {
		/* A remote out of an int's ranks is stored as none. */
		n += hmb_put_uv(b + n, r->remote >= 0 && r->remote < INT64_C(2147483647) ? (uint64_t)r->remote + 1 : 0);
	}
	if (m & HMB_RMA_F_BYTES) {
		n += hmb_put_uv(b + n, r->bytes);
	}
	if (m & HMB_RMA_F_RECEIVED) {
		n += hmb_put_uv(b + n, r->received);
	}
	if (m & HMB_RMA_F_REQUEST) {
		n += hmb_put_uv(b + n, r->request);
	}
	if (m & HMB_RMA_F_AUX) {
		n += hmb_put_uv(b + n, r->aux);
	}
	if (m & HMB_RMA_F_LEVEL) {
		n += hmb_put_uv(b + n, r->level);
	}
	if (m & HMB_RMA_F_GROUP) {
		n += hmb_put_uv(b + n, r->group);
	}
	return n;
}
