/*
 * hooks.c - libhmbtrace-hooks.a: the -finstrument-functions hooks, linked
 * into the program itself.
 *
 * GCC and Clang call __cyg_profile_func_enter and __cyg_profile_func_exit
 * at every instrumented function's entry and exit, calls no compiler
 * inlines. Into libhmbtrace.so each goes through the PLT, which costs a
 * throttled function more than the whole of its hook's work. Defined in the
 * executable, the hooks are reached by a direct call; being the
 * executable's, they also interpose the library's for instrumented code in
 * other shared objects. Here they do the throttled functions' fast path
 * alone: look at the thread's cache (hmbtrace.h, hmbtrace_throttle_v1),
 * count the visit of a function the library found throttled, and return.
 * Anything else goes to the library's hooks under their own names
 * (hmbtrace_func_enter_v1, hmbtrace_func_exit_v1), which measure it or
 * learn that it is throttled. A library of another cache layout does not
 * define those names, and the program fails to start naming them.
 *
 * pkg-config --libs hmbtrace and hmbtrace-instrument link it ahead of
 * -lhmbtrace; a program linked with -lhmbtrace alone, or given the library
 * by LD_PRELOAD, has the library's hooks, which do the same work a call
 * further away.
 */
#include <stdint.h>

#include "hmbtrace.h"

#define HMB_NOINST __attribute__((no_instrument_function))

void hmbtrace_func_enter_v1(void *fn) HMB_NOINST;
void hmbtrace_func_exit_v1(void *fn) HMB_NOINST;
void __cyg_profile_func_enter(void *fn, void *call_site) HMB_NOINST;
void __cyg_profile_func_exit(void *fn, void *call_site) HMB_NOINST;

/*
 * hmb_throttled_func returns the cache entry of the throttled function fn
 * on the calling thread, or NULL. Slot (addr >> 4) % entries, as the
 * library's hooks index it, is the offset addr & ((entries-1) << 4) in the
 * 16-byte entries: one instruction.
 */
HMB_NOINST static inline __attribute__((always_inline)) uint64_t *hmb_throttled_func(void *fn)
{
	struct hmbtrace_throttle_v1 *c = hmbtrace_throttle_v1;
	uint64_t addr = (uintptr_t)fn;
	if (__builtin_expect(c == NULL, 0)) {
		return NULL;
	}
	uint64_t *e = (uint64_t *)((char *)c->func + (addr & ((uint64_t)(HMB_THROTTLE_ENTRIES - 1) << 4)));
	/* An atomic load, as in hmbtrace.h: a loop of calls sees the library empty the entry. */
	return __atomic_load_n(&e[0], __ATOMIC_RELAXED) == addr ? e : NULL;
}

void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	uint64_t *e = hmb_throttled_func(fn);
	if (__builtin_expect(e != NULL, 1)) {
		hmbtrace_count_visit(&e[1]);
		return;
	}
	hmbtrace_func_enter_v1(fn);
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	if (__builtin_expect(hmb_throttled_func(fn) != NULL, 1)) {
		return;
	}
	hmbtrace_func_exit_v1(fn);
}
