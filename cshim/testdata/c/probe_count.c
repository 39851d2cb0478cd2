/*
 * probe_count: a loop of hmb_enter/hmb_leave of two nested regions, in a
 * function of its own (counted) that callgrind counts the instructions of
 * (TestProbeInstructions): what the C probe executes per event on the
 * direct path, the throttled cache's inline test included. The untimed
 * first iterations make the levels; the counted ones fill no bin when the
 * bins are large (HMB_BIN_SIZE), so no call into Go is counted.
 *
 *   probe_count N        N counted iterations (4 events each)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmbtrace.h>

static uint32_t outer, inner;

__attribute__((noinline)) static void counted(long n)
{
	for (long i = 0; i < n; i++) {
		hmb_enter(outer);
		hmb_enter(inner);
		hmb_leave(inner);
		hmb_leave(outer);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	outer = hmb_region("outer");
	inner = hmb_region("inner");
	for (int i = 0; i < 100; i++) {
		hmb_enter(outer);
		hmb_enter(inner);
		hmb_leave(inner);
		hmb_leave(outer);
	}
	counted(n);
	printf("iterations %ld\n", n);
	return hmb_finalize() != 0;
}
