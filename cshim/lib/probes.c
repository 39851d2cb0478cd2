/*
 * probes.c - the probes of the C ABI and the -finstrument-functions hooks.
 * Each is the fast path of shim.h: a clock read and a 16-byte append to the
 * thread's staging array. None of the library's own functions is
 * instrumented (HMB_NOINST), so the hooks never see them.
 */
#include <stdint.h>

#include "hmbtrace.h"
#include "shim.h"

HMB_NOINST void hmb_enter(uint32_t region)
{
	hmb_stage((uint64_t)HMB_KIND_ENTER << HMB_KIND_SHIFT | region);
}

HMB_NOINST void hmb_leave(uint32_t region)
{
	hmb_stage((uint64_t)HMB_KIND_LEAVE << HMB_KIND_SHIFT | region);
}

HMB_NOINST void hmb_send(int peer, uint32_t tag, uint64_t bytes)
{
	hmb_stage2((uint64_t)HMB_KIND_SEND << HMB_KIND_SHIFT | tag, (uint64_t)(int64_t)peer, bytes);
}

HMB_NOINST void hmb_recv(int peer, uint32_t tag, uint64_t bytes)
{
	hmb_stage2((uint64_t)HMB_KIND_RECV << HMB_KIND_SHIFT | tag, (uint64_t)(int64_t)peer, bytes);
}

HMB_NOINST void hmb_enter_collective(uint32_t region, int root, uint64_t bytes)
{
	hmb_stage2((uint64_t)HMB_KIND_COLL << HMB_KIND_SHIFT | region, (uint64_t)(int64_t)root, bytes);
}

/*
 * The hooks GCC and Clang call at the entry and exit of every function
 * compiled with -finstrument-functions. The function's address is staged;
 * the Go side names it by its ELF symbol when it replays the record.
 */
void __cyg_profile_func_enter(void *fn, void *call_site) HMB_NOINST;
void __cyg_profile_func_exit(void *fn, void *call_site) HMB_NOINST;

void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	hmb_stage((uint64_t)HMB_KIND_FUNC_ENTER << HMB_KIND_SHIFT | ((uintptr_t)fn & HMB_PAYLOAD_MASK));
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	hmb_stage((uint64_t)HMB_KIND_FUNC_EXIT << HMB_KIND_SHIFT | ((uintptr_t)fn & HMB_PAYLOAD_MASK));
}
