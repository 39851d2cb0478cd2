/*
 * empty_call.c - an empty function in a shared object of its own, for
 * probe_bench's throttled mode: what a call into a shared library costs
 * (an indirect call or jump, a call the compiler cannot see into), the
 * floor of a probe of libhmbtrace.so that does nothing.
 */
#include <stdint.h>

void bench_empty_call(uint32_t r);

void bench_empty_call(uint32_t r)
{
	__asm__ __volatile__("" : : "r"(r) : "memory");
}
