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

#include "hmbtrace.h"
#include "shim.h"
#include "direct.h"

/* hmb_declined finishes a probe the direct path did not take: staged, replayed at once, or dropped. */
HMB_NOINST static inline void hmb_declined(int rc, uint64_t t, uint64_t word, uint64_t ext_time, uint64_t ext_word, int n)
{
	switch (rc) {
	case HMB_DIRECT_FLUSH:
		hmb_slow_at(t, word, ext_time, ext_word, n);
		break;
	case HMB_DIRECT_DROP:
		hmb_count_dropped(1);
		break;
	default:
		hmb_stage_n(n, word, ext_time, ext_word);
	}
}

/* hmb_region_event records an enter (leave 0) or leave of region, word being its staged form. */
HMB_NOINST static inline void hmb_region_event(uint32_t region, uint64_t word, int leave)
{
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1)) {
		uint64_t t = 0;
		int rc = leave ? hmb_direct_leave(th, region, &t) : hmb_direct_enter(th, region, &t);
		if (__builtin_expect(rc != HMB_DIRECT_DONE, 0)) {
			hmb_declined(rc, t, word, 0, 0, 1);
		}
		return;
	}
	hmb_stage(word);
}

/* hmb_message_event records a send or receive, word being its staged form. */
HMB_NOINST static inline void hmb_message_event(uint64_t word, int recv, int peer, uint32_t tag, uint64_t bytes)
{
	struct hmb_thread *th = hmb_self;
	if (th != NULL && th->loc != NULL) {
		uint64_t t = 0;
		int rc = hmb_direct_message(th, recv, (uint64_t)(int64_t)peer, tag, bytes, &t);
		if (rc != HMB_DIRECT_DONE) {
			hmb_declined(rc, t, word, (uint64_t)(int64_t)peer, bytes, 2);
		}
		return;
	}
	hmb_stage2(word, (uint64_t)(int64_t)peer, bytes);
}

HMB_NOINST void hmb_enter(uint32_t region)
{
	hmb_region_event(region, (uint64_t)HMB_KIND_ENTER << HMB_KIND_SHIFT | region, 0);
}

HMB_NOINST void hmb_leave(uint32_t region)
{
	hmb_region_event(region, (uint64_t)HMB_KIND_LEAVE << HMB_KIND_SHIFT | region, 1);
}

HMB_NOINST void hmb_send(int peer, uint32_t tag, uint64_t bytes)
{
	hmb_message_event((uint64_t)HMB_KIND_SEND << HMB_KIND_SHIFT | tag, 0, peer, tag, bytes);
}

HMB_NOINST void hmb_recv(int peer, uint32_t tag, uint64_t bytes)
{
	hmb_message_event((uint64_t)HMB_KIND_RECV << HMB_KIND_SHIFT | tag, 1, peer, tag, bytes);
}

/*
 * A collective takes the direct path too. When it cannot be taken now, a
 * thread whose events are direct stages it, and its next probe (the
 * leave, normally) has it replayed with itself, in one call into Go.
 */
HMB_NOINST void hmb_enter_collective(uint32_t region, int root, uint64_t bytes)
{
	struct hmb_thread *th = hmb_self;
	uint64_t word = (uint64_t)HMB_KIND_COLL << HMB_KIND_SHIFT | region;
	if (th != NULL && th->loc != NULL) {
		uint64_t t = 0;
		int rc = hmb_direct_collective(th, region, root, bytes, &t);
		if (rc == HMB_DIRECT_DONE) {
			return;
		}
		if (rc == HMB_DIRECT_STAGE) {
			hmb_stage_collective(word, (uint64_t)(int64_t)root, bytes);
		} else {
			hmb_declined(rc, t, word, (uint64_t)(int64_t)root, bytes, 2);
		}
		return;
	}
	hmb_stage2(word, (uint64_t)(int64_t)root, bytes);
}

/*
 * The hooks GCC and Clang call at the entry and exit of every function
 * compiled with -finstrument-functions. A function the thread's cache knows
 * takes the direct path with its region; else its address is staged, and
 * the Go side names it by its ELF symbol when it replays the record (and
 * tells the cache).
 */
void __cyg_profile_func_enter(void *fn, void *call_site) HMB_NOINST;
void __cyg_profile_func_exit(void *fn, void *call_site) HMB_NOINST;

HMB_NOINST static inline void hmb_func_event(void *fn, int exit)
{
	uint64_t addr = (uintptr_t)fn & HMB_PAYLOAD_MASK;
	uint64_t word = (uint64_t)(exit ? HMB_KIND_FUNC_EXIT : HMB_KIND_FUNC_ENTER) << HMB_KIND_SHIFT | addr;
	struct hmb_thread *th = hmb_self;
	if (__builtin_expect(th != NULL && th->loc != NULL, 1)) {
		size_t i = (addr >> 4) % HMB_FUNC_CACHE;
		if (__builtin_expect(th->funcs[i].addr == addr && th->funcs[i].region != 0, 1)) {
			hmb_region_event(th->funcs[i].region, word, exit);
			return;
		}
		if (th->in_direct) {
			hmb_stage(word); /* a signal handler inside a probe: Go must wait */
		} else {
			hmb_slow_at(0, word, 0, 0, 1); /* replayed at once, and the cache told */
		}
		return;
	}
	hmb_stage(word);
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
