/*
 * task.c - the records of tasks (hmbtrace.h's hmb_task_*; OpenMP explicit
 * tasks): each a point record of the OpenMP paradigm's class at the calling
 * depth, as measure's taskRecord writes it.
 *
 * A task's creation, a switch back to the implicit task (0) and a tied
 * task's switches and completion take the direct path, as an enter does
 * (direct.h): written in place into the thread's location in the common
 * case; anything else (a full bin, a level not made yet or closed, a new
 * epoch, the staging settings) is handed to Go with the thread's staged
 * records, where every case is handled. Those records need nothing of Go's
 * bookkeeping. A task that may be suspended does: the depth at which it
 * started on a thread, which its suspension leaves back to, is kept by the
 * Go location, so hmb_task_switch and hmb_task_complete of such a task, and
 * hmb_task_suspend, go to Go at once (staged under the staging settings,
 * and a suspension replayed at once with what came before it, so that a
 * task suspended on one thread has its regions saved before another
 * resumes it).
 */
#include <stdatomic.h>
#include <stdint.h>

#include "direct.h"
#include "hmbtrace.h"
#include "shim.h"
#include "task.h"

/* The calling thread's task records written on the direct path (hmb_task_direct_records). */
static __thread uint64_t hmb_task_direct_n __attribute__((tls_model("initial-exec")));

/* hmb_task_uvarint is encode's putUvarint: LEB128. */
HMB_NOINST static int hmb_task_uvarint(uint8_t *b, uint64_t v)
{
	int i = 0;
	while (v >= 0x80) {
		b[i++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[i] = (uint8_t)v;
	return i + 1;
}

/*
 * hmb_put_task is encode.Encoder.Task with every technique on: putHead
 * (a SEQ prefix where the decoder would infer another sequence number, the
 * token, the time's delta), the kind and the task id.
 */
HMB_NOINST static int hmb_put_task(struct hmb_go_level *lv, uint8_t *b, uint64_t t, uint32_t seq, unsigned kind,
				   uint64_t task)
{
	if (t < lv->time) {
		t = lv->time;
	}
	uint64_t d = t - lv->time;
	int n = 0;
	if (seq != (d == 0 ? lv->next : 0)) {
		if (seq != 0 && seq < 32) {
			b[n++] = (uint8_t)(HMB_TOK_SEQ_INLINE | seq);
		} else {
			b[n++] = HMB_TOK_SEQ_INLINE;
			n += hmb_task_uvarint(b + n, seq);
		}
	}
	lv->time = t;
	lv->next = seq + 1;
	b[n++] = HMB_TOK_TASK;
	n += hmb_task_uvarint(b + n, d);
	b[n++] = (uint8_t)kind; /* a task kind is below 0x80: one LEB128 byte */
	return n + hmb_task_uvarint(b + n, task);
}

/*
 * hmb_direct_task writes task record kind at the location's current depth
 * in its paradigm levels: measure's taskRecord without a duration filter.
 * A record Go would drop (a closed level or class) is Go's to count, as a
 * paradigm enter's is. *t receives the time when it was read.
 */
HMB_NOINST static int hmb_direct_task(struct hmb_thread *th, unsigned kind, uint64_t task, uint64_t *t)
{
	struct hmb_go_location *L;
	int go = hmb_direct_record(th, &L, t);
	if (go != HMB_DIRECT_GO) {
		return go;
	}
	uint64_t now = *t;
	int64_t d = L->depth;
	struct hmb_go_level *lv;
	if (hmb_closed(L, d, HMB_CLASS_PARADIGM) || d >= L->par_levels.len || (lv = ((struct hmb_go_level **)L->par_levels.ptr)[d]) == NULL ||
	    lv->bin.len - lv->pos < HMB_PUT_ROOM) {
		return hmb_direct_end(th, HMB_DIRECT_FLUSH);
	}
	uint64_t tt, tr;
	uint32_t seq = hmb_stamp(L, now, &tt, &tr);
	L->recorded++;
	lv->pos += hmb_put_task(lv, (uint8_t *)lv->bin.ptr + lv->pos, tr, seq, kind, task);
	lv->n++;
	hmb_mark(lv);
	hmb_task_direct_n++;
	return hmb_direct_end(th, HMB_DIRECT_DONE);
}

/*
 * hmb_task_record records task record kind of task; tied: one that needs
 * none of Go's bookkeeping (see the top of the file). Its staged form is an
 * MPI record with the task in the request's place ([2].word) and
 * HMB_TASK_TIED in [1].time.
 */
HMB_NOINST static void hmb_task_record(unsigned kind, uint64_t task, int tied)
{
	hmb_record rec[HMB_MPI_RECORDS] = {
		{0, (uint64_t)HMB_KIND_MPI << HMB_KIND_SHIFT | kind},
		{tied ? HMB_TASK_TIED : 0, 0},
		{0, task},
		{0, 0},
	};
	if (!tied) {
		hmb_slow_n(rec, HMB_MPI_RECORDS);
		if (kind == HMB_ENC_TASK_SUSPEND) {
			hmb_flush_staged();
		}
		return;
	}
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1)) {
		uint64_t t = 0;
		int rc = hmb_direct_task(th, kind, task, &t);
		if (rc != HMB_DIRECT_DONE) {
			hmb_declined_recs(rc, t, rec, HMB_MPI_RECORDS);
		}
		return;
	}
	hmb_stage_recs(rec, HMB_MPI_RECORDS);
}

/* Task ids: one counter for the process, so that ids tie records across threads. */
static _Atomic uint64_t hmb_tasks;

HMB_NOINST uint64_t hmb_task_create(void)
{
	uint64_t id = atomic_fetch_add_explicit(&hmb_tasks, 1, memory_order_relaxed) + 1;
	hmb_task_record(HMB_ENC_TASK_CREATE, id, 1);
	return id;
}

/* A switch to the implicit task (0) resumes nothing: Go only records it too. */
HMB_NOINST void hmb_task_switch(uint64_t task)
{
	hmb_task_record(HMB_ENC_TASK_SWITCH, task, task == 0);
}

HMB_NOINST void hmb_task_complete(uint64_t task)
{
	hmb_task_record(HMB_ENC_TASK_COMPLETE, task, 0);
}

HMB_NOINST void hmb_task_suspend(uint64_t task)
{
	hmb_task_record(HMB_ENC_TASK_SUSPEND, task, 0);
}

HMB_NOINST void hmb_task_switch_tied(uint64_t task)
{
	hmb_task_record(HMB_ENC_TASK_SWITCH, task, 1);
}

HMB_NOINST void hmb_task_complete_tied(uint64_t task)
{
	hmb_task_record(HMB_ENC_TASK_COMPLETE, task, 1);
}

HMB_NOINST uint64_t hmb_task_direct_records(void)
{
	return hmb_task_direct_n;
}
